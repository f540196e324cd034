import { PassThrough } from 'node:stream';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { validatePodPlacement } from '../../lib/api/index.ts';
import { exportedPlacements } from '../../lib/cli/placement-export.ts';
import { placementSteps } from '../../lib/cli/options/placement-file.ts';
import type { PlacementPolicy } from '../../lib/placement/index.ts';
import { type PlacementStore } from '../../lib/store/index.ts';
import { runPodmutation, runPodmutationInProcess } from '../support/cli.ts';
import { closedEndpoint, freshClusterId, placementsOf, type PerCluster } from '../store/support.ts';
import { useTestTable } from '../support/dynamo.ts';

const table = useTestTable();
let store: PerCluster<PlacementStore>;

beforeAll(() => {
  store = placementsOf({ client: table.client, tableName: table.tableName });
});

const WEB = { namespace: 'apps', kind: 'Deployment', name: 'web' } as const;
const WEB_FLAGS = ['--namespace', 'apps', '--kind', 'Deployment', '--name', 'web'];

function placement(action: string, clusterId: string, ...flags: string[]): string[] {
  return [
    'placement',
    action,
    ...flags,
    '--table',
    table.tableName,
    '--dynamodb-endpoint',
    table.endpoint,
    '--cluster-id',
    clusterId,
  ];
}

// Each spawn is a real binary start; they touch separate clusters, so they run at once.
describe.concurrent('podmutation placement, the binary', () => {
  it('set stores the policy with its defaults and prints the write as one JSON line', async () => {
    const clusterId = freshClusterId();

    const run = await runPodmutation(placement('set', clusterId, ...WEB_FLAGS, '--mode', 'Diversity'));

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      changed: true,
      version: 1,
      policy: { ...WEB, mode: 'Diversity', spotPercent: 50 },
    });
    expect(await store(clusterId).listPlacements()).toEqual([{ ...WEB, mode: 'Diversity', spotPercent: 50 }]);
  });

  it('set --min-on-demand stores the least number of on-demand Pods of a Diversity policy', async () => {
    const clusterId = freshClusterId();

    const run = await runPodmutation(
      placement('set', clusterId, ...WEB_FLAGS, '--mode', 'Diversity', '--spot-percent', '70', '--min-on-demand', '2'),
    );

    expect(run.code).toBe(0);
    expect(await store(clusterId).listPlacements()).toEqual([
      { ...WEB, mode: 'Diversity', spotPercent: 70, minOnDemand: 2 },
    ]);
  });

  it.each([
    [['--mode', 'Spot', '--min-on-demand', '2'], 'minOnDemand: is only used with mode Diversity'],
    [
      ['--mode', 'Diversity', '--min-on-demand', 'two'],
      'minOnDemand: must be an integer from 0 to 1000000 (got "two")',
    ],
  ])('set %j exits 2 naming minOnDemand and writes nothing', async (flags, message) => {
    const clusterId = freshClusterId();

    const run = await runPodmutation(placement('set', clusterId, ...WEB_FLAGS, ...flags));

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(await store(clusterId).listPlacements()).toEqual([]);
  });

  it('get -o yaml prints the policy as YAML', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement({ ...WEB, mode: 'Diversity', spotPercent: 30 });

    const run = await runPodmutation(placement('get', clusterId, ...WEB_FLAGS, '-o', 'yaml'));

    expect(run.code).toBe(0);
    expect(parse(run.stdout)).toEqual({ ...WEB, mode: 'Diversity', spotPercent: 30 });
  });

  it('list -o json prints every policy, sorted by workload', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement({ ...WEB, mode: 'Spot' });
    await store(clusterId).setPlacement({ namespace: 'apps', kind: 'Deployment', name: 'api', mode: 'NonSpot' });

    const run = await runPodmutation(placement('list', clusterId, '-o', 'json'));

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      policies: [
        { namespace: 'apps', kind: 'Deployment', name: 'api', mode: 'NonSpot' },
        { ...WEB, mode: 'Spot' },
      ],
    });
  });

  it('list prints a table by default, one row per policy', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement({ ...WEB, mode: 'Diversity', spotPercent: 30 });
    await store(clusterId).setPlacement({ namespace: 'apps', kind: 'Deployment', name: 'api', mode: 'NonSpot' });
    await store(clusterId).setPlacement({ ...WEB, kind: 'StatefulSet', mode: 'Diversity', minOnDemand: 2 });

    const run = await runPodmutation(placement('list', clusterId));

    expect(run).toMatchObject({
      code: 0,
      stdout: [
        'NAMESPACE  KIND         NAME  MODE       SPOT%  MIN-ON-DEMAND',
        'apps       Deployment   api   NonSpot    -      -',
        'apps       Deployment   web   Diversity  30     0',
        'apps       StatefulSet  web   Diversity  50     2',
        '',
      ].join('\n'),
    });
  });

  it('delete removes the policy and prints the write as one JSON line', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement({ ...WEB, mode: 'Spot' });

    const run = await runPodmutation(placement('delete', clusterId, ...WEB_FLAGS));

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ changed: true, version: 2, workload: 'apps/Deployment/web' });
    expect(await store(clusterId).listPlacements()).toEqual([]);
  });

  it('get of a workload without a policy exits 1 naming the workload and cluster', async () => {
    const clusterId = freshClusterId();

    const run = await runPodmutation(placement('get', clusterId, ...WEB_FLAGS));

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `podmutation placement get: no placement policy for workload apps/Deployment/web in cluster "${clusterId}"`,
    );
    expect(run.stdout).toBe('');
  });

  it('set of an invalid policy exits 2 with the validator message and writes nothing', async () => {
    const clusterId = freshClusterId();

    const run = await runPodmutation(
      placement('set', clusterId, ...WEB_FLAGS, '--mode', 'Diversity', '--spot-percent', '120'),
    );

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'podmutation placement set: placement policy apps/Deployment/web: spotPercent: must be an integer from 0 to 100 (got 120)',
    );
    expect(await store(clusterId).readPlacementVersion()).toBeUndefined();
  });
});

