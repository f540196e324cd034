/** `podmutation placement export`: the table's policies as PodPlacements, read from dynalite over the wire. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { validatePodPlacement } from '../../lib/api/index.ts';
import { exportedPlacements } from '../../lib/cli/placement-export.ts';
import type { PlacementPolicy } from '../../lib/placement/index.ts';
import { createDynamoClient, type PlacementStore } from '../../lib/store/index.ts';
import { runPodmutation, runPodmutationInProcess } from '../support/cli.ts';
import {
  createFreshTable,
  freshClusterId,
  placementsOf,
  startTestDynamo,
  type PerCluster,
  type TestDynamo,
} from '../store/support.ts';

let dynamo: TestDynamo;
let tableName: string;
let client: DynamoDBClient;
let store: PerCluster<PlacementStore>;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  tableName = await createFreshTable(dynamo.endpoint);
  client = createDynamoClient({ endpoint: dynamo.endpoint });
  store = placementsOf({ client, tableName });
});

afterAll(async () => {
  client.destroy();
  await dynamo.close();
});

function exportArgs(clusterId: string, ...flags: string[]): string[] {
  return [
    'placement',
    'export',
    ...flags,
    '--table',
    tableName,
    '--dynamodb-endpoint',
    dynamo.endpoint,
    '--cluster-id',
    clusterId,
  ];
}

const POLICIES: readonly PlacementPolicy[] = [
  { namespace: 'batch', kind: 'CronJob', name: 'nightly-report', mode: 'Spot' },
  { namespace: 'production', kind: 'Deployment', name: 'checkout', mode: 'Diversity', spotPercent: 30 },
  { namespace: 'production', kind: 'StatefulSet', name: 'postgres', mode: 'NonSpot' },
];

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

    const run = await runPodmutation(exportArgs(clusterId));

    expect(run.code).toBe(0);
    const documents = parseAllDocuments(run.stdout).map((document) => document.toJS() as unknown);
    expect(documents.map((document) => validatePodPlacement(document).valid)).toEqual([true, true, true]);
    expect(documents).toEqual([
      {
        apiVersion: 'agent.cloudpilot.ai/v1alpha1',
        kind: 'PodPlacement',
        metadata: { name: 'batch.cronjob.nightly-report' },
        spec: {
          enable: true,
          priority: 0,
          workloadSelector: { namespaces: ['batch'], kinds: ['CronJob'], names: ['nightly-report'] },
          mode: 'Spot',
        },
      },
      {
        apiVersion: 'agent.cloudpilot.ai/v1alpha1',
        kind: 'PodPlacement',
        metadata: { name: 'production.deployment.checkout' },
        spec: {
          enable: true,
          priority: 0,
          workloadSelector: { namespaces: ['production'], kinds: ['Deployment'], names: ['checkout'] },
          mode: 'Diversity',
          spotPercent: 30,
        },
      },
      {
        apiVersion: 'agent.cloudpilot.ai/v1alpha1',
        kind: 'PodPlacement',
        metadata: { name: 'production.statefulset.postgres' },
        spec: {
          enable: true,
          priority: 0,
          workloadSelector: { namespaces: ['production'], kinds: ['StatefulSet'], names: ['postgres'] },
          mode: 'NonSpot',
        },
      },
    ]);
    expect(run.stdout).toContain('# From the placement policy of batch/CronJob/nightly-report.\n');
  });

  it("prints PodPlacements that explain applies to each policy's workload alone", async () => {
    const clusterId = await clusterWith(POLICIES);
    const exported = await runPodmutationInProcess(exportArgs(clusterId));
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

    const run = await runPodmutationInProcess(exportArgs(clusterId, '-o', 'json'));
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
    const run = await runPodmutationInProcess(exportArgs(freshClusterId()));

    expect(run).toEqual({ code: 0, stdout: '', stderr: 'no placement policies to export\n' });
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
