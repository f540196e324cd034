/**
 * PodPlacements on a real API server, end to end: infra/ applied with kubectl (the PodPlacement CRD and the sync's
 * access to it from the kustomization), the example PodPlacements applied, the shipped sync function (kubeconfig mode)
 * publishing them to dynalite and writing their status, and the shipped admission bundle (lambda-host.ts) reading them
 * from the same table while the real ReplicaSet controller creates Pods and the real scheduler binds them: every batch
 * Pod requires Spot and lands on a Spot Node, every analytics Pod requires Spot or on-demand and lands on a Node of
 * that capacity type; a sync with the report writes each PodPlacement's MATCHED and PLACED. `podmutation report
 * --kubeconfig` reads a Deployment a new PodPlacement moves to Spot as pending, and `rollout` restarts it onto Spot.
 */
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../lib/endpoint/index.ts';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { createDynamoClient, createSnapshotTable } from '../../lib/store/index.ts';
import type { SyncReport } from '../../lib/sync/index.ts';
import { buildFunctions } from '../../scripts/build.ts';
import { startFakeAws, type FakeAws } from '../cluster/fake-aws.ts';
import { snapshotsOf } from '../store/support.ts';
import type { StatusCondition } from '../support/objects.ts';
import type { Json } from './api.ts';
import { servingCertificate } from './certificates.ts';
import type { ControlPlane } from './control-plane.ts';
import { kubectlObjects, kubectlOk } from './kubectl.ts';
import { reportJson, rolloutJson } from './podmutation.ts';
import { startLambdaHost, type LambdaHost } from './lambda-host.ts';
import { TEST_NODES } from './nodes.ts';
import { livePods, type ClusterPod } from './pods.ts';
import { deploymentObject } from './pools.ts';
import { waitFor } from './processes.ts';
import { invokeSyncFunction, setUpKubeconfigMode } from './sync-function.ts';
import { useControlPlane } from './use-control-plane.ts';
import { applyWebhookConfiguration, DEFAULT_WEBHOOK_NAME, webhookConfiguration } from './webhook.ts';

const cluster = useControlPlane();

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLUSTER_ID = 'default';
const TABLE = 'podmutation-placement-rules';
const REGION = 'eu-west-1';
const CAPACITY_KEY = 'karpenter.sh/capacity-type';
const CAPACITY_OF = new Map(TEST_NODES.map((node) => [node.name, node.capacityType]));
/** Valid as the CRD reads it (spec keeps unknown fields), rejected by the validator at spec.spotPrecent. */
const MISSPELT = {
  apiVersion: 'agent.cloudpilot.ai/v1alpha1',
  kind: 'PodPlacement',
  metadata: { name: 'misspelt-percent' },
  spec: {
    enable: true,
    workloadSelector: { namespaces: ['nightly'] },
    mode: 'Diversity',
    spotPrecent: 30,
  },
};

/** Moves the nightly namespace, which only the misspelt PodPlacement selected, to Spot. */
const NIGHTLY_TO_SPOT = {
  apiVersion: 'agent.cloudpilot.ai/v1alpha1',
  kind: 'PodPlacement',
  metadata: { name: 'nightly-to-spot' },
  spec: { enable: true, workloadSelector: { namespaces: ['nightly'] }, mode: 'Spot' },
};

let dynamo: EmbeddedDynamo;
let dynamoClient: ReturnType<typeof createDynamoClient>;
let aws: FakeAws;
let taskRoot: string;
let host: LambdaHost;
let firstSync: SyncReport;

/** The shipped sync function, one sync, with the migration report every minute or off (0). */
async function invokeSync(reportIntervalMinutes: number): Promise<SyncReport> {
  const { report } = await invokeSyncFunction({
    taskRoot,
    secretsManagerUrl: aws.url,
    dynamoEndpoint: dynamo.endpoint,
    tableName: TABLE,
    reportIntervalMinutes,
  });
  return report;
}

/** A Deployment of `replicas` Pods on the merged pool (untainted Spot and on-demand Nodes). */
function deployment(namespace: string, name: string, replicas: number): Json {
  return deploymentObject(namespace, name, replicas, { nodeSelector: { 'example.com/node-pool': 'merged' } });
}