describe('podmutation placement, in process', () => {
  it('delete of a workload without a policy exits 1', async () => {
    const run = await runPodmutationInProcess(placement('delete', freshClusterId(), ...WEB_FLAGS));

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('podmutation placement delete: no placement policy for workload apps/Deployment/web');
  });

  it('exits 2 naming the field when get names a workload kind in the wrong form', async () => {
    const run = await runPodmutationInProcess(
      placement('get', freshClusterId(), '--namespace', 'apps', '--kind', 'deployment', '--name', 'web'),
    );

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('workload apps/deployment/web: kind: must be a workload kind such as Deployment');
  });

  it('exits 2 naming the flags set is missing', async () => {
    const run = await runPodmutationInProcess(
      placement('set', freshClusterId(), '--namespace', 'apps', '--kind', 'Deployment'),
    );

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "podmutation placement set: required options '--name <name>', '--mode <mode>' not specified",
    );
  });

  it('exits 2 when a flag does not belong to the action', async () => {
    const run = await runPodmutationInProcess(placement('get', freshClusterId(), ...WEB_FLAGS, '--mode', 'Spot'));

    expect(run.code).toBe(2);
    expect(run.stderr).toContain("podmutation placement get: unknown option '--mode'");
  });

  it('exits 2 listing the actions when none is given', async () => {
    const run = await runPodmutationInProcess(['placement']);

    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /Commands:\n {2}set \[options\] +set a workload's placement policy\n {2}get .*\n {2}list .*\n {2}delete /,
    );
  });

  it('exits 1 with the store failure when DynamoDB cannot be reached', async () => {
    const run = await runPodmutationInProcess(['placement', 'list', '--dynamodb-endpoint', await closedEndpoint()]);

    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^podmutation placement list: creating DynamoDB table "podmutation-rules" failed/);
  });

  it('prints a list that review and explain read back as a --placements FILE', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement({ ...WEB, mode: 'Spot' });
    const listed = await runPodmutationInProcess(placement('list', clusterId, '-o', 'yaml'));
    const file = join(mkdtempSync(join(tmpdir(), 'placements-')), 'placements.yaml');
    writeFileSync(file, listed.stdout);

    const steps = await placementSteps(
      { placements: file },
      { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() },
      [],
    );

    expect(steps.map((step) => step.name)).toEqual(['managed:capacity']);
  });
});

const POLICIES: readonly PlacementPolicy[] = [
  { namespace: 'batch', kind: 'CronJob', name: 'nightly-report', mode: 'Spot' },
  { namespace: 'production', kind: 'Deployment', name: 'checkout', mode: 'Diversity', spotPercent: 30, minOnDemand: 2 },
  { namespace: 'production', kind: 'StatefulSet', name: 'postgres', mode: 'NonSpot' },
];

/** The PodPlacement export prints for a policy: enabled, priority 0, selecting exactly its workload. */
function exported(name: string, { namespace, kind, name: workload }: PlacementPolicy, terms: object): unknown {
  return {
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodPlacement',
    metadata: { name },
    spec: {
      enable: true,
      priority: 0,
      workloadSelector: { namespaces: [namespace], kinds: [kind], names: [workload] },
      ...terms,
    },
  };
}

async function clusterWith(policies: readonly PlacementPolicy[]): Promise<string> {
  const clusterId = freshClusterId();
  for (const policy of policies) await store(clusterId).setPlacement(policy);
  return clusterId;
}

function temporaryFile(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'placement-export-')), name);
  writeFileSync(file, text);
  return file;
}

