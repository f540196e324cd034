/**
 * docs/placement.md "Diversity that holds as replicas scale", on a real control plane: a Deployment and a StatefulSet
 * under Diversity (spotPercent 70, minOnDemand 2) scaled 2 → 50 → 5 by the real controller-manager, its Pods admitted by the shipped
 * admission bundle (one warm Lambda container, lambda-host.ts) counting in an embedded DynamoDB, bound by the real
 * scheduler to Nodes labelled karpenter.sh/capacity-type. At each size the live Pods are counted by their capacity
 * annotation and by the capacity type of the Node they run on.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../lib/endpoint/index.ts';
import { createFileRuleSource } from '../../lib/local-server/index.ts';
import { CAPACITY_ANNOTATION, parsePlacementPolicy, type PlacementPolicy } from '../../lib/placement/index.ts';
import { createDynamoClient, createSnapshotTable, openRulesTable } from '../../lib/store/index.ts';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { buildFunctions } from '../../scripts/build.ts';
import { EXAMPLES } from '../support/fixtures.ts';
import { servingCertificate } from './certificates.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { admissionBundle, startLambdaHost, TEST_FUNCTION_ENVIRONMENT, type LambdaHost } from './lambda-host.ts';
import { TEST_NODES } from './nodes.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import { applyWebhookConfiguration, webhookConfiguration } from './webhook.ts';
import { bindingsOf, recordsOf, snapshotsOf } from '../store/support.ts';

const cluster = useControlPlane();

const TABLE = 'podmutation-rules';
const CLUSTER_ID = 'diversity-split';
const NAMESPACE = 'diversity';
const NAME = 'split';
const SPOT_PERCENT = 70;
const MIN_ON_DEMAND = 2;
const SIZES = [2, 50, 5] as const;
const POLICIES: readonly PlacementPolicy[] = [
  { kind: 'Deployment', name: NAME },
  { kind: 'StatefulSet', name: 'ledger' },
].map((workload) =>
  parsePlacementPolicy({
    namespace: NAMESPACE,
    ...workload,
    mode: 'Diversity',
    spotPercent: SPOT_PERCENT,
    minOnDemand: MIN_ON_DEMAND,
  }),
);

interface PodView {
  readonly metadata: {
    readonly name: string;
    readonly deletionTimestamp?: string;
    readonly annotations?: Record<string, string>;
  };
  readonly spec: { readonly nodeName?: string };
  readonly status?: { readonly phase?: string };
}

/** The split of the live Pods at one size: by the annotation the webhook wrote, and by the Node each runs on. */
interface Split {
  readonly size: number;
  readonly annotated: { readonly spot: number; readonly onDemand: number };
  readonly bound: { readonly spot: number; readonly onDemand: number };
}

const capacityOfNode = new Map(TEST_NODES.map((node) => [node.name, node.capacityType]));

/** The Spot count the sequence rule gives a prefix of `size` Pods. */
function target(size: number): number {
  return Math.max(0, Math.min(Math.floor((size * SPOT_PERCENT) / 100), size - MIN_ON_DEMAND));
}

