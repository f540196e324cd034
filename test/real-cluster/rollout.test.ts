/**
 * docs/operations.md "Running a migration", finished by `podmutation rollout` against a real control plane: Deployments
 * and StatefulSets (RollingUpdate and OnDelete) pending under a rule served by `podmutation serve`, restarted in waves;
 * a Deployment whose new Pods never schedule fails its wave and no later wave starts; the run resumes by running again;
 * a PodDisruptionBudget at 0 skips its workload after --timeout; --dry-run changes nothing.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLLOUT_ANNOTATION } from '../../lib/api/index.ts';
import type { RolloutRecord } from '../../lib/rollout/index.ts';
import { BIN } from '../support/cli.ts';
import type { Json } from './api.ts';
import { kubectlObjects, kubectlOk, untilRolledOut } from './kubectl.ts';
import { settled } from './pods.ts';
import { reportJson, rolloutJson } from './podmutation.ts';
import { legacyTemplate, mergeLegacyPool } from './pools.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import { ruleFolder, serveAndRegister, type ServedWebhook } from './webhook.ts';
import { type WorkloadRecord } from '../../lib/rollout/types.ts';

const cluster = useControlPlane();

const WAVES = 'rollout-waves';
const GUARDED = 'rollout-guarded';
const KILLED = 'rollout-killed';

const RULES = [mergeLegacyPool([WAVES, GUARDED, KILLED], ['Deployment', 'StatefulSet'])];

type Workload = {
  metadata: { name: string; resourceVersion: string; generation: number; annotations?: Record<string, string> };
  spec: { template: { metadata?: { annotations?: Record<string, string> } } };
};

function deployment(namespace: string, name: string, replicas: number, spec: Json = {}, extra: Json = {}): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: legacyTemplate(name, spec), ...extra },
  };
}

function statefulSet(name: string, updateStrategy: string): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: WAVES },
    spec: {
      replicas: 2,
      serviceName: name,
      updateStrategy: { type: updateStrategy },
      selector: { matchLabels: { app: name } },
      template: legacyTemplate(name),
    },
  };
}

// In report order (namespace, kind, name): with --max-concurrent 2, waves [api, broken], [web, journal], [ledger].
// broken's Pods ask for more CPU than any Node has (16): by labels, taints and cordons they fit the merged Nodes, so
// the rollout starts them (free resources are no part of a fit), but they stay Pending, and its 5 s progress deadline
// passes. (A Pod that fits no Node by its labels is never restarted: misspelt-pool.test.ts.)
const BROKEN_CONTAINERS = [
  { name: 'app', image: 'registry.example.com/broken:1', resources: { requests: { cpu: '64' } } },
];
const WAVE_WORKLOADS: readonly Json[] = [
  deployment(WAVES, 'api', 2),
  deployment(WAVES, 'broken', 1, { containers: BROKEN_CONTAINERS }, { progressDeadlineSeconds: 5 }),
  deployment(WAVES, 'web', 1),
  statefulSet('journal', 'OnDelete'),
  statefulSet('ledger', 'RollingUpdate'),
];
const PATHS = {
  api: `/apis/apps/v1/namespaces/${WAVES}/deployments/api`,
  broken: `/apis/apps/v1/namespaces/${WAVES}/deployments/broken`,
  web: `/apis/apps/v1/namespaces/${WAVES}/deployments/web`,
  journal: `/apis/apps/v1/namespaces/${WAVES}/statefulsets/journal`,
  ledger: `/apis/apps/v1/namespaces/${WAVES}/statefulsets/ledger`,
} as const;

/** `podmutation rollout` under the rules with these flags, and its records. */
function rollout(rules: string, flags: readonly string[]) {
  return rolloutJson(cluster(), ['--rules', rules, ...flags]);
}

/** Each workload's last state, as `name: state`. */
function lastStates(records: readonly RolloutRecord[]): Record<string, string> {
  const states: Record<string, string> = {};
  for (const record of records) if (record.type === 'workload') states[record.name] = record.state;
  return states;
}

