/** Pure: the waves of a rollout from the report's workloads. */
import {
  restartAction,
  type MigrationReport,
  type ReportPod,
  type ReportWorkload,
  type RestartMechanism,
} from '../report/index.ts';
import type { RolloutWorkloadKind } from '../cluster/index.ts';
import type { RolloutMethod } from './types.ts';

/** A workload the rollout restarts: its controller asked by its mechanism (`restart`), or its pending Pods evicted in order. */
interface PlannedWorkload {
  readonly namespace: string;
  readonly kind: RolloutWorkloadKind;
  readonly name: string;
  /** The report's change: why it is pending. */
  readonly change: string;
  readonly method: RolloutMethod;
  /** For restart: how its controller is asked (restartAction's mechanism). */
  readonly mechanism?: RestartMechanism;
  /** For evict-pods: the pending Pods with the uids the report read, in its order (highest ordinal first). */
  readonly pods: readonly ReportPod[];
}

/**
 * A workload of the report the rollout leaves alone, and why (a held one's reason, an unschedulable one's verdict;
 * else the report's change).
 */
interface LeftAlone {
  readonly workload: ReportWorkload;
  readonly state: 'current' | 'by-hand' | 'denied' | 'held' | 'unschedulable';
  readonly reason: string;
}

/** The rollout: waves of at most maxConcurrent workloads in the report's order, and the workloads left alone. */
interface RolloutPlan {
  readonly waves: readonly (readonly PlannedWorkload[])[];
  readonly leftAlone: readonly LeftAlone[];
}

/**
 * The plan of a rollout: every workload with pending Pods and no denied one, grouped into waves of maxConcurrent;
 * current ones (the report's verdict, so a second run resumes), denied ones (a restart would stall on Pods admission
 * refuses), unschedulable ones (their recreated Pods would fit nowhere, unless `allowUnschedulable`), held ones (a
 * StatefulSet whose deleted Pods would come back at another revision) and those with no rollout (bare Pods, Jobs,
 * CronJobs, other controllers) are left alone.
 */
function planRollout(
  report: MigrationReport,
  maxConcurrent: number,
  options: { readonly allowUnschedulable?: boolean } = {},
): RolloutPlan {
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1)
    throw new RangeError(`maxConcurrent must be a positive integer, got ${maxConcurrent}`);
  const planned: PlannedWorkload[] = [];
  const leftAlone: LeftAlone[] = [];
  for (const workload of report.workloads) {
    const reason = workload.change;
    if (workload.denied > 0) {
      leftAlone.push({ workload, state: 'denied', reason });
      continue;
    }
    if (workload.pending === 0) {
      leftAlone.push({ workload, state: 'current', reason });
      continue;
    }
    const action = restartAction(workload, options);
    const base = { namespace: workload.namespace, name: workload.name, change: workload.change };
    if (action.type === 'restart')
      planned.push({ ...base, kind: action.kind, method: 'restart', mechanism: action.mechanism, pods: [] });
    else if (action.type === 'delete')
      planned.push({ ...base, kind: 'StatefulSet', method: 'evict-pods', pods: action.pods });
    else if (action.type === 'held' || action.type === 'unschedulable')
      leftAlone.push({ workload, state: action.type, reason: action.reason });
    else leftAlone.push({ workload, state: 'by-hand', reason });
  }
  const waves: PlannedWorkload[][] = [];
  for (let start = 0; start < planned.length; start += maxConcurrent)
    waves.push(planned.slice(start, start + maxConcurrent));
  return { waves, leftAlone };
}

export { planRollout };
export type { PlannedWorkload, RolloutPlan };
