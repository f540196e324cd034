import { describe, expect, it } from 'vitest';
import { ROLLOUT_ANNOTATION } from '../../lib/api/index.ts';
import type { RolloutTarget, RolloutWorkloadKind } from '../../lib/cluster/index.ts';
import { ClusterError } from '../../lib/errors/index.ts';
import { runRollout, type RolloutPlan } from '../../lib/rollout/index.ts';
import { type PlannedWorkload } from '../../lib/rollout/plan.ts';
import { type WorkloadRecord } from '../../lib/rollout/types.ts';

const START = Date.parse('2026-12-03T15:00:00Z');

type Status = Record<string, unknown>;

interface FakeOptions {
  readsToComplete?: Record<string, number>;
  deadlineExceeded?: string[];
  /** The namespace's budgets, as read the nth time (from 0). */
  budgets?: unknown[] | ((read: number) => unknown[]);
  failGet?: string;
  /** The StatefulSet db's update revision (default its current one, db-r1). */
  updateRevision?: string;
  /** Evictions refused (429) before one goes through. */
  refusals?: number;
  /** Pods recreated behind the run's back, by name, before its first read of them. */
  recreated?: string[];
}

/** Deployments and Rollouts that complete after a few status reads, an OnDelete StatefulSet db with Pods db-0 and db-1, and Pods recreated Ready. */
function fakeCluster(options: FakeOptions = {}) {
  const calls: string[] = [];
  const patches: Record<string, Record<string, unknown>> = {};
  const reads: Record<string, number> = {};
  let budgetReads = 0;
  let refusals = options.refusals ?? 0;
  const pods: Record<string, { uid: string; readyAfter: number }> = {
    'db-0': { uid: 'old-0', readyAfter: 0 },
    'db-1': { uid: 'old-1', readyAfter: 0 },
  };
  for (const name of options.recreated ?? []) pods[name] = { uid: `by-hand-${name}`, readyAfter: 0 };
  const statefulSet = () => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'p', generation: 1 },
    spec: {
      updateStrategy: { type: 'OnDelete' },
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'db:1' }] } },
    },
    status: { observedGeneration: 1, currentRevision: 'db-r1', updateRevision: options.updateRevision ?? 'db-r1' },
  });
  const target: RolloutTarget = {
    getWorkload(kind: RolloutWorkloadKind, namespace: string, name: string) {
      calls.push(`get ${kind} ${name}`);
      if (name === options.failGet)
        return Promise.reject(new ClusterError(`reading ${kind} ${namespace}/${name} failed: 503 Service Unavailable`));
      if (kind === 'StatefulSet') return Promise.resolve(statefulSet());
      const patch = patches[name];
      const patched = patch !== undefined;
      reads[name] = (reads[name] ?? 0) + (patched ? 1 : 0);
      const complete = !patched || reads[name] > (options.readsToComplete?.[name] ?? 1);
      const conditions =
        options.deadlineExceeded?.includes(name) && patched
          ? [{ type: 'Progressing', reason: 'ProgressDeadlineExceeded', message: 'timed out' }]
          : [];
      const restartAt = (patch?.['spec'] as { restartAt?: string } | undefined)?.restartAt;
      const status: Status = {
        observedGeneration: patched ? 2 : 1,
        replicas: 1,
        updatedReplicas: complete ? 1 : 0,
        availableReplicas: complete ? 1 : 0,
        conditions,
        ...(kind === 'Rollout'
          ? { phase: 'Healthy', ...(complete && restartAt !== undefined ? { restartedAt: restartAt } : {}) }
          : {}),
      };
      const spec =
        kind === 'Rollout' && name === 'referenced'
          ? { replicas: 1, workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'referenced-template' } }
          : {
              replicas: 1,
              template: { metadata: { labels: { app: name } } },
              ...(restartAt === undefined ? {} : { restartAt }),
            };
      return Promise.resolve({ metadata: { name, generation: patched ? 2 : 1 }, spec, status });
    },
    patchWorkload(kind, namespace, name, patch) {
      calls.push(`patch ${name}`);
      patches[name] = patch as Record<string, unknown>;
      return Promise.resolve();
    },
    getPod(namespace, name) {
      const pod = pods[name];
      if (pod === undefined) return Promise.resolve(undefined);
      pod.readyAfter -= 1;
      return Promise.resolve({
        metadata: { name, uid: pod.uid, labels: { app: 'db', 'controller-revision-hash': 'db-r1' } },
        status: { conditions: [{ type: 'Ready', status: pod.readyAfter <= 0 ? 'True' : 'False' }] },
      });
    },
    evictPod(namespace, name, eviction) {
      const uid = (eviction as { deleteOptions: { preconditions: { uid: string } } }).deleteOptions.preconditions.uid;
      calls.push(`evict ${name} ${uid}`);
      if (refusals > 0) {
        refusals -= 1;
        return Promise.resolve({ outcome: 'refused' as const, message: 'Cannot evict pod' });
      }
      if (pods[name]?.uid !== uid) return Promise.resolve({ outcome: 'replaced' as const, message: 'uid' });
      pods[name] = { uid: `new-${name}`, readyAfter: 2 };
      return Promise.resolve({ outcome: 'evicted' as const });
    },
    listPodDisruptionBudgets() {
      const read = budgetReads;
      budgetReads += 1;
      const { budgets = [] } = options;
      return Promise.resolve(typeof budgets === 'function' ? budgets(read) : budgets);
    },
  };
  return { target, calls, patches };
}