/** The workload's live Pods once there are `replicas` of them, each bound to a Node. */
function boundPods(plane: ControlPlane, namespace: string, app: string, replicas: number): Promise<ClusterPod[]> {
  return waitFor(`${replicas} Pods of ${namespace}/${app} bound`, async () => {
    const pods = await livePods(plane, namespace, `app=${app}`);
    return pods.length === replicas && pods.every((pod) => pod.spec.nodeName !== undefined) ? pods : undefined;
  });
}

/** The values of the capacity requirement in each required term of the Pod (one list per term). */
function capacityValues(pod: ClusterPod): string[][] {
  const terms =
    (
      pod.spec as {
        affinity?: {
          nodeAffinity?: {
            requiredDuringSchedulingIgnoredDuringExecution?: {
              nodeSelectorTerms: { matchExpressions?: { key: string; operator: string; values?: string[] }[] }[];
            };
          };
        };
      }
    ).affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  return terms.map((term) =>
    (term.matchExpressions ?? [])
      .filter(({ key, operator }) => key === CAPACITY_KEY && operator === 'In')
      .flatMap(({ values }) => values ?? []),
  );
}

/**
 * `kubectl get pp` as rows by name, each cell by its column header: cut at the columns' offsets in the header, since
 * kubectl leaves the cell of an absent field empty (Spot% of a Spot placement).
 */
async function podPlacementRows(plane: ControlPlane): Promise<Map<string, Record<string, string>>> {
  const [header = '', ...lines] = (await kubectlOk(plane, ['get', 'pp'])).trimEnd().split('\n');
  const columns = [...header.matchAll(/\S+/g)].map((match) => ({ name: match[0], start: match.index }));
  const rows = lines.map((line) =>
    Object.fromEntries(
      columns.map(({ name, start }, index) => [name, line.slice(start, columns[index + 1]?.start).trim()]),
    ),
  );
  return new Map(rows.map((row) => [row['NAME'] ?? '', row]));
}

async function acceptedOf(plane: ControlPlane, name: string): Promise<StatusCondition | undefined> {
  const resource = await plane.admin.json<{ status?: { conditions?: StatusCondition[] } }>(
    'GET',
    `/apis/agent.cloudpilot.ai/v1alpha1/podplacements/${name}`,
  );
  return resource.status?.conditions?.find((condition) => condition.type === 'Accepted');
}

beforeAll(async () => {
  const plane = cluster();
  const scratch = await mkdtemp(join(plane.dir, 'placement-'));
  let bundles: Awaited<ReturnType<typeof buildFunctions>>;
  [dynamo, aws, bundles] = await Promise.all([
    startEmbeddedDynamo(),
    startFakeAws(),
    buildFunctions({ outdir: join(scratch, 'dist') }),
  ]);
  dynamoClient = createDynamoClient({ endpoint: dynamo.endpoint });
  await createSnapshotTable(dynamoClient, TABLE);
  taskRoot = join(scratch, 'dist', 'sync');
  // The PodPlacement CRD and the sync's access to it come with infra/.
  await setUpKubeconfigMode(plane, aws, [
    ['list', 'podplacements.agent.cloudpilot.ai'],
    ['patch', 'podplacements.agent.cloudpilot.ai', '--subresource=status'],
    ['list', 'pods', '--all-namespaces'],
  ]);
  await kubectlOk(plane, ['wait', '--for=condition=Established', 'crd/podplacements.agent.cloudpilot.ai']);

  await kubectlOk(plane, ['apply', '-f', join(ROOT, 'examples', 'podplacements')]);
  await kubectlObjects(plane, 'apply', [MISSPELT]);
  // Published before admission first reads the table.
  firstSync = await invokeSync(0);

  const bundle = bundles.find(({ name }) => name === 'admission');
  if (bundle === undefined) throw new Error('the build wrote no admission bundle');
  const webhookToken = generateToken();
  host = await startLambdaHost({
    bundle: bundle.outfile,
    certificate: await servingCertificate(plane.certificates.ca, 'podmutation-admission'),
    dir: scratch,
    environment: {
      RULES_TABLE: TABLE,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      CLUSTER_ID,
      WEBHOOK_TOKEN: webhookToken,
      // Each snapshot published is read within a second, so that a scenario waits for admission no longer than that.
      RULES_REFRESH_SECONDS: '1',
      AWS_ACCESS_KEY_ID: 'AKIDTEST',
      AWS_SECRET_ACCESS_KEY: 'test-secret',
      AWS_REGION: REGION,
      POWERTOOLS_SERVICE_NAME: 'podmutation-test-admission',
      POWERTOOLS_METRICS_NAMESPACE: 'podmutation',
    },
  });
  await applyWebhookConfiguration(
    plane,
    await webhookConfiguration(plane, { baseUrl: host.baseUrl, token: webhookToken }),
    DEFAULT_WEBHOOK_NAME,
  );
  for (const namespace of ['batch', 'analytics', 'nightly']) await plane.ensureNamespace(namespace);
}, 180_000);

