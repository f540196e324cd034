/**
 * `podmutation rollout` and PodDisruptionBudgets, with the real disruption controller (kube-controller-manager's
 * disruption controller writes each budget's status.disruptionsAllowed): a wave starts at most what every budget
 * covering its workloads allows, counted across the wave; budgets are read again before each Pod deletion; and a
 * deletion is preconditioned on the uid the report saw, so a Pod recreated since is never deleted; and the eviction's
 * answers are read as the API server gives them.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRolloutTarget } from '../../lib/cluster/index.ts';
import { evictionOf } from '../../lib/report/index.ts';
import type { RolloutRecord } from '../../lib/rollout/index.ts';
import { BIN } from '../support/cli.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { kubectlObjects, kubectlOk, untilRolledOut } from './kubectl.ts';
import { TEST_NODES } from './nodes.ts';
import { podNow, readyPod, settled } from './pods.ts';
import { rolloutRecords } from './podmutation.ts';
import { legacyTemplate, mergeLegacyPool } from './pools.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import { ruleFolder, serveAndRegister, type ServedWebhook } from './webhook.ts';
import { type WorkloadRecord } from '../../lib/rollout/types.ts';

const cluster = useControlPlane();

const SHARED = 'budget-shared';
const REREAD = 'budget-reread';
const RECREATED = 'budget-recreated';
const NAMESPACES = [SHARED, REREAD, RECREATED];

const RULES = [mergeLegacyPool(NAMESPACES, ['Deployment', 'StatefulSet'])];

function deployment(namespace: string, name: string, labels: Record<string, string>): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: legacyTemplate(name, {}, labels) },
  };
}

function onDeleteStatefulSet(namespace: string, name: string): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace },
    spec: {
      replicas: 2,
      serviceName: name,
      updateStrategy: { type: 'OnDelete' },
      selector: { matchLabels: { app: name } },
      template: legacyTemplate(name),
    },
  };
}

function budget(namespace: string, name: string, selector: Record<string, string>, maxUnavailable: number): Json {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace },
    spec: { maxUnavailable, selector: { matchLabels: selector } },
  };
}

/** Waits until the disruption controller observed the budget and allows `allowed` disruptions. */
async function budgetAllows(plane: ControlPlane, namespace: string, name: string, allowed: number): Promise<void> {
  await settled(plane, 'PodDisruptionBudget', namespace, name, (status) => status.disruptionsAllowed === allowed);
}

/** Marks the merged pool's Nodes unschedulable (or schedulable again): a Pod recreated meanwhile stays Pending. */
async function cordonMerged(plane: ControlPlane, unschedulable: boolean): Promise<void> {
  for (const node of TEST_NODES.filter(({ pool }) => pool === 'merged'))
    await plane.admin.json('PATCH', `/api/v1/nodes/${node.name}`, {
      body: { spec: { unschedulable: unschedulable ? true : null } },
      contentType: 'application/merge-patch+json',
    });
}

/** `podmutation rollout -o json`, its records read as they are printed. */
function startRollout(plane: ControlPlane, rules: string, flags: readonly string[]) {
  const child = spawn(
    process.execPath,
    [BIN, 'rollout', '--kubeconfig', plane.adminKubeconfig, '--rules', rules, '-o', 'json', ...flags],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const records = (): RolloutRecord[] => rolloutRecords(stdout);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    records,
    stderr: () => stderr,
    /** Resolves once a record satisfies `match`. */
    printed: (what: string, match: (record: WorkloadRecord) => boolean) =>
      waitFor(`rollout to print ${what}`, () =>
        Promise.resolve(records().some((record) => record.type === 'workload' && match(record)) ? true : undefined),
      ),
    exited,
  };
}

function steps(records: readonly RolloutRecord[]): string[] {
  return records.flatMap((record) =>
    record.type === 'workload' && record.wave > 0 ? [`${record.name} ${record.state}`] : [],
  );
}