describe('podmutation rollout on a real control plane', () => {
  let webhook: ServedWebhook;
  let rules: string;

  beforeAll(async () => {
    const plane = cluster();
    rules = await ruleFolder(plane, RULES);
    for (const namespace of [WAVES, GUARDED, KILLED]) await plane.ensureNamespace(namespace);
    // The workloads start on the legacy pool before the webhook exists: every one is pending.
    await kubectlObjects(plane, 'create', WAVE_WORKLOADS);
    await kubectlObjects(plane, 'create', [
      deployment(GUARDED, 'vault', 1),
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'vault', namespace: GUARDED },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'vault' } } },
      },
    ]);
    for (const workload of ['deployment/api', 'deployment/web', 'statefulset/ledger'])
      await untilRolledOut(plane, WAVES, workload);
    // kubectl rollout status reads no OnDelete StatefulSet.
    await settled(plane, 'StatefulSet', WAVES, 'journal', (status) => status.readyReplicas === 2);
    await kubectlObjects(plane, 'create', [deployment(KILLED, 'first', 1), deployment(KILLED, 'second', 1)]);
    await untilRolledOut(plane, GUARDED, 'deployment/vault');
    for (const name of ['first', 'second']) await untilRolledOut(plane, KILLED, `deployment/${name}`);
    await settled(plane, 'PodDisruptionBudget', GUARDED, 'vault', (status) => status.currentHealthy === 1);
    // broken's status settles once its progress deadline passed: from then on only a write of ours changes it.
    await waitFor(
      'broken to exceed its progress deadline',
      async () => {
        const broken = await plane.admin.json<{ status?: { conditions?: { type: string; reason?: string }[] } }>(
          'GET',
          PATHS.broken,
        );
        return broken.status?.conditions?.some(
          (condition) => condition.type === 'Progressing' && condition.reason === 'ProgressDeadlineExceeded',
        ) === true
          ? true
          : undefined;
      },
      { timeoutMs: 60_000 },
    );
    webhook = await serveAndRegister(plane, { rules: [rules] });
  });
  afterAll(async () => webhook?.stop());

  it('--dry-run prints the waves and why each workload is pending, and changes nothing', async () => {
    const plane = cluster();
    const versions = async () =>
      Promise.all(
        Object.values(PATHS).map(
          async (path) => (await plane.admin.json<Workload>('GET', path)).metadata.resourceVersion,
        ),
      );
    const before = await versions();

    const { run, records } = await rollout(rules, ['-n', WAVES, '--max-concurrent', '2', '--dry-run']);

    expect(run.code, run.stderr).toBe(1);
    expect(
      records.map((record) => (record.type === 'workload' ? [record.wave, record.name, record.state] : record.type)),
    ).toEqual([
      [1, 'api', 'planned'],
      [1, 'broken', 'planned'],
      [2, 'web', 'planned'],
      [2, 'journal', 'planned'],
      [3, 'ledger', 'planned'],
    ]);
    expect((records[0] as WorkloadRecord).reason).toContain('+{example.com/node-pool In [merged]}');
    expect(await versions()).toEqual(before);
  });

  it('-l keeps the workloads whose own labels match, in waves of their own', async () => {
    const { run, records } = await rollout(rules, [
      '-n',
      WAVES,
      '--max-concurrent',
      '2',
      '--dry-run',
      '-l',
      'app in (api,web)',
    ]);

    expect(run.code, run.stderr).toBe(1);
    expect(records.map((record) => (record.type === 'workload' ? [record.wave, record.name] : record.type))).toEqual([
      [1, 'api'],
      [1, 'web'],
    ]);
  });

  it('fails the wave whose Deployment never completes, starts no later wave, and exits 1', async () => {
    const plane = cluster();

    const { run, records } = await rollout(rules, ['-n', WAVES, '--max-concurrent', '2', '--timeout', '40s']);

    expect(run.code, run.stderr).toBe(1);
    expect(lastStates(records)).toEqual({
      api: 'done',
      broken: 'failed',
      web: 'not-started',
      journal: 'not-started',
      ledger: 'not-started',
    });
    const failed = records.find((record) => record.type === 'workload' && record.state === 'failed') as WorkloadRecord;
    expect(failed.reason).toMatch(/^progress deadline exceeded/);
    const api = await plane.admin.json<Workload>('GET', PATHS.api);
    const stamp = JSON.parse(api.metadata.annotations?.[ROLLOUT_ANNOTATION] ?? '{}') as { id?: string; at?: string };
    expect(stamp.id).toBe(records[0]!.rollout);
    expect(api.spec.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']).toBe(stamp.at);
    expect(
      (await plane.admin.json<Workload>('GET', PATHS.ledger)).metadata.annotations?.[ROLLOUT_ANNOTATION],
    ).toBeUndefined();
    expect(records.at(-1)).toMatchObject({ type: 'verdict', failed: 1, exit: 1 });
  });

  it('resumes by running again: the current workloads are skipped, the rest restarted, and the report reads 0 pending', async () => {
    const plane = cluster();
    // The broken Deployment fixed by hand: its new Pods schedule, through the webhook, so it is current.
    await kubectlOk(plane, [
      'patch',
      'deployment',
      'broken',
      '-n',
      WAVES,
      '--type',
      'json',
      '-p',
      '[{"op":"remove","path":"/spec/template/spec/containers/0/resources"}]',
    ]);
    await untilRolledOut(plane, WAVES, 'deployment/broken', '60s');
    const apiBefore = (await plane.admin.json<Workload>('GET', PATHS.api)).metadata.generation;

    const { run, records } = await rollout(rules, ['-n', WAVES, '--max-concurrent', '2', '--timeout', '60s']);

    expect(run.code, run.stderr).toBe(0);
    expect(lastStates(records)).toEqual({
      api: 'current',
      broken: 'current',
      web: 'done',
      journal: 'done',
      ledger: 'done',
    });
    expect(
      records
        .filter((record) => record.type === 'workload' && record.state === 'done')
        .map((record) => (record as WorkloadRecord).wave),
    ).toEqual([1, 1, 2]);
    expect((await plane.admin.json<Workload>('GET', PATHS.api)).metadata.generation).toBe(apiBefore);
    const { run: report, result } = await reportJson(plane, ['--rules', rules, '-n', WAVES]);
    expect(report.code).toBe(0);
    expect(result.totals.pending).toBe(0);
    expect(records.at(-1)).toMatchObject({ type: 'verdict', pending: 0, denied: 0, failed: 0, exit: 0 });
  });

  it('skips a workload whose PodDisruptionBudget allows 0 disruptions after --timeout, with the budget as the reason', async () => {
    const plane = cluster();
    const before = (await plane.admin.json<Workload>('GET', `/apis/apps/v1/namespaces/${GUARDED}/deployments/vault`))
      .metadata.resourceVersion;

    const { run, records } = await rollout(rules, ['-n', GUARDED, '--timeout', '5s']);

    expect(run.code, run.stderr).toBe(1);
    expect(records.filter((record) => record.type === 'workload' && record.state === 'skipped')).toEqual([
      expect.objectContaining({
        name: 'vault',
        reason: `PodDisruptionBudget ${GUARDED}/vault allowed 0 disruptions for 5s`,
      }),
    ]);
    expect(
      (await plane.admin.json<Workload>('GET', `/apis/apps/v1/namespaces/${GUARDED}/deployments/vault`)).metadata
        .resourceVersion,
    ).toBe(before);
    expect(records.at(-1)).toMatchObject({ type: 'verdict', pending: 1, skipped: 1, exit: 1 });
  });

  it('resumes a run killed during the pause after its first wave: the restarted workload is current, the other restarted', async () => {
    const plane = cluster();
    const args = [
      'rollout',
      '--kubeconfig',
      plane.adminKubeconfig,
      '--rules',
      rules,
      '-n',
      KILLED,
      '--pause',
      '60s',
      '-o',
      'json',
    ];
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    const killed = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        printed += chunk;
        // The first wave's workload done: the run is in its 60 s pause, and is stopped there.
        if (/"name":"first","state":"done"/.test(printed)) child.kill('SIGTERM');
      });
      child.on('exit', () => resolve());
    });
    await killed;
    expect(printed).not.toMatch(/"name":"second","state":"started"/);

    const { run, records } = await rollout(rules, ['-n', KILLED, '--pause', '1s']);

    expect(run.code, run.stderr).toBe(0);
    expect(lastStates(records)).toEqual({ first: 'current', second: 'done' });
  });
});