/** The workload's live Pods (none being deleted) once there are `size` of them, all Running on a Node, for 1 s. */
async function settledPods(plane: ControlPlane, name: string, size: number): Promise<PodView[]> {
  let since: number | undefined;
  return waitFor(
    `${size} live Running Pods of ${NAMESPACE}/${name}`,
    async () => {
      const list = await plane.admin.json<{ items: PodView[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`, {
        query: { labelSelector: `app=${name}` },
      });
      const all = list.items;
      const live = all.filter((pod) => pod.metadata.deletionTimestamp === undefined);
      const settled =
        all.length === size && live.every((pod) => pod.spec.nodeName !== undefined && pod.status?.phase === 'Running');
      if (!settled) {
        since = undefined;
        return undefined;
      }
      since ??= Date.now();
      return Date.now() - since >= 1_000 ? live : undefined;
    },
    { timeoutMs: 40_000, intervalMs: 200 },
  );
}

function splitOf(size: number, pods: readonly PodView[]): Split {
  const annotatedSpot = pods.filter((pod) => pod.metadata.annotations?.[CAPACITY_ANNOTATION] === 'spot').length;
  const boundSpot = pods.filter((pod) => capacityOfNode.get(pod.spec.nodeName ?? '') === 'spot').length;
  return {
    size,
    annotated: { spot: annotatedSpot, onDemand: pods.length - annotatedSpot },
    bound: { spot: boundSpot, onDemand: pods.length - boundSpot },
  };
}

/** Creates the workload (`resource` deployments or statefulsets) at each size in turn; the split of each. */
async function scaled(plane: ControlPlane, resource: string, workload: Json): Promise<Split[]> {
  const { name } = workload.metadata as { name: string };
  await plane.admin.json('POST', `/apis/apps/v1/namespaces/${NAMESPACE}/${resource}`, { body: workload });
  const splits: Split[] = [];
  for (const [index, size] of SIZES.entries()) {
    if (index > 0) {
      await plane.admin.json('PATCH', `/apis/apps/v1/namespaces/${NAMESPACE}/${resource}/${name}`, {
        body: { spec: { replicas: size } },
        contentType: 'application/merge-patch+json',
      });
    }
    splits.push(splitOf(size, await settledPods(plane, name, size)));
  }
  console.log(
    `diversity-split ${resource} (spotPercent ${SPOT_PERCENT}, minOnDemand ${MIN_ON_DEMAND}): ` +
      splits
        .map(
          ({ size, annotated, bound }) =>
            `${size} Pods, target ${target(size)} Spot: annotated ${annotated.spot}+${annotated.onDemand}, bound ${bound.spot}+${bound.onDemand}`,
        )
        .join('; '),
  );
  return splits;
}

/** The workload's spec at the first size: its Pods labelled app=<name>. */
function workloadSpec(name: string): Json {
  return {
    replicas: SIZES[0],
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'app', image: `registry.example.com/${name}:1` }] },
    },
  };
}

/** The split is exact at every size, and the scheduler put every Pod where its annotation says. */
function expectExact(splits: readonly Split[]): void {
  for (const split of splits) {
    expect(split.bound).toEqual(split.annotated);
    expect(split.annotated.onDemand).toBeGreaterThanOrEqual(MIN_ON_DEMAND);
    // The live Pods are a prefix of the sequence.
    expect(split.annotated.spot).toBe(target(split.size));
  }
}

describe('a Diversity workload scaled 2 → 50 → 5 by the controller-manager', () => {
  let scratch: string;
  let dynamo: EmbeddedDynamo;
  let host: LambdaHost;

  beforeAll(async () => {
    const plane = cluster();
    scratch = await mkdtemp(join(tmpdir(), 'podmutation-diversity-'));
    const [bundles, started, certificate] = await Promise.all([
      buildFunctions({ outdir: join(scratch, 'dist') }),
      startEmbeddedDynamo(),
      servingCertificate(plane.certificates.ca, 'podmutation-admission'),
    ]);
    dynamo = started;
    const client = createDynamoClient({ endpoint: dynamo.endpoint });
    try {
      await createSnapshotTable(client, TABLE);
      const table = { client, tableName: TABLE };
      await createFileRuleSource([EXAMPLES]).publishRules(
        {
          snapshots: snapshotsOf(table)(CLUSTER_ID),
          records: recordsOf(table)(CLUSTER_ID),
          bindings: bindingsOf(table)(CLUSTER_ID),
        },
        CLUSTER_ID,
      );
      await openRulesTable({ ...table, clusterId: CLUSTER_ID }).placements.replacePlacements(POLICIES);
    } finally {
      client.destroy();
    }
    const token = generateToken();
    host = await startLambdaHost({
      bundle: admissionBundle(bundles),
      certificate,
      dir: scratch,
      environment: {
        RULES_TABLE: TABLE,
        DYNAMODB_ENDPOINT: dynamo.endpoint,
        CLUSTER_ID,
        WEBHOOK_TOKEN: token,
        ...TEST_FUNCTION_ENVIRONMENT,
      },
    });
    await plane.ensureNamespace(NAMESPACE);
    const name = 'diversity-split.podmutation.agent.cloudpilot.ai';
    const configuration = await webhookConfiguration(
      plane,
      { baseUrl: host.baseUrl, token },
      { failurePolicy: 'Fail', name },
    );
    await applyWebhookConfiguration(plane, configuration, name);
  }, 180_000);

  afterAll(async () => {
    await host?.stop();
    await dynamo?.close();
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  it('keeps minOnDemand on on-demand at every size, and the split exact, for a Deployment', async () => {
    const workload = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: NAME, namespace: NAMESPACE } };
    expectExact(await scaled(cluster(), 'deployments', { ...workload, spec: workloadSpec(NAME) }));
  }, 120_000);

  it('keeps them for a StatefulSet too, by its ordinals', async () => {
    const name = 'ledger';
    const workload = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: NAMESPACE } };
    // Parallel: the controller creates and deletes Pods at once rather than one Ready Pod after another.
    const spec = { ...workloadSpec(name), serviceName: name, podManagementPolicy: 'Parallel' };
    expectExact(await scaled(cluster(), 'statefulsets', { ...workload, spec }));
  }, 120_000);
});
