/**
 * A StatefulSet's pending Pods evicted one at a time, each once the previous one is Ready again: before each, the Pod
 * is the one the report read (its uid), the StatefulSet would bring it back at the revision it runs, and the budgets
 * that cover it are read again; the eviction itself is preconditioned on that uid.
 */
import { evictionOf, type ReportPod } from '../report/index.ts';
import { readPodIdentity, readWorkloadObject, recreationOf } from '../workloads/index.ts';
import type { WaveBudgets } from './budgets.ts';
import { readPodReadiness } from './status.ts';
import {
  describeDuration,
  describeShortfall,
  untilBudgetsAllow,
  untilDeadline,
  type Result,
  type Run,
  type Turn,
} from './wait.ts';

/** The wave's budgets, and the disruptions the workload took of them when it started. */
interface WaveShare {
  readonly budgets: WaveBudgets;
  readonly own: ReadonlySet<string>;
}

/** One Pod's eviction: done (evicted, or not the report's Pod and left alone), or why the workload stops. */
type PodStep = { readonly stop: false } | { readonly stop: true; readonly result: Result };

/** Waits until a Pod of this name other than `uid` is Ready: the StatefulSet has created it again. */
async function readyAgain(run: Run, namespace: string, pod: ReportPod, deadline: number): Promise<boolean> {
  const ready = await untilDeadline(run, deadline, async () => {
    const after = await run.target.getPod(namespace, pod.name);
    if (after === undefined) return undefined;
    const readiness = readPodReadiness(after, `Pod ${namespace}/${pod.name}`);
    return readiness.uid !== pod.uid && readiness.ready ? true : undefined;
  });
  return ready !== undefined;
}

/** The Pod as it is now, if it is still the one the report read; else why it is left alone. */
async function sameIncarnation(run: Run, namespace: string, pod: ReportPod): Promise<unknown> {
  const now = await run.target.getPod(namespace, pod.name);
  if (now === undefined) return undefined;
  return readPodReadiness(now, `Pod ${namespace}/${pod.name}`).uid === pod.uid ? now : undefined;
}

/**
 * Evicts one Pod: left alone (recorded pod-skipped) when it is no longer the report's; held when the StatefulSet, read
 * again, would bring it back at another revision (a template staged since the report); else once every budget that
 * covers it allows one more disruption beside the wave's others, evicted with the uid precondition, again after a
 * refusal (a budget changed between the read and the eviction) until the deadline.
 */
async function evictOne(run: Run, turn: Turn, { budgets, own }: WaveShare, pod: ReportPod): Promise<PodStep> {
  const { workload, wave, deadline } = turn;
  const { namespace, name } = workload;
  const recreated = `Pod ${pod.name} was recreated since the report (uid ${pod.uid} then): not deleted`;
  for (;;) {
    const current = await sameIncarnation(run, namespace, pod);
    if (current === undefined) {
      run.record(wave, workload, 'pod-skipped', recreated);
      return { stop: false };
    }
    const path = `StatefulSet ${namespace}/${name}`;
    const set = readWorkloadObject(await run.target.getWorkload('StatefulSet', namespace, name), path);
    const identity = readPodIdentity(current, `Pod ${namespace}/${pod.name}`);
    const recreation = recreationOf({ ...set, namespace: set.namespace || namespace }, identity);
    if (recreation.hold !== undefined) {
      run.record(wave, workload, 'held', recreation.hold);
      return { stop: true, result: 'skipped' };
    }
    const short = await untilBudgetsAllow(run, { namespace, labels: identity.labels }, deadline, (allowances) =>
      budgets.short(allowances, own),
    );
    if (short.length > 0) {
      run.record(wave, workload, 'skipped', describeShortfall(namespace, short, run.options.timeoutMs));
      return { stop: true, result: 'skipped' };
    }
    const evicted = await run.target.evictPod(namespace, pod.name, evictionOf(namespace, pod));
    if (evicted.outcome === 'evicted') return { stop: false };
    if (evicted.outcome === 'gone' || evicted.outcome === 'replaced') {
      run.record(wave, workload, 'pod-skipped', recreated);
      return { stop: false };
    }
    // Refused: a budget changed since it was read. Read again, until the deadline.
    if (run.now() >= deadline) {
      run.record(
        wave,
        workload,
        'skipped',
        `eviction of Pod ${pod.name} refused until the deadline: ${evicted.message}`,
      );
      return { stop: true, result: 'skipped' };
    }
    await run.sleep(run.pollMs);
  }
}

/** The planned Pods evicted in the report's order (highest ordinal first), each once the previous one is Ready again. */
async function evictInTurn(run: Run, turn: Turn, share: WaveShare): Promise<Result> {
  const { workload, wave, deadline } = turn;
  for (const pod of workload.pods) {
    const step = await evictOne(run, turn, share, pod);
    if (step.stop) return step.result;
    if (!(await readyAgain(run, workload.namespace, pod, deadline))) {
      const waited = describeDuration(run.options.timeoutMs);
      run.record(wave, workload, 'failed', `Pod ${pod.name} not Ready again after ${waited}`);
      return 'failed';
    }
  }
  return 'done';
}

export { evictInTurn };
