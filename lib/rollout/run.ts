/** The orchestrator: the plan's waves run against a RolloutTarget, one record per step. */
import { ROLLOUT_ANNOTATION } from '../api/index.ts';
import type { RolloutTarget } from '../cluster/index.ts';
import { PodMutationError } from '../errors/index.ts';
import { blockingBudgets } from './budgets.ts';
import type { PlannedWorkload, RolloutPlan } from './plan.ts';
import { readPodReadiness, readProgress, readWorkloadShape } from './status.ts';
import type { RolloutState, WorkloadRecord } from './types.ts';

/** The annotation `kubectl rollout restart` sets on the pod template (kubectl pkg/polymorphichelpers/objectrestarter.go). */
const RESTARTED_AT_ANNOTATION = 'kubectl.kubernetes.io/restartedAt';

/** How a run proceeds; the clock and sleep are injectable for tests. */
interface RolloutRunOptions {
  /** The run's id, stamped on each restarted workload. */
  readonly id: string;
  /** How long one workload may take, from its disruption-budget wait to its completion. */
  readonly timeoutMs: number;
  /** Pause between waves. */
  readonly pauseMs: number;
  /** Start the next wave even after a failure. */
  readonly continueOnFailure: boolean;
  /** Interval between status reads; default 1000 ms. */
  readonly pollMs?: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What a run did: workloads done, failed, skipped (a disruption budget) and not started (after a failure). */
interface RolloutOutcome {
  readonly done: number;
  readonly failed: number;
  readonly skipped: number;
  readonly notStarted: number;
}

/** RFC 3339 in whole seconds, as kubectl writes restartedAt. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function describeDuration(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;
}

/** The records of a plan before it runs: the workloads left alone (wave 0) and each planned one with its wave. */
function planRecords(plan: RolloutPlan, id: string, at: string): WorkloadRecord[] {
  const record = (
    wave: number,
    workload: { namespace: string; kind: string; name: string; change: string },
    state: RolloutState,
  ): WorkloadRecord => ({
    type: 'workload',
    rollout: id,
    at,
    wave,
    namespace: workload.namespace,
    kind: workload.kind,
    name: workload.name,
    state,
    reason: workload.change,
  });
  return [
    ...plan.leftAlone.map(({ workload, state }) => record(0, workload, state)),
    ...plan.waves.flatMap((wave, index) => wave.map((workload) => record(index + 1, workload, 'planned'))),
  ];
}

/**
 * Runs the plan's waves: each wave's workloads at once, each waiting for the disruption budgets that select its Pods
 * to allow a disruption, then restarted (the template annotation kubectl sets, and ROLLOUT_ANNOTATION on the workload)
 * or its pending Pods deleted one at a time, each once the previous one is Ready again; done when its controller
 * reports the rollout complete. After a wave with a failure no wave starts, unless continueOnFailure.
 */
async function runRollout(
  plan: RolloutPlan,
  target: RolloutTarget,
  options: RolloutRunOptions,
  emit: (record: WorkloadRecord) => void,
): Promise<RolloutOutcome> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const pollMs = options.pollMs ?? 1000;
  const counts = { done: 0, failed: 0, skipped: 0, notStarted: 0 };
  const record = (wave: number, workload: PlannedWorkload, state: RolloutState, reason = ''): void => {
    emit({
      type: 'workload',
      rollout: options.id,
      at: rfc3339(now()),
      wave,
      namespace: workload.namespace,
      kind: workload.kind,
      name: workload.name,
      state,
      reason,
    });
  };

  const untilDeadline = async <T>(deadline: number, read: () => Promise<T | undefined>): Promise<T | undefined> => {
    for (;;) {
      const value = await read();
      if (value !== undefined || now() >= deadline) return value;
      await sleep(Math.min(pollMs, Math.max(0, deadline - now())));
    }
  };

