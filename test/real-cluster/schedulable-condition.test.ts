/**
 * The Schedulable condition against a real API server: the shipped sync function in kubeconfig mode, with the migration
 * report on (REPORT_INTERVAL_MINUTES=1) and the ServiceAccount of infra/rbac.yaml and infra/rbac-sync-report.yaml,
 * publishes the capacity it reads from the cluster's Nodes and from the NodePools of Karpenter's own CRD, and writes on
 * the README's migration with a misspelt target pool `Schedulable=False`, naming the Deployment and the pool; fixed to
 * the pool a NodePool makes, the rule turns `True`. Without the report, each sync judges what the rule adds: False for
 * the misspelt pool, Unknown once a NodePool takes it.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctions } from '../../scripts/build.ts';
import { Capacity } from '../../lib/capacity/index.ts';
import { nodePoolObject } from '../capacity/support.ts';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { createDynamoClient, createSnapshotTable } from '../../lib/store/index.ts';
import type { SyncReport } from '../../lib/sync/index.ts';
import { startFakeAws, type FakeAws } from '../cluster/fake-aws.ts';
import { embeddedMetrics } from '../deploy/lambda-run.ts';
import { recordsOf, snapshotsOf } from '../store/support.ts';
import type { StatusCondition } from '../support/objects.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { installNodePoolCrd } from './karpenter.ts';
import { applyPodMutation, kubectlObjects, kubectlOk, untilRolledOut } from './kubectl.ts';
import { TEST_NODES } from './nodes.ts';
import { legacyTemplate, poolTerm } from './pools.ts';
import { invokeSyncFunction, setUpKubeconfigMode } from './sync-function.ts';
import { useControlPlane } from './use-control-plane.ts';

const cluster = useControlPlane();

const CLUSTER_ID = 'default';
const TABLE = 'podmutation-schedulable-rules';
const RULE = 'move-checkout';
const REPLICAS = 2;

let dynamo: EmbeddedDynamo;
let dynamoClient: ReturnType<typeof createDynamoClient>;
let aws: FakeAws;
let taskRoot: string;

/** The README's migration of production's checkout from the legacy pool to `pool`. */
function moveTo(pool: string): Json {
  return {
    enable: true,
    workloadSelector: {
      namespaces: ['production'],
      nodeAffinityMatch: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm('legacy')] },
      },
    },
    mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
    mutationAdd: {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm(pool)] } },
    },
  };
}

/** The shipped sync function, one sync, with the migration report every minute (or off, 0). */
function invokeSync(reportIntervalMinutes = 1): ReturnType<typeof invokeSyncFunction> {
  return invokeSyncFunction({
    taskRoot,
    secretsManagerUrl: aws.url,
    dynamoEndpoint: dynamo.endpoint,
    tableName: TABLE,
    reportIntervalMinutes,
  });
}

async function schedulable(plane: ControlPlane): Promise<StatusCondition | undefined> {
  const resource = await plane.admin.json<{ status?: { conditions?: StatusCondition[] } }>(
    'GET',
    `/apis/agent.cloudpilot.ai/v1alpha1/podmutations/${RULE}`,
  );
  return resource.status?.conditions?.find((condition) => condition.type === 'Schedulable');
}

/** The SCHEDULABLE column of `kubectl get pm` for the rule. */
async function schedulableColumn(plane: ControlPlane): Promise<string | undefined> {
  const [header = [], ...rows] = (await kubectlOk(plane, ['get', 'pm']))
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/));
  return rows.find((cells) => cells[0] === RULE)?.[header.indexOf('SCHEDULABLE')];
}

beforeAll(async () => {
  const plane = cluster();
  dynamo = await startEmbeddedDynamo();
  dynamoClient = createDynamoClient({ endpoint: dynamo.endpoint });
  await createSnapshotTable(dynamoClient, TABLE);

  aws = await startFakeAws();
  // First: kubectl auth can-i resolves nodepools.karpenter.sh through discovery.
  await installNodePoolCrd(plane);
  await setUpKubeconfigMode(
    plane,
    aws,
    ['nodes', 'nodepools.karpenter.sh', 'pods', 'cronjobs.batch'].map((resource) => [
      'list',
      resource,
      '--all-namespaces',
    ]),
  );
  await kubectlObjects(plane, 'create', [
    nodePoolObject(
      'general',
      { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] },
      { labels: { 'example.com/node-pool': 'general' } },
    ),
  ]);

  // Pods made by the real ReplicaSet controller on the legacy pool, before any rule exists.
  await plane.ensureNamespace('production');
  await kubectlObjects(plane, 'create', [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'checkout', namespace: 'production' },
      spec: {
        replicas: REPLICAS,
        selector: { matchLabels: { app: 'checkout' } },
        template: legacyTemplate('checkout'),
      },
    },
  ]);
  await untilRolledOut(plane, 'production', 'deployment/checkout');

  const outdir = await mkdtemp(join(plane.dir, 'functions-'));
  await buildFunctions({ outdir });
  taskRoot = join(outdir, 'sync');
}, 20 * 60_000);