/** A budget whose selector is these labels (an app name, or labels), with its status. */
function budget(name: string, app: string | Record<string, string>, disruptionsAllowed: number): unknown {
  const matchLabels = typeof app === 'string' ? { app } : app;
  return { metadata: { name }, spec: { selector: { matchLabels } }, status: { disruptionsAllowed } };
}

const DB: PlannedWorkload = {
  namespace: 'p',
  kind: 'StatefulSet',
  name: 'db',
  change: '',
  method: 'evict-pods',
  pods: [
    { name: 'db-1', uid: 'old-1' },
    { name: 'db-0', uid: 'old-0' },
  ],
};

function deployment(name: string): PlannedWorkload {
  return {
    namespace: 'p',
    kind: 'Deployment',
    name,
    change: '',
    method: 'restart',
    mechanism: 'template-annotation',
    pods: [],
  };
}

function rollout(name: string): PlannedWorkload {
  return { namespace: 'p', kind: 'Rollout', name, change: '', method: 'restart', mechanism: 'restart-at', pods: [] };
}

async function run(
  plan: RolloutPlan,
  target: RolloutTarget,
  options: { timeoutMs?: number; continueOnFailure?: boolean } = {},
) {
  let now = START;
  const records: WorkloadRecord[] = [];
  const outcome = await runRollout(
    plan,
    target,
    {
      id: 'r1',
      timeoutMs: options.timeoutMs ?? 60_000,
      pauseMs: 0,
      continueOnFailure: options.continueOnFailure ?? false,
      now: () => now,
      sleep: (ms) => Promise.resolve(void (now += Math.max(ms, 1))),
    },
    (record) => records.push(record),
  );
  return { outcome, records, states: records.map((record) => `${record.wave} ${record.name} ${record.state}`) };
}

