/**
 * docs/operations.md "Running a migration", finished by `podmutation rollout` against a real control plane: Deployments
 * and StatefulSets (RollingUpdate and OnDelete) pending under a rule served by `podmutation serve`, restarted in waves;
 * a Deployment whose new Pods never schedule fails its wave and no later wave starts; the run resumes by running again;
 * a PodDisruptionBudget at 0 skips its workload after --timeout; --dry-run changes nothing.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ROLLOUT_ANNOTATION } from '../../lib/api/index.ts';
import type { MigrationReport } from '../../lib/report/index.ts';
import type { RolloutRecord, WorkloadRecord } from '../../lib/rollout/index.ts';
import { BIN, runPodmutation, type CliRun } from '../support/cli.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import { registerWebhook, ruleFolder, serveWebhook, type ServedWebhook } from './webhook.ts';

const cluster = useControlPlane();

const WAVES = 'rollout-waves';
const GUARDED = 'rollout-guarded';
const KILLED = 'rollout-killed';
const POOL = (pool: string) => ({
  matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: [pool] }],
});
const LEGACY_AFFINITY = {
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [POOL('legacy')] } },
};

const RULES = [
  {
    name: 'merge-legacy-pool',
    spec: {
      enable: true,
      workloadSelector: {
        namespaces: [WAVES, GUARDED, KILLED],
        kinds: ['Deployment', 'StatefulSet'],
        nodeAffinityMatch: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [POOL('legacy')] } },
      },
      mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
      mutationAdd: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [POOL('merged')] } },
      },
    },
  },
];

type Workload = {
  metadata: { name: string; resourceVersion: string; generation: number; annotations?: Record<string, string> };
  spec: { template: { metadata?: { annotations?: Record<string, string> } } };
};

function template(name: string, spec: Json = {}): Json {
  return {
    metadata: { labels: { app: name } },
    spec: {
      containers: [{ name: 'app', image: `registry.example.com/${name}:1` }],
      affinity: LEGACY_AFFINITY,
      ...spec,
    },
  };
}

function deployment(namespace: string, name: string, replicas: number, spec: Json = {}, extra: Json = {}): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: template(name, spec), ...extra },
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
      template: template(name),
    },
  };
}

// In report order (namespace, kind, name): with --max-concurrent 2, waves [api, broken], [web, journal], [ledger].
// broken's Pods need a disk label no Node has: they stay Pending, and its 5 s progress deadline passes.
const WAVE_WORKLOADS: readonly Json[] = [
  deployment(WAVES, 'api', 2),
  deployment(WAVES, 'broken', 1, { nodeSelector: { 'example.com/disk': 'none' } }, { progressDeadlineSeconds: 5 }),
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

async function kubectlOk(plane: ControlPlane, args: readonly string[], input?: string): Promise<string> {
  const run = await plane.kubectl(args, input === undefined ? {} : { input });
  expect(run.code, `kubectl ${args.join(' ')}: ${run.stderr}`).toBe(0);
  return run.stdout;
}

async function rollout(
  plane: ControlPlane,
  rules: string,
  flags: readonly string[],
): Promise<{ readonly run: CliRun; readonly records: RolloutRecord[] }> {
  const run = await runPodmutation([
    'rollout',
    '--kubeconfig',
    plane.adminKubeconfig,
    '--rules',
    rules,
    '-o',
    'json',
    ...flags,
  ]);
  const records =
    run.stdout.trim() === ''
      ? []
      : run.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as RolloutRecord);
  return { run, records };
}

/** Each workload's last state, as `name: state`. */
function lastStates(records: readonly RolloutRecord[]): Record<string, string> {
  const states: Record<string, string> = {};
  for (const record of records) if (record.type === 'workload') states[record.name] = record.state;
  return states;
}

async function reportOf(
  plane: ControlPlane,
  rules: string,
  namespace: string,
): Promise<{ readonly code: number | null; readonly result: MigrationReport }> {
  const run = await runPodmutation([
    'report',
    '--kubeconfig',
    plane.adminKubeconfig,
    '--rules',
    rules,
    '-n',
    namespace,
    '-o',
    'json',
  ]);
  return { code: run.code, result: JSON.parse(run.stdout) as MigrationReport };
}

