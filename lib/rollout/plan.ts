/** Pure: the waves of a rollout from the report's workloads. */
import { restartAction, type MigrationReport, type ReportWorkload } from '../report/index.ts';
import type { RolloutWorkloadKind } from '../cluster/index.ts';
import type { RolloutMethod } from './types.ts';

/** A workload the rollout restarts: through its template (`restart`), or by deleting its pending Pods in order. */
interface PlannedWorkload {
  readonly namespace: string;
  readonly kind: RolloutWorkloadKind;
  readonly name: string;
  /** The report's change: why it is pending. */
  readonly change: string;
  readonly method: RolloutMethod;
  /** For delete-pods: the pending Pods, in the order the report gives (highest ordinal first). */
  readonly pods: readonly string[];
}

/** A workload of the report the rollout leaves alone, and why. */
interface LeftAlone {
  readonly workload: ReportWorkload;
  readonly state: 'current' | 'by-hand' | 'denied';
}

/** The rollout: waves of at most maxConcurrent workloads in the report's order, and the workloads left alone. */
interface RolloutPlan {
  readonly waves: readonly (readonly PlannedWorkload[])[];
  readonly leftAlone: readonly LeftAlone[];
}

/**
 * The plan of a rollout: every workload with pending Pods and no denied one, grouped into waves of maxConcurrent;
 * current ones (the report's verdict, so a second run resumes), denied ones (a restart would stall on Pods admission
 * refuses) and those with no rollout (bare Pods, Jobs, CronJobs, other controllers) are left alone.
 */
function planRollout(report: MigrationReport, maxConcurrent: number): RolloutPlan {
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1)
    throw new RangeError(`maxConcurrent must be a positive integer, got ${maxConcurrent}`);
  const planned: PlannedWorkload[] = [];
  const leftAlone: LeftAlone[] = [];
  for (const workload of report.workloads) {
    if (workload.denied > 0) {
      leftAlone.push({ workload, state: 'denied' });
      continue;
    }
    if (workload.pending === 0) {
      leftAlone.push({ workload, state: 'current' });
      continue;
    }
    const action = restartAction(workload);
    const base = { namespace: workload.namespace, name: workload.name, change: workload.change };
    if (action.type === 'restart') planned.push({ ...base, kind: action.kind, method: 'restart', pods: [] });
    else if (action.type === 'delete')
      planned.push({ ...base, kind: 'StatefulSet', method: 'delete-pods', pods: action.pods });
    else leftAlone.push({ workload, state: 'by-hand' });
  }
  const waves: PlannedWorkload[][] = [];
  for (let start = 0; start < planned.length; start += maxConcurrent)
    waves.push(planned.slice(start, start + maxConcurrent));
  return { waves, leftAlone };
}

export { planRollout };
export type { PlannedWorkload, RolloutPlan };