describe('runRollout', () => {
  it('restarts a Deployment through the template annotation kubectl sets, stamps the workload, and waits for its controller', async () => {
    const cluster = fakeCluster({ readsToComplete: { api: 3 } });

    const { outcome, states } = await run({ waves: [[deployment('api')]], leftAlone: [] }, cluster.target);

    expect(states).toEqual(['1 api started', '1 api done']);
    expect(outcome).toEqual({ done: 1, failed: 0, skipped: 0, notStarted: 0 });
    expect(cluster.patches['api']).toEqual({
      metadata: { annotations: { [ROLLOUT_ANNOTATION]: JSON.stringify({ id: 'r1', at: '2026-12-03T15:00:00Z' }) } },
      spec: {
        template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-12-03T15:00:00Z' } } },
      },
    });
  });

  it('starts no wave after a failed one, and says why the later workloads were not started', async () => {
    const cluster = fakeCluster({ deadlineExceeded: ['broken'] });

    const { outcome, records, states } = await run(
      { waves: [[deployment('api'), deployment('broken')], [deployment('web')]], leftAlone: [] },
      cluster.target,
    );

    // The wave's workloads run at once: their records interleave, the later wave's come last.
    expect(states.slice(0, 4).sort()).toEqual(['1 api done', '1 api started', '1 broken failed', '1 broken started']);
    expect(states.slice(4)).toEqual(['2 web not-started']);
    expect(records.find((record) => record.state === 'failed')?.reason).toBe('progress deadline exceeded: timed out');
    expect(cluster.calls).not.toContain('patch web');
    expect(outcome).toEqual({ done: 1, failed: 1, skipped: 0, notStarted: 1 });
  });

  it('starts the next wave after a failure with continueOnFailure', async () => {
    const cluster = fakeCluster({ deadlineExceeded: ['broken'] });

    const { outcome } = await run(
      { waves: [[deployment('broken')], [deployment('web')]], leftAlone: [] },
      cluster.target,
      { continueOnFailure: true },
    );

    expect(outcome).toEqual({ done: 1, failed: 1, skipped: 0, notStarted: 0 });
  });

  it('fails a workload that is not complete within the timeout, with what it waited for', async () => {
    const cluster = fakeCluster({ readsToComplete: { slow: 1_000_000 } });

    const { records } = await run({ waves: [[deployment('slow')]], leftAlone: [] }, cluster.target, {
      timeoutMs: 5000,
    });

    expect(records.at(-1)).toMatchObject({
      state: 'failed',
      reason: 'not complete after 5s: 0 of 1 new replicas updated',
    });
  });

  it('skips, without restarting it, a workload whose Pods a budget at 0 disruptions covers until the timeout', async () => {
    const cluster = fakeCluster({ budgets: [budget('api-pdb', 'api', 0)] });

    const { outcome, records } = await run({ waves: [[deployment('api')]], leftAlone: [] }, cluster.target, {
      timeoutMs: 5000,
    });

    expect(records).toEqual([
      expect.objectContaining({
        name: 'api',
        state: 'skipped',
        reason: 'PodDisruptionBudget p/api-pdb allowed 0 disruptions for 5s',
      }),
    ]);
    expect(cluster.calls.filter((call) => call.startsWith('patch'))).toEqual([]);
    expect(outcome.skipped).toBe(1);
  });

  it('starts the second of two workloads one budget allowing 1 covers once the first is done, in the same wave', async () => {
    // An empty selector covers every Pod of the namespace.
    const cluster = fakeCluster({ readsToComplete: { alpha: 3, beta: 3 }, budgets: [budget('shared', {}, 1)] });

    const { states, outcome } = await run(
      { waves: [[deployment('alpha'), deployment('beta')]], leftAlone: [] },
      cluster.target,
    );

    expect(states).toEqual(['1 alpha started', '1 alpha done', '1 beta started', '1 beta done']);
    expect(outcome.done).toBe(2);
  });

  it('skips the second of two workloads one budget allowing 1 covers when the first outlasts the timeout, saying the wave took it', async () => {
    const cluster = fakeCluster({ readsToComplete: { alpha: 1_000_000 }, budgets: [budget('shared', {}, 1)] });

    const { records } = await run(
      { waves: [[deployment('alpha'), deployment('beta')]], leftAlone: [] },
      cluster.target,
      { timeoutMs: 5000 },
    );

    expect(records.find((record) => record.name === 'beta')).toMatchObject({
      state: 'skipped',
      reason: "PodDisruptionBudget p/shared allowed 1 disruption, 1 taken by this wave's workloads under way, for 5s",
    });
  });

  it('restarts a Rollout through spec.restartAt, never a template annotation, and is done once Argo copies it to status.restartedAt', async () => {
    const cluster = fakeCluster({ readsToComplete: { storefront: 2 } });

    const { states } = await run({ waves: [[rollout('storefront')]], leftAlone: [] }, cluster.target);

    expect(states).toEqual(['1 storefront started', '1 storefront done']);
    expect(cluster.patches['storefront']).toEqual({
      metadata: { annotations: { [ROLLOUT_ANNOTATION]: JSON.stringify({ id: 'r1', at: '2026-12-03T15:00:00Z' }) } },
      spec: { restartAt: '2026-12-03T15:00:00Z' },
    });
  });

  it('reads the budgets of a workloadRef Rollout from its Deployment’s template labels', async () => {
    const cluster = fakeCluster({ budgets: [budget('referenced-pdb', 'referenced-template', 0)] });

    const { records } = await run({ waves: [[rollout('referenced')]], leftAlone: [] }, cluster.target, {
      timeoutMs: 3000,
    });

    expect(cluster.calls).toContain('get Deployment referenced-template');
    expect(records).toEqual([
      expect.objectContaining({
        state: 'skipped',
        reason: 'PodDisruptionBudget p/referenced-pdb allowed 0 disruptions for 3s',
      }),
    ]);
  });

  it('evicts the pending Pods of an OnDelete StatefulSet one at a time, in the order given, each preconditioned on the report’s uid once the previous is Ready again', async () => {
    const cluster = fakeCluster();

    const { states, records } = await run({ waves: [[DB]], leftAlone: [] }, cluster.target);

    expect(states, JSON.stringify(records)).toEqual(['1 db started', '1 db done']);
    expect(cluster.calls.filter((call) => /^(patch|evict)/.test(call))).toEqual([
      'patch db',
      'evict db-1 old-1',
      'evict db-0 old-0',
    ]);
    expect(cluster.patches['db']).not.toHaveProperty('spec');
  });

  it('reads the budgets again before each Pod, and evicts no more once they allow none', async () => {
    // Read 0 admits the workload, read 1 the first eviction; from then on the budget allows none.
    const cluster = fakeCluster({ budgets: (read) => [budget('db-pdb', 'db', read < 2 ? 1 : 0)] });

    const { records } = await run({ waves: [[DB]], leftAlone: [] }, cluster.target, { timeoutMs: 5000 });

    expect(cluster.calls.filter((call) => call.startsWith('evict'))).toEqual(['evict db-1 old-1']);
    expect(records.at(-1)).toMatchObject({
      state: 'skipped',
      reason: 'PodDisruptionBudget p/db-pdb allowed 0 disruptions for 5s',
    });
  });

  it('never evicts a Pod recreated since the report, and records that it left it alone', async () => {
    const cluster = fakeCluster({ recreated: ['db-0'] });

    const { records, states } = await run({ waves: [[DB]], leftAlone: [] }, cluster.target);

    expect(cluster.calls.filter((call) => call.startsWith('evict'))).toEqual(['evict db-1 old-1']);
    expect(states).toEqual(['1 db started', '1 db pod-skipped', '1 db done']);
    expect(records[1]!.reason).toBe('Pod db-0 was recreated since the report (uid old-0 then): not deleted');
  });

  it('tries an eviction the API server refused again, the budgets read again in between', async () => {
    const cluster = fakeCluster({ refusals: 2 });

    const { states } = await run({ waves: [[DB]], leftAlone: [] }, cluster.target);

    expect(states).toEqual(['1 db started', '1 db done']);
    expect(cluster.calls.filter((call) => call.startsWith('evict'))).toEqual([
      'evict db-1 old-1',
      'evict db-1 old-1',
      'evict db-1 old-1',
      'evict db-0 old-0',
    ]);
  });

  it('holds, evicting nothing, a StatefulSet whose template was staged since the report', async () => {
    const cluster = fakeCluster({ updateRevision: 'db-r2' });

    const { records, outcome } = await run({ waves: [[DB]], leftAlone: [] }, cluster.target);

    expect(cluster.calls.filter((call) => call.startsWith('evict'))).toEqual([]);
    expect(records.at(-1)?.state).toBe('held');
    expect(records.at(-1)?.reason).toMatch(
      /^its template is staged: update revision db-r2 over current revision db-r1;/,
    );
    expect(outcome.skipped).toBe(1);
  });

  it('fails the workload whose cluster reads fail, with the error, and goes on to no later wave', async () => {
    const cluster = fakeCluster({ failGet: 'api' });

    const { records, states } = await run(
      { waves: [[deployment('api')], [deployment('web')]], leftAlone: [] },
      cluster.target,
    );

    expect(states).toEqual(['1 api failed', '2 web not-started']);
    expect(records[0]!.reason).toBe('reading Deployment p/api failed: 503 Service Unavailable');
  });
});