afterAll(async () => {
  await host?.stop();
  await aws?.close();
  dynamoClient?.destroy();
  await dynamo?.close();
});

describe('PodPlacements synced from a real API server', () => {
  it('publishes the example PodPlacements to the table admission reads, and not the misspelt one', async () => {
    const snapshot = await snapshotsOf({ client: dynamoClient, tableName: TABLE })(CLUSTER_ID).read();

    expect(firstSync).toMatchObject({
      outcome: 'published',
      placements: { crdInstalled: true, resources: 3, valid: 2, invalid: 1 },
    });
    expect(snapshot?.placements?.map((placement) => placement.name)).toEqual(['analytics-diversity', 'batch-to-spot']);
  });

  it('shows ACCEPTED True for the examples in kubectl get pp, and False naming the misspelt field', async () => {
    const plane = cluster();
    const rows = await podPlacementRows(plane);

    expect(rows.get('batch-to-spot')).toMatchObject({ ACCEPTED: 'True', MODE: 'Spot' });
    expect(rows.get('analytics-diversity')).toMatchObject({ ACCEPTED: 'True', MODE: 'Diversity' });
    expect(rows.get('misspelt-percent')).toMatchObject({ ACCEPTED: 'False' });
    expect(await acceptedOf(plane, 'misspelt-percent')).toMatchObject({
      reason: 'Invalid',
      observedGeneration: 1,
      message: expect.stringContaining('PodPlacement "misspelt-percent": spec.spotPrecent') as unknown,
    });
  });
});

describe('Pods admitted under the PodPlacements', () => {
  it('requires Spot of every batch Pod, and the scheduler binds each to a Spot Node, scaled up too', async () => {
    const plane = cluster();
    await kubectlObjects(plane, 'create', [deployment('batch', 'worker', 2)]);
    await boundPods(plane, 'batch', 'worker', 2);

    await kubectlOk(plane, ['scale', 'deployment/worker', '-n', 'batch', '--replicas=4']);
    const pods = await boundPods(plane, 'batch', 'worker', 4);

    for (const pod of pods) {
      expect(capacityValues(pod), pod.metadata.name).toEqual([['spot']]);
      expect(CAPACITY_OF.get(pod.spec.nodeName!), `${pod.metadata.name} on ${pod.spec.nodeName}`).toBe('spot');
    }
  });

  it('requires Spot or on-demand of each analytics Pod, and the scheduler binds it to a Node of that capacity', async () => {
    const plane = cluster();
    await kubectlObjects(plane, 'create', [deployment('analytics', 'reports', 4)]);

    const pods = await boundPods(plane, 'analytics', 'reports', 4);

    for (const pod of pods) {
      const [values = [], ...others] = capacityValues(pod);
      expect(others, pod.metadata.name).toEqual([]);
      expect(values, pod.metadata.name).toHaveLength(1);
      expect(['spot', 'on-demand']).toContain(values[0]);
      expect(pod.metadata.annotations?.['podmutation.agent.cloudpilot.ai/capacity']).toBe(values[0]);
      expect(CAPACITY_OF.get(pod.spec.nodeName!), `${pod.metadata.name} on ${pod.spec.nodeName}`).toBe(values[0]);
    }
  });

  it('shows MATCHED and PLACED for each PodPlacement after a sync with the report', async () => {
    const plane = cluster();

    const report = await invokeSync(1);

    expect(report).toMatchObject({ outcome: 'unchanged', progress: { statusFailed: 0 } });
    expect(report.progress).not.toHaveProperty('error');
    const rows = await podPlacementRows(plane);
    expect(rows.get('batch-to-spot')).toMatchObject({ ACCEPTED: 'True', MATCHED: '4', PLACED: '4' });
    expect(rows.get('analytics-diversity')).toMatchObject({ ACCEPTED: 'True', MATCHED: '4', PLACED: '4' });
    expect(rows.get('misspelt-percent')).toMatchObject({ ACCEPTED: 'False', MATCHED: '', PLACED: '' });
  });
});