/** A workload manifest of the kind, namespace and name, as explain reads it. */
function workload(namespace: string, kind: string, name: string): Record<string, unknown> {
  const template = { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
  const apiVersion = kind === 'CronJob' ? 'batch/v1' : 'apps/v1';
  const spec =
    kind === 'CronJob'
      ? { schedule: '0 2 * * *', jobTemplate: { spec: { template } } }
      : { selector: { matchLabels: { app: name } }, template };
  return { apiVersion, kind, metadata: { namespace, name }, spec };
}

describe('podmutation placement export', () => {
  it('prints one PodPlacement per policy, each valid, selecting its workload with its mode and terms', async () => {
    const clusterId = await clusterWith(POLICIES);

    const run = await runPodmutation(placement('export', clusterId));

    expect(run.code).toBe(0);
    const documents = parseAllDocuments(run.stdout).map((document) => document.toJS() as unknown);
    expect(documents.map((document) => validatePodPlacement(document).valid)).toEqual([true, true, true]);
    expect(documents).toEqual([
      exported('batch.cronjob.nightly-report', POLICIES[0]!, { mode: 'Spot' }),
      exported('production.deployment.checkout', POLICIES[1]!, { mode: 'Diversity', spotPercent: 30, minOnDemand: 2 }),
      exported('production.statefulset.postgres', POLICIES[2]!, { mode: 'NonSpot' }),
    ]);
    expect(run.stdout).toContain('# From the placement policy of batch/CronJob/nightly-report.\n');
  });

  it("prints PodPlacements that explain applies to each policy's workload alone", async () => {
    const clusterId = await clusterWith(POLICIES);
    const exported = await runPodmutationInProcess(placement('export', clusterId));
    const workloads = [
      ...POLICIES.map(({ namespace, kind, name }) => workload(namespace, kind, name)),
      // Each differs from a policy's workload in one of namespace, kind and name.
      workload('staging', 'Deployment', 'checkout'),
      workload('production', 'StatefulSet', 'checkout'),
      workload('production', 'Deployment', 'checkout-canary'),
    ];
    const inputs = temporaryFile(
      'workloads.json',
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: workloads }),
    );

    const run = await runPodmutationInProcess([
      'explain',
      '--rules',
      temporaryFile('podplacements.yaml', exported.stdout),
      '-o',
      'json',
      inputs,
    ]);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const pods = (JSON.parse(run.stdout) as { pods: { placement?: { name?: string; alsoMatched: string[] } }[] }).pods;
    expect(pods.map((pod) => pod.placement?.name)).toEqual([
      'batch.cronjob.nightly-report',
      'production.deployment.checkout',
      'production.statefulset.postgres',
      undefined,
      undefined,
      undefined,
    ]);
    expect(pods.flatMap((pod) => pod.placement?.alsoMatched ?? [])).toEqual([]);
  });

  it('prints a List with -o json, which validate reads', async () => {
    const clusterId = await clusterWith(POLICIES);

    const run = await runPodmutationInProcess(placement('export', clusterId, '-o', 'json'));
    const validated = await runPodmutationInProcess([
      'validate',
      temporaryFile('podplacements.json', run.stdout),
      '-o',
      'json',
    ]);

    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ apiVersion: 'v1', kind: 'List', items: [{}, {}, {}] });
    expect(validated.code).toBe(0);
    expect(JSON.parse(validated.stdout)).toMatchObject({ rules: [], valid: 3, invalid: 0 });
  });

  it('prints nothing, and says so on stderr, for a cluster without policies', async () => {
    const run = await runPodmutationInProcess(placement('export', freshClusterId()));

    expect(run).toEqual({ code: 0, stdout: '', stderr: 'no placement policies to export\n' });
  });
});

describe('exportedPlacements', () => {
  it('refuses a policy no PodPlacement can say, naming the policy and the field', () => {
    const policy: PlacementPolicy = {
      namespace: 'shop',
      kind: 'Deployment',
      name: 'web',
      mode: 'Diversity',
      spotPercent: 150,
    };

    expect(() => exportedPlacements([policy])).toThrow(
      'placement policy shop/Deployment/web cannot be exported: PodPlacement "shop.deployment.web": spec.spotPercent:',
    );
  });
});

describe('the names of exported PodPlacements', () => {
  const long = 'a'.repeat(200);
  const longer = (suffix: string): PlacementPolicy => ({
    namespace: 'production',
    kind: 'Deployment',
    name: `${long}.${'b'.repeat(40)}${suffix}`,
    mode: 'Spot',
  });

  it.each([
    ['a name over 253 characters', [longer('1'), longer('2')]],
    [
      'kinds that differ in case alone',
      [
        { namespace: 'apps', kind: 'CronJob', name: 'web', mode: 'Spot' },
        { namespace: 'apps', kind: 'Cronjob', name: 'web', mode: 'Spot' },
      ],
    ],
  ] as const)('are valid, unique and the same from run to run for %s', (_, policies) => {
    const names = exportedPlacements(policies).map(({ resource }) => (resource.metadata as { name: string }).name);

    expect(new Set(names).size).toBe(policies.length);
    expect(names.every((name) => name.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name))).toBe(true);
    expect(exportedPlacements(policies).map(({ resource }) => resource.metadata)).toEqual(
      names.map((name) => ({ name })),
    );
  });
});