describe('podmutation rollout on a real control plane', () => {
  let webhook: ServedWebhook;
  let rules: string;

  beforeAll(async () => {
    const plane = cluster();
    rules = await ruleFolder(plane, RULES);
    for (const namespace of [WAVES, GUARDED, KILLED]) await plane.ensureNamespace(namespace);
    // The workloads start on the legacy pool before the webhook exists: every one is pending.
    await kubectlOk(plane, ['create', '-f', '-'], WAVE_WORKLOADS.map((object) => stringify(object)).join('---\n'));
    await kubectlOk(
      plane,
      ['create', '-f', '-'],
      [
        deployment(GUARDED, 'vault', 1),
        {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name: 'vault', namespace: GUARDED },
          spec: { minAvailable: 1, selector: { matchLabels: { app: 'vault' } } },
        },
      ]
        .map((object) => stringify(object))
        .join('---\n'),
    );
    for (const workload of ['deployment/api', 'deployment/web', 'statefulset/ledger']) {
      await kubectlOk(plane, ['rollout', 'status', workload, '-n', WAVES, '--timeout=90s']);
    }
    // kubectl rollout status reads no OnDelete StatefulSet.
    await waitFor('the OnDelete StatefulSet journal to have 2 ready Pods', async () => {
      const journal = await plane.admin.json<{ status?: { readyReplicas?: number } }>('GET', PATHS.journal);
      return journal.status?.readyReplicas === 2 ? true : undefined;
    });
    await kubectlOk(
      plane,
      ['create', '-f', '-'],
      ['first', 'second'].map((name) => stringify(deployment(KILLED, name, 1))).join('---\n'),
    );
    await kubectlOk(plane, ['rollout', 'status', 'deployment/vault', '-n', GUARDED, '--timeout=90s']);
    for (const name of ['first', 'second'])
      await kubectlOk(plane, ['rollout', 'status', `deployment/${name}`, '-n', KILLED, '--timeout=90s']);
    await waitFor('the vault PDB to count its healthy Pod', async () => {
      const pdb = await plane.admin.json<{ status?: { currentHealthy?: number } }>(
        'GET',
        `/apis/policy/v1/namespaces/${GUARDED}/poddisruptionbudgets/vault`,
      );
      return pdb.status?.currentHealthy === 1 ? true : undefined;
    });
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
    webhook = await serveWebhook(plane, { rules: [rules] });
    await registerWebhook(plane, webhook);
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

    const { run, records } = await rollout(plane, rules, ['-n', WAVES, '--max-concurrent', '2', '--dry-run']);

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
    const { run, records } = await rollout(cluster(), rules, [
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

    const { run, records } = await rollout(plane, rules, ['-n', WAVES, '--max-concurrent', '2', '--timeout', '40s']);

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
      '[{"op":"remove","path":"/spec/template/spec/nodeSelector"}]',
    ]);
    await kubectlOk(plane, ['rollout', 'status', 'deployment/broken', '-n', WAVES, '--timeout=60s']);
    const apiBefore = (await plane.admin.json<Workload>('GET', PATHS.api)).metadata.generation;

    const { run, records } = await rollout(plane, rules, ['-n', WAVES, '--max-concurrent', '2', '--timeout', '60s']);

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
    const { code, result } = await reportOf(plane, rules, WAVES);
    expect(code).toBe(0);
    expect(result.totals.pending).toBe(0);
    expect(records.at(-1)).toMatchObject({ type: 'verdict', pending: 0, denied: 0, failed: 0, exit: 0 });
  });

  it('skips a workload whose PodDisruptionBudget allows 0 disruptions after --timeout, with the budget as the reason', async () => {
    const plane = cluster();
    const before = (await plane.admin.json<Workload>('GET', `/apis/apps/v1/namespaces/${GUARDED}/deployments/vault`))
      .metadata.resourceVersion;

    const { run, records } = await rollout(plane, rules, ['-n', GUARDED, '--timeout', '5s']);

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

    const { run, records } = await rollout(plane, rules, ['-n', KILLED, '--pause', '1s']);

    expect(run.code, run.stderr).toBe(0);
    expect(lastStates(records)).toEqual({ first: 'current', second: 'done' });
  });
});
