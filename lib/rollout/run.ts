/** The orchestrator: the plan's waves run against a RolloutTarget, one record per step. */
import { setTimeout as sleep } from 'node:timers/promises';
import { ROLLOUT_ANNOTATION } from '../api/index.ts';
import type { RolloutTarget } from '../cluster/index.ts';
import { PodMutationError } from '../errors/index.ts';
import type { JsonObject } from '../values/index.ts';
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

type Result = 'done' | 'failed' | 'skipped';

/** One run's options with their defaults, and how it records a step. */
interface Run {
  readonly target: RolloutTarget;
  readonly options: RolloutRunOptions;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly pollMs: number;
  readonly record: (wave: number, workload: PlannedWorkload, state: RolloutState, reason?: string) => void;
}

/** The first value `read` gives, polled until the deadline; undefined when the deadline passed without one. */
async function untilDeadline<T>(
  run: Run,
  deadline: number,
  read: () => Promise<T | undefined>,
): Promise<T | undefined> {
  for (;;) {
    const value = await read();
    if (value !== undefined || run.now() >= deadline) return value;
    await run.sleep(Math.min(run.pollMs, Math.max(0, deadline - run.now())));
  }
}

/** The disruption budgets still blocking the workload at the deadline; empty once none does. */
async function waitForBudgets(
  run: Run,
  workload: PlannedWorkload,
  templateLabels: Parameters<typeof blockingBudgets>[1],
  deadline: number,
): Promise<string[]> {
  const { namespace } = workload;
  let blocking: string[] = [];
  await untilDeadline(run, deadline, async () => {
    blocking = blockingBudgets(
      await run.target.listPodDisruptionBudgets(namespace),
      templateLabels,
      `poddisruptionbudgets in ${namespace}`,
    );
    return blocking.length === 0 ? true : undefined;
  });
  return blocking;
}

/** The template restarted as kubectl does, then polled until its controller reports the rollout complete. */
async function restartAndWait(
  run: Run,
  workload: PlannedWorkload,
  wave: number,
  stamp: JsonObject,
  at: string,
  deadline: number,
): Promise<Result> {
  const { kind, namespace, name } = workload;
  const path = `${kind} ${namespace}/${name}`;
  await run.target.patchWorkload(kind, namespace, name, {
    ...stamp,
    spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: at } } } },
  });
  let detail = '';
  const finished = await untilDeadline(run, deadline, async () => {
    const progress = readProgress(kind, await run.target.getWorkload(kind, namespace, name), path);
    if (progress.state === 'progressing') {
      detail = progress.detail;
      return undefined;
    }
    return progress;
  });
  if (finished === undefined) {
    run.record(wave, workload, 'failed', `not complete after ${describeDuration(run.options.timeoutMs)}: ${detail}`);
    return 'failed';
  }
  if (finished.state === 'failed') {
    run.record(wave, workload, 'failed', finished.reason);
    return 'failed';
  }
  return 'done';
}

/** The pending Pods deleted one at a time (preconditioned on their uid), each once the previous is Ready again. */
async function deletePodsInTurn(
  run: Run,
  workload: PlannedWorkload,
  wave: number,
  stamp: JsonObject,
  deadline: number,
): Promise<Result> {
  const { kind, namespace, name } = workload;
  await run.target.patchWorkload(kind, namespace, name, stamp);
  for (const pod of workload.pods) {
    const before = await run.target.getPod(namespace, pod);
    const uid = before === undefined ? '' : readPodReadiness(before, `Pod ${namespace}/${pod}`).uid;
    if (uid !== '') await run.target.deletePod(namespace, pod, uid);
    const ready = await untilDeadline(run, deadline, async () => {
      const after = await run.target.getPod(namespace, pod);
      if (after === undefined) return undefined;
      const readiness = readPodReadiness(after, `Pod ${namespace}/${pod}`);
      return readiness.uid !== uid && readiness.ready ? true : undefined;
    });
    if (ready === undefined) {
      run.record(
        wave,
        workload,
        'failed',
        `Pod ${pod} not Ready again after ${describeDuration(run.options.timeoutMs)}`,
      );
      return 'failed';
    }
  }
  return 'done';
}

/** One workload: its disruption budgets waited on, then restarted or its Pods deleted, then recorded done. */
async function rollOne(run: Run, workload: PlannedWorkload, wave: number): Promise<Result> {
  const { kind, namespace, name } = workload;
  const deadline = run.now() + run.options.timeoutMs;
  const shape = readWorkloadShape(
    kind,
    await run.target.getWorkload(kind, namespace, name),
    `${kind} ${namespace}/${name}`,
  );
  const blocking = await waitForBudgets(run, workload, shape.templateLabels, deadline);
  if (blocking.length > 0) {
    const names = blocking.map((budget) => `${namespace}/${budget}`).join(', ');
    const waited = describeDuration(run.options.timeoutMs);
    run.record(wave, workload, 'skipped', `PodDisruptionBudget ${names} allowed 0 disruptions for ${waited}`);
    return 'skipped';
  }
  const at = rfc3339(run.now());
  const stamp = { metadata: { annotations: { [ROLLOUT_ANNOTATION]: JSON.stringify({ id: run.options.id, at }) } } };
  const deleting = workload.method === 'delete-pods' ? `deleting ${workload.pods.join(', ')} one at a time` : '';
  run.record(wave, workload, 'started', deleting);
  const result =
    workload.method === 'restart'
      ? await restartAndWait(run, workload, wave, stamp, at, deadline)
      : await deletePodsInTurn(run, workload, wave, stamp, deadline);
  if (result === 'done') run.record(wave, workload, 'done');
  return result;
}

/** rollOne, with a cluster or answer failure recorded as this workload's failure. */
async function guarded(run: Run, workload: PlannedWorkload, wave: number): Promise<Result> {
  try {
    return await rollOne(run, workload, wave);
  } catch (error) {
    // A cluster or answer failure fails this workload; anything else is a bug and ends the run.
    if (!(error instanceof PodMutationError)) throw error;
    run.record(wave, workload, 'failed', error.message);
    return 'failed';
  }
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
  const run: Run = {
    target,
    options,
    now,
    sleep: options.sleep ?? ((ms: number) => sleep(ms)),
    pollMs: options.pollMs ?? 1000,
    record: (wave, workload, state, reason = '') =>
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
      }),
  };
  const counts = { done: 0, failed: 0, skipped: 0, notStarted: 0 };
  let stopped = false;
  for (const [index, wave] of plan.waves.entries()) {
    if (stopped) {
      for (const workload of wave)
        run.record(
          index + 1,
          workload,
          'not-started',
          'an earlier wave failed (--continue-on-failure starts it anyway)',
        );
      counts.notStarted += wave.length;
      continue;
    }
    if (index > 0 && options.pauseMs > 0) await run.sleep(options.pauseMs);
    const results = await Promise.all(wave.map((workload) => guarded(run, workload, index + 1)));
    for (const result of results) counts[result] += 1;
    if (results.includes('failed') && !options.continueOnFailure) stopped = true;
  }
  return counts;
}

export { planRecords, runRollout, rfc3339 };
