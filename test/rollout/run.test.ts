import { describe, expect, it } from 'vitest';
import { ROLLOUT_ANNOTATION } from '../../lib/api/index.ts';
import type { RolloutTarget, RolloutWorkloadKind } from '../../lib/cluster/index.ts';
import { ClusterError } from '../../lib/errors/index.ts';
import { runRollout, type PlannedWorkload, type RolloutPlan, type WorkloadRecord } from '../../lib/rollout/index.ts';

const START = Date.parse('2026-12-03T15:00:00Z');

type Status = Record<string, unknown>;

/** A cluster of Deployments that complete `readsToComplete` status reads after their patch, and Pods recreated Ready. */
function fakeCluster(
  options: {
    readsToComplete?: Record<string, number>;
    deadlineExceeded?: string[];
    budgets?: unknown[];
    failGet?: string;
  } = {},
) {
  const calls: string[] = [];
  const patches: Record<string, object> = {};
  const reads: Record<string, number> = {};
  const pods: Record<string, { uid: string; readyAfter: number }> = {
    'db-0': { uid: 'old-0', readyAfter: 0 },
    'db-1': { uid: 'old-1', readyAfter: 0 },
  };
  const target: RolloutTarget = {
    getWorkload(kind: RolloutWorkloadKind, namespace: string, name: string) {
      if (name === options.failGet)
        return Promise.reject(new ClusterError(`reading ${kind} ${namespace}/${name} failed: 503 Service Unavailable`));
      const patched = patches[name] !== undefined;
      reads[name] = (reads[name] ?? 0) + (patched ? 1 : 0);
      const complete = !patched || reads[name] > (options.readsToComplete?.[name] ?? 1);
      const conditions =
        options.deadlineExceeded?.includes(name) && patched
          ? [{ type: 'Progressing', reason: 'ProgressDeadlineExceeded', message: 'timed out' }]
          : [];
      const status: Status = {
        observedGeneration: patched ? 2 : 1,
        replicas: 1,
        updatedReplicas: complete ? 1 : 0,
        availableReplicas: complete ? 1 : 0,
        conditions,
      };
      return Promise.resolve({
        metadata: { name, generation: patched ? 2 : 1 },
        spec: { replicas: 1, template: { metadata: { labels: { app: name } } } },
        status,
      });
    },
    patchWorkload(kind, namespace, name, patch) {
      calls.push(`patch ${name}`);
      patches[name] = patch;
      return Promise.resolve();
    },
    getPod(namespace, name) {
      const pod = pods[name];
      if (pod === undefined) return Promise.resolve(undefined);
      pod.readyAfter -= 1;
      return Promise.resolve({
        metadata: { name, uid: pod.uid },
        status: { conditions: [{ type: 'Ready', status: pod.readyAfter <= 0 ? 'True' : 'False' }] },
      });
    },
    deletePod(namespace, name, uid) {
      calls.push(`delete ${name} ${uid}`);
      pods[name] = { uid: `new-${name}`, readyAfter: 2 };
      return Promise.resolve();
    },
    listPodDisruptionBudgets() {
      return Promise.resolve(options.budgets ?? []);
    },
  };
  return { target, calls, patches };
}

function deployment(name: string): PlannedWorkload {
  return { namespace: 'p', kind: 'Deployment', name, change: '', method: 'restart', pods: [] };
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
    const budgets = [
      {
        metadata: { name: 'api-pdb' },
        spec: { selector: { matchLabels: { app: 'api' } } },
        status: { disruptionsAllowed: 0 },
      },
    ];
    const cluster = fakeCluster({ budgets });

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
    expect(cluster.calls).toEqual([]);
    expect(outcome.skipped).toBe(1);
  });

  it('deletes the pending Pods of an OnDelete StatefulSet one at a time, in the order given, each once the previous is Ready again', async () => {
    const cluster = fakeCluster();
    const statefulSet: PlannedWorkload = {
      namespace: 'p',
      kind: 'StatefulSet',
      name: 'db',
      change: '',
      method: 'delete-pods',
      pods: ['db-1', 'db-0'],
    };

    const { states } = await run({ waves: [[statefulSet]], leftAlone: [] }, cluster.target);

    expect(states).toEqual(['1 db started', '1 db done']);
    // Each delete is preconditioned on the uid read before it: a Pod already recreated is never deleted.
    expect(cluster.calls).toEqual(['patch db', 'delete db-1 old-1', 'delete db-0 old-0']);
    expect(cluster.patches['db']).not.toHaveProperty('spec');
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