describe('podmutation rollout and PodDisruptionBudgets on a real control plane', () => {
  let webhook: ServedWebhook;
  let rules: string;

  beforeAll(async () => {
    const plane = cluster();
    rules = await ruleFolder(plane, RULES);
    for (const namespace of NAMESPACES) await plane.ensureNamespace(namespace);
    await kubectlObjects(plane, 'create', [
      deployment(SHARED, 'alpha', { tier: 'shared' }),
      deployment(SHARED, 'beta', { tier: 'shared' }),
      budget(SHARED, 'shared', { tier: 'shared' }, 1),
      onDeleteStatefulSet(REREAD, 'vault'),
      budget(REREAD, 'vault', { app: 'vault' }, 1),
      onDeleteStatefulSet(RECREATED, 'ledger'),
      budget(RECREATED, 'ledger', { app: 'ledger' }, 0),
    ]);
    for (const name of ['alpha', 'beta']) await untilRolledOut(plane, SHARED, `deployment/${name}`);
    for (const [namespace, name] of [
      [REREAD, 'vault'],
      [RECREATED, 'ledger'],
    ] as const)
      for (const ordinal of [0, 1]) await readyPod(plane, namespace, `${name}-${ordinal}`);
    await budgetAllows(plane, SHARED, 'shared', 1);
    await budgetAllows(plane, REREAD, 'vault', 1);
    await budgetAllows(plane, RECREATED, 'ledger', 0);
    webhook = await serveAndRegister(plane, { rules: [rules] });
  });
  afterAll(async () => {
    await webhook?.stop();
  });

  it('starts the second of two workloads one budget allowing 1 covers only once the first is done', async () => {
    const run = startRollout(cluster(), rules, ['-n', SHARED, '--max-concurrent', '2', '--timeout', '60s']);

    const code = await run.exited;

    expect(code, run.stderr()).toBe(0);
    // Which of the two reads the budget first is a race; the other starts only once the first is done.
    const [, , started] = steps(run.records());
    const [first, second] = started === 'alpha started' ? ['alpha', 'beta'] : ['beta', 'alpha'];
    expect(steps(run.records())).toEqual([
      'alpha planned',
      'beta planned',
      `${first} started`,
      `${first} done`,
      `${second} started`,
      `${second} done`,
    ]);
  });

  it('reads the budget again before each Pod it deletes, and deletes none once it allows 0', async () => {
    const plane = cluster();
    const vault0 = (await readyPod(plane, REREAD, 'vault-0')).metadata.uid;
    const vault1 = (await readyPod(plane, REREAD, 'vault-1')).metadata.uid;
    // vault-1, deleted first (highest ordinal), comes back Pending until the merged pool is schedulable again.
    await cordonMerged(plane, true);
    try {
      // The cordon that keeps vault-1 Pending also makes the recreated Pods fit nowhere, which rollout refuses unless told.
      const run = startRollout(plane, rules, ['-n', REREAD, '--timeout', '20s', '--allow-unschedulable']);
      await waitFor('vault-1 to be recreated', async () => {
        const pod = await podNow(plane, REREAD, 'vault-1');
        return pod !== undefined && pod.metadata.uid !== vault1 ? true : undefined;
      });
      // Meanwhile the budget tightens: with both Pods Ready again, it allows none.
      await kubectlOk(plane, [
        'patch',
        'pdb',
        'vault',
        '-n',
        REREAD,
        '--type',
        'merge',
        '-p',
        '{"spec":{"maxUnavailable":0}}',
      ]);
      await budgetAllows(plane, REREAD, 'vault', 0);
      await cordonMerged(plane, false);

      const code = await run.exited;

      expect(code).toBe(1);
      const skipped = run.records().find((record) => record.type === 'workload' && record.state === 'skipped');
      expect(skipped).toMatchObject({ name: 'vault' });
      expect((skipped as WorkloadRecord).reason).toMatch(
        new RegExp(`^PodDisruptionBudget ${REREAD}/vault allowed 0 disruptions for`),
      );
      expect((await readyPod(plane, REREAD, 'vault-0')).metadata.uid).toBe(vault0);
      expect((await readyPod(plane, REREAD, 'vault-1')).spec.nodeName).toMatch(/^merged-/);
    } finally {
      await cordonMerged(plane, false);
    }
  });

  it('never deletes a Pod recreated since the report: the eviction is preconditioned on the uid the report saw', async () => {
    const plane = cluster();
    const ledger1 = (await readyPod(plane, RECREATED, 'ledger-1')).metadata.uid;
    const ledger0 = (await readyPod(plane, RECREATED, 'ledger-0')).metadata.uid;
    const run = startRollout(plane, rules, ['-n', RECREATED, '--timeout', '60s']);
    // The report is read (the plan printed); the run waits on the budget, which allows 0.
    await run.printed('the plan', (record) => record.name === 'ledger' && record.state === 'planned');
    // ledger-0 recreated by hand meanwhile, through the webhook: current now.
    await kubectlOk(plane, ['delete', 'pod', 'ledger-0', '-n', RECREATED, '--wait=false']);
    const recreated = (await readyPod(plane, RECREATED, 'ledger-0', ledger0)).metadata.uid;
    await kubectlOk(plane, [
      'patch',
      'pdb',
      'ledger',
      '-n',
      RECREATED,
      '--type',
      'merge',
      '-p',
      '{"spec":{"maxUnavailable":1}}',
    ]);

    const code = await run.exited;

    expect(code, run.stderr()).toBe(0);
    expect((await readyPod(plane, RECREATED, 'ledger-0')).metadata.uid).toBe(recreated);
    expect((await readyPod(plane, RECREATED, 'ledger-1')).metadata.uid).not.toBe(ledger1);
    expect(run.records().find((record) => record.type === 'workload' && record.state === 'pod-skipped')).toMatchObject({
      name: 'ledger',
      reason: `Pod ledger-0 was recreated since the report (uid ${ledger0} then): not deleted`,
    });
  });

  it('gets from the API server what the eviction did: refused under a budget at 0, replaced for another uid, done, then gone', async () => {
    const plane = cluster();
    await kubectlObjects(plane, 'create', [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'probe', namespace: REREAD, labels: { role: 'probe' } },
        spec: { containers: [{ name: 'c', image: 'registry.example.com/probe:1' }] },
      },
      budget(REREAD, 'probe', { role: 'probe' }, 0),
    ]);
    const { uid } = (await readyPod(plane, REREAD, 'probe')).metadata;
    await budgetAllows(plane, REREAD, 'probe', 0);
    const target = createRolloutTarget({ mode: 'kubeconfigFile', path: plane.adminKubeconfig });
    const evict = (asUid: string) =>
      target.evictPod(REREAD, 'probe', evictionOf(REREAD, { name: 'probe', uid: asUid }));

    expect(await evict(uid)).toMatchObject({ outcome: 'refused' });
    await kubectlOk(plane, ['delete', 'pdb', 'probe', '-n', REREAD]);
    expect(await evict('another-uid')).toMatchObject({
      outcome: 'replaced',
      message: expect.stringContaining('the UID in the precondition (another-uid) does not match') as unknown,
    });
    expect(await evict(uid)).toEqual({ outcome: 'evicted' });
    await waitFor('probe to be gone', async () =>
      (await podNow(plane, REREAD, 'probe')) === undefined ? true : undefined,
    );
    expect(await evict(uid)).toEqual({ outcome: 'gone' });
  });
});