afterAll(async () => {
  await aws?.close();
  dynamoClient?.destroy();
  await dynamo?.close();
});

describe('the shipped sync function on a migration to a misspelt pool', () => {
  let first: { readonly report: SyncReport; readonly lines: readonly string[] };

  beforeAll(async () => {
    await applyPodMutation(cluster(), RULE, moveTo('genral'));
    first = await invokeSync();
  });

  it("publishes the cluster's Nodes and the NodePool of Karpenter's CRD in the snapshot", async () => {
    expect(first.report).toMatchObject({ outcome: 'published', valid: 1 });
    const snapshot = await snapshotsOf({ client: dynamoClient, tableName: TABLE })(CLUSTER_ID).read();
    const capacity = Capacity.fromPublished(snapshot?.capacity, 'the snapshot');

    expect(capacity.nodeCount).toBe(TEST_NODES.length);
    expect(capacity.nodePools.map((pool) => pool.name)).toEqual(['general']);
  });

  it('writes Schedulable=False, naming how many Pods, the Deployment and the misspelt pool', async () => {
    const plane = cluster();
    const condition = await schedulable(plane);

    expect(first.report.progress).toMatchObject({ unschedulableRules: 1, statusFailed: 0 });
    expect(condition).toMatchObject({ status: 'False', reason: 'PodsWouldFitNowhere', observedGeneration: 1 });
    expect(condition?.message).toMatch(
      new RegExp(`^${REPLICAS} Pods the rule matches would go from fitting somewhere to fitting nowhere`),
    );
    expect(condition?.message).toContain('e.g. Deployment production/checkout: fits nowhere');
    expect(condition?.message).toContain('example.com/node-pool');
    expect(await schedulableColumn(plane)).toBe('False');
  });

  it('counts the rule in UnschedulableRules and its Pods in UnschedulablePods', () => {
    const values = (name: string, rule?: string) =>
      embeddedMetrics(first.lines)
        .filter((document) => name in document && (rule === undefined || document['rule'] === rule))
        .map((document) => document[name]);

    expect(values('UnschedulableRules')).toEqual([1]);
    expect(values('UnschedulablePods', RULE)).toEqual([REPLICAS]);
  });

  it("turns True, for the rule's new generation, once it names the pool the NodePool makes", async () => {
    const plane = cluster();
    await applyPodMutation(plane, RULE, moveTo('general'));
    // The report runs every minute: the last one is moved a minute back rather than waited for.
    const records = recordsOf({ client: dynamoClient, tableName: TABLE })(CLUSTER_ID);
    const last = (await records.readSyncStatus())?.lastReportAt;
    await records.recordReport(new Date(Date.parse(last!) - 60_000).toISOString());

    const { report } = await invokeSync();

    expect(report.progress).toMatchObject({ unschedulableRules: 0, statusFailed: 0 });
    expect(await schedulable(plane)).toMatchObject({ status: 'True', reason: 'PodsFit', observedGeneration: 2 });
    expect(await schedulableColumn(plane)).toBe('True');
  });
});

describe('the shipped sync function without the migration report', () => {
  it('writes Schedulable=False from what the misspelt rule adds, listing no Pod', async () => {
    const plane = cluster();
    await applyPodMutation(plane, RULE, moveTo('genral'));

    const { report } = await invokeSync(0);

    expect(report).not.toHaveProperty('progress');
    const condition = await schedulable(plane);
    expect(condition).toMatchObject({ status: 'False', reason: 'AdditionsFitNowhere', observedGeneration: 3 });
    expect(condition?.message).toMatch(/^by node labels, what the rule adds fits nowhere: /);
    expect(condition?.message).toContain('example.com/node-pool');
    expect(await schedulableColumn(plane)).toBe('False');
  });

  it('says Unknown once what it adds fits the NodePool, since its Pods are judged only by the report', async () => {
    const plane = cluster();
    await applyPodMutation(plane, RULE, moveTo('general'));

    await invokeSync(0);

    expect(await schedulable(plane)).toMatchObject({
      status: 'Unknown',
      reason: 'PodsNotJudged',
      observedGeneration: 4,
    });
    expect(await schedulableColumn(plane)).toBe('Unknown');
  });
});