describe("report and rollout reading the cluster's PodPlacements", () => {
  /** `report -n nightly`: its totals, etl's pending Pods and change, the exit code and what was said on stderr. */
  async function nightlyReport(plane: ControlPlane) {
    const { run, result } = await reportJson(plane, ['-n', 'nightly']);
    const etl = result.workloads.find(({ name }) => name === 'etl');
    return { code: run.code, stderr: run.stderr, totals: result.totals, pending: etl?.pending, change: etl?.change };
  }

  it('reads a Deployment unaffected until a PodPlacement moves its namespace to Spot, then pending', async () => {
    const plane = cluster();
    await kubectlObjects(plane, 'create', [deployment('nightly', 'etl', 2)]);
    await boundPods(plane, 'nightly', 'etl', 2);

    const before = await nightlyReport(plane);
    await kubectlObjects(plane, 'apply', [NIGHTLY_TO_SPOT]);
    const after = await nightlyReport(plane);

    // Exit 1 both times: the misspelt PodPlacement is skipped as the sync skips it, and said.
    const skipped: unknown = expect.stringContaining(
      'invalid placement skipped: PodPlacement "misspelt-percent": spec.spotPrecent',
    );
    expect(before).toMatchObject({ code: 1, stderr: skipped, totals: { pods: 2, unaffected: 2, pending: 0 } });
    expect(after).toMatchObject({ code: 1, stderr: skipped, totals: { pods: 2, pending: 2 }, pending: 2 });
    expect(after.change).toContain(CAPACITY_KEY);
  });

  it('restarts it with rollout, and its recreated Pods require Spot, bind to Spot Nodes and read current', async () => {
    const plane = cluster();
    const plan = await rolloutJson(plane, ['-n', 'nightly', '--dry-run']);
    expect(plan.records.flatMap((record) => (record.type === 'workload' ? [[record.name, record.state]] : []))).toEqual(
      [['etl', 'planned']],
    );
    // Admission places by the published snapshot: publish the new PodPlacement, and wait until a Pod created there now
    // (a server-side dry run, which the webhook answers as it answers any Pod) is placed on Spot.
    expect(await invokeSync(0)).toMatchObject({ outcome: 'published', placements: { valid: 3, invalid: 1 } });
    await waitFor('admission to place nightly Pods on Spot', async () => {
      const answer = await plane.admin.json<ClusterPod>('POST', '/api/v1/namespaces/nightly/pods', {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'probe' },
          spec: { containers: [{ name: 'app', image: 'registry.example.com/probe:1' }] },
        },
        query: { dryRun: 'All' },
      });
      return capacityValues(answer).some((values) => values.includes('spot')) ? true : undefined;
    });

    const { run, records } = await rolloutJson(plane, ['-n', 'nightly', '--timeout', '90s']);

    expect(run.code, run.stderr).toBe(0);
    expect(records.at(-1)).toMatchObject({ type: 'verdict', pending: 0, denied: 0, failed: 0 });
    const pods = await waitFor('etl rolled out to 2 Pods on Spot', async () => {
      const live = await boundPods(plane, 'nightly', 'etl', 2);
      return live.every((pod) => capacityValues(pod).length > 0) ? live : undefined;
    });
    for (const pod of pods) {
      expect(capacityValues(pod), pod.metadata.name).toEqual([['spot']]);
      expect(CAPACITY_OF.get(pod.spec.nodeName!), `${pod.metadata.name} on ${pod.spec.nodeName}`).toBe('spot');
    }
    expect(await nightlyReport(plane)).toMatchObject({ totals: { pods: 2, current: 2, pending: 0 }, pending: 0 });
  });
});