  const rollOne = async (workload: PlannedWorkload, wave: number): Promise<'done' | 'failed' | 'skipped'> => {
    const { kind, namespace, name } = workload;
    const path = `${kind} ${namespace}/${name}`;
    const deadline = now() + options.timeoutMs;
    const waited = describeDuration(options.timeoutMs);
    const shape = readWorkloadShape(kind, await target.getWorkload(kind, namespace, name), path);
    let blocking: string[] = [];
    const clear = await untilDeadline(deadline, async () => {
      blocking = blockingBudgets(
        await target.listPodDisruptionBudgets(namespace),
        shape.templateLabels,
        `poddisruptionbudgets in ${namespace}`,
      );
      return blocking.length === 0 ? true : undefined;
    });
    if (clear === undefined) {
      const names = blocking.map((budget) => `${namespace}/${budget}`).join(', ');
      record(wave, workload, 'skipped', `PodDisruptionBudget ${names} allowed 0 disruptions for ${waited}`);
      return 'skipped';
    }
    const at = rfc3339(now());
    const stamp = { metadata: { annotations: { [ROLLOUT_ANNOTATION]: JSON.stringify({ id: options.id, at }) } } };
    record(
      wave,
      workload,
      'started',
      workload.method === 'delete-pods' ? `deleting ${workload.pods.join(', ')} one at a time` : '',
    );
    if (workload.method === 'restart') {
      await target.patchWorkload(kind, namespace, name, {
        ...stamp,
        spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: at } } } },
      });
      let detail = '';
      const finished = await untilDeadline(deadline, async () => {
        const progress = readProgress(kind, await target.getWorkload(kind, namespace, name), path);
        if (progress.state === 'progressing') {
          detail = progress.detail;
          return undefined;
        }
        return progress;
      });
      if (finished === undefined) {
        record(wave, workload, 'failed', `not complete after ${waited}: ${detail}`);
        return 'failed';
      }
      if (finished.state === 'failed') {
        record(wave, workload, 'failed', finished.reason);
        return 'failed';
      }
    } else {
      await target.patchWorkload(kind, namespace, name, stamp);
      for (const pod of workload.pods) {
        const before = await target.getPod(namespace, pod);
        const uid = before === undefined ? '' : readPodReadiness(before, `Pod ${namespace}/${pod}`).uid;
        if (uid !== '') await target.deletePod(namespace, pod, uid);
        const ready = await untilDeadline(deadline, async () => {
          const after = await target.getPod(namespace, pod);
          if (after === undefined) return undefined;
          const readiness = readPodReadiness(after, `Pod ${namespace}/${pod}`);
          return readiness.uid !== uid && readiness.ready ? true : undefined;
        });
        if (ready === undefined) {
          record(wave, workload, 'failed', `Pod ${pod} not Ready again after ${waited}`);
          return 'failed';
        }
      }
    }
    record(wave, workload, 'done');
    return 'done';
  };

  const guarded = async (workload: PlannedWorkload, wave: number): Promise<'done' | 'failed' | 'skipped'> => {
    try {
      return await rollOne(workload, wave);
    } catch (error) {
      // A cluster or answer failure fails this workload; anything else is a bug and ends the run.
      if (!(error instanceof PodMutationError)) throw error;
      record(wave, workload, 'failed', error.message);
      return 'failed';
    }
  };

  let stopped = false;
  for (const [index, wave] of plan.waves.entries()) {
    if (stopped) {
      for (const workload of wave)
        record(index + 1, workload, 'not-started', 'an earlier wave failed (--continue-on-failure starts it anyway)');
      counts.notStarted += wave.length;
      continue;
    }
    if (index > 0 && options.pauseMs > 0) await sleep(options.pauseMs);
    const results = await Promise.all(wave.map((workload) => guarded(workload, index + 1)));
    for (const result of results) counts[result] += 1;
    if (results.includes('failed') && !options.continueOnFailure) stopped = true;
  }
  return counts;
}

export { planRecords, runRollout, rfc3339, RESTARTED_AT_ANNOTATION };
export type { RolloutOutcome, RolloutRunOptions };
