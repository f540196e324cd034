/** The orchestrator: the plan's waves run against a RolloutTarget, one record per step. */
import { setTimeout as sleep } from 'node:timers/promises';
import { ROLLOUT_ANNOTATION } from '../api/index.ts';
import type { RolloutTarget } from '../cluster/index.ts';
import { MalformedInputError, PodMutationError } from '../errors/index.ts';
import { restartPatch } from '../report/index.ts';
import { createWaveBudgets, type WaveBudgets } from './budgets.ts';
import { evictInTurn } from './evict.ts';
import type { PlannedWorkload, RolloutPlan } from './plan.ts';
import { readProgress, readWorkloadShape } from './status.ts';
import type { RolloutState, WorkloadRecord } from './types.ts';
import {
  describeDuration,
  describeShortfall,
  untilBudgetsAllow,
  untilDeadline,
  type Result,
  type RolloutRunOptions,
  type Run,
  type Turn,
} from './wait.ts';

/** What a run did: workloads done, failed, skipped (a disruption budget, a hold) and not started (after a failure). */
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

/** The records of a plan before it runs: the workloads left alone (wave 0) and each planned one with its wave. */
function planRecords(plan: RolloutPlan, id: string, at: string): WorkloadRecord[] {
  const record = (
    wave: number,
    workload: { namespace: string; kind: string; name: string },
    state: RolloutState,
    reason: string,
  ): WorkloadRecord => ({
    type: 'workload',
    rollout: id,
    at,
    wave,
    namespace: workload.namespace,
    kind: workload.kind,
    name: workload.name,
    state,
    reason,
  });
  return [
    ...plan.leftAlone.map(({ workload, state, reason }) => record(0, workload, state, reason)),
    ...plan.waves.flatMap((wave, index) =>
      wave.map((workload) => record(index + 1, workload, 'planned', workload.change)),
    ),
  ];
}

/** The run's stamp on a workload it starts (ROLLOUT_ANNOTATION: the run's id and when), as a merge patch. */
function stampPatch(run: Run, at: string): Record<string, unknown> {
  return { metadata: { annotations: { [ROLLOUT_ANNOTATION]: JSON.stringify({ id: run.options.id, at }) } } };
}

/** The controller asked to restart by its mechanism (and the run's stamp), then polled until it reports the rollout complete. */
async function restartAndWait(run: Run, { workload, wave, deadline }: Turn): Promise<Result> {
  const { kind, namespace, name } = workload;
  const path = `${kind} ${namespace}/${name}`;
  const at = rfc3339(run.now());
  await run.target.patchWorkload(kind, namespace, name, {
    ...stampPatch(run, at),
    ...restartPatch(workload.mechanism ?? 'template-annotation', at),
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

/**
 * The labels of the Pods a workload's controller creates: its template's, or for a Rollout with spec.workloadRef the
 * referenced Deployment's (a workloadRef Rollout carries no template; argoproj/argo-rollouts rollout/templateref.go).
 */
async function podLabels(run: Run, workload: PlannedWorkload): Promise<Readonly<Record<string, string>>> {
  const { kind, namespace, name } = workload;
  const shape = readWorkloadShape(
    kind,
    await run.target.getWorkload(kind, namespace, name),
    `${kind} ${namespace}/${name}`,
  );
  const reference = shape.workloadRef;
  if (reference === undefined) return shape.templateLabels;
  if (reference.kind !== 'Deployment')
    throw new MalformedInputError(
      `Rollout ${namespace}/${name}: spec.workloadRef names a ${reference.kind || 'workload of no kind'}; only a Deployment's template labels are read, so the PodDisruptionBudgets that cover its Pods cannot be told`,
    );
  const deployment = `Deployment ${namespace}/${reference.name}`;
  return readWorkloadShape(
    'Deployment',
    await run.target.getWorkload('Deployment', namespace, reference.name),
    deployment,
  ).templateLabels;
}

/**
 * One workload: started once every budget that covers its Pods allows one more disruption beside those its wave's
 * other workloads under way have taken (or skipped at the deadline), then restarted or its Pods evicted, then recorded
 * done; what it took of the budgets is given back when it ends.
 */
async function rollOne(run: Run, budgets: WaveBudgets, workload: PlannedWorkload, wave: number): Promise<Result> {
  const deadline = run.now() + run.options.timeoutMs;
  const labels = await podLabels(run, workload);
  let own: ReadonlySet<string> = new Set();
  const short = await untilBudgetsAllow(run, { namespace: workload.namespace, labels }, deadline, (allowances) => {
    const found = budgets.short(allowances);
    if (found.length === 0) own = budgets.take(allowances);
    return found;
  });
  if (short.length > 0) {
    run.record(wave, workload, 'skipped', describeShortfall(workload.namespace, short, run.options.timeoutMs));
    return 'skipped';
  }
  try {
    const evicting = workload.method === 'evict-pods';
    run.record(
      wave,
      workload,
      'started',
      evicting ? `evicting ${workload.pods.map(({ name }) => name).join(', ')} one at a time` : '',
    );
    let result: Result;
    if (evicting) {
      // Evictions change no template: the workload is stamped on its own before its Pods are evicted.
      const { kind, namespace, name } = workload;
      await run.target.patchWorkload(kind, namespace, name, stampPatch(run, rfc3339(run.now())));
      result = await evictInTurn(run, { workload, wave, deadline }, { budgets, own });
    } else result = await restartAndWait(run, { workload, wave, deadline });
    if (result === 'done') run.record(wave, workload, 'done');
    return result;
  } finally {
    budgets.release(own);
  }
}

/** rollOne, with a cluster or answer failure recorded as this workload's failure. */
async function guarded(run: Run, budgets: WaveBudgets, workload: PlannedWorkload, wave: number): Promise<Result> {
  try {
    return await rollOne(run, budgets, workload, wave);
  } catch (error) {
    // A cluster or answer failure fails this workload; anything else is a bug and ends the run.
    if (!(error instanceof PodMutationError)) throw error;
    run.record(wave, workload, 'failed', error.message);
    return 'failed';
  }
}

/**
 * Runs the plan's waves: each wave's workloads at once, each starting once the disruption budgets that cover its Pods
 * allow it beside the wave's others, then restarted by its mechanism (the pod template annotation kubectl sets, or a
 * Rollout's spec.restartAt; ROLLOUT_ANNOTATION on the workload) or its pending Pods evicted one at a time; done when
 * its controller reports the rollout complete. After a wave with a failure no wave starts, unless continueOnFailure.
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
    const budgets = createWaveBudgets();
    const results = await Promise.all(wave.map((workload) => guarded(run, budgets, workload, index + 1)));
    for (const result of results) counts[result] += 1;
    if (results.includes('failed') && !options.continueOnFailure) stopped = true;
  }
  return counts;
}

export { planRecords, runRollout, rfc3339 };
