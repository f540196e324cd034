/**
 * One cluster per table entry, on two real control planes: each with infra/ applied in kubeconfig mode and the sync's
 * own ServiceAccount, one dynalite table and one cluster id. The first publish binds the cluster id to the first
 * cluster's kube-system uid; `podmutation sync --once` with a kubeconfig for the second cluster is refused and leaves
 * the first cluster's snapshot in place, until a re-bind that names the bound uid (docs/operations.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { createDynamoClient } from '../../lib/store/index.ts';
import { bindingsOf, snapshotsOf } from '../store/support.ts';
import type { ControlPlane } from './control-plane.ts';
import { applyInfra, applyPodMutation, kubectlOk, untilAllowed } from './kubectl.ts';
import { syncOnce } from './podmutation.ts';
import { useControlPlane } from './use-control-plane.ts';

const first = useControlPlane();
const second = useControlPlane();

const GROUP = 'agent.cloudpilot.ai';
const SYNC_NAMESPACE = 'podmutation-system';
const SYNC_USER = `system:serviceaccount:${SYNC_NAMESPACE}:podmutation-sync`;
const TABLE = 'podmutation-rules';
const CLUSTER_ID = 'prod';

let dynamo: EmbeddedDynamo;
let dynamoClient: ReturnType<typeof createDynamoClient>;

/** One cluster as the sync sees it: the kubeconfig of infra/rbac.yaml's ServiceAccount, its kube-system uid, its rule. */
interface SyncedCluster {
  readonly kubeconfig: string;
  readonly uid: string;
  readonly rule: string;
}
const clusters: { first?: SyncedCluster; second?: SyncedCluster } = {};

function synced(which: 'first' | 'second'): SyncedCluster {
  const found = clusters[which];
  if (found === undefined) throw new Error(`the ${which} cluster is set up in beforeAll`);
  return found;
}

/** infra/ in kubeconfig mode, a token of the sync's ServiceAccount, and one PodMutation named `rule`. */
async function setUp(plane: ControlPlane, rule: string): Promise<SyncedCluster> {
  await applyInfra(plane, 'podmutation.agent.cloudpilot.ai/access!=eks-access-entry');
  await applyPodMutation(plane, rule, {
    enable: true,
    workloadSelector: { namespaces: ['production'] },
    mutationAdd: { nodeSelector: { 'example.com/pool': rule } },
  });
  await untilAllowed(plane, 'the sync ServiceAccount', ['get', 'namespace/kube-system', `--as=${SYNC_USER}`]);
  const token = (await kubectlOk(plane, ['create', 'token', 'podmutation-sync', '-n', SYNC_NAMESPACE])).trim();
  const namespace = await plane.admin.json<{ metadata: { uid: string } }>('GET', '/api/v1/namespaces/kube-system');
  return { kubeconfig: await plane.tokenKubeconfig('podmutation-sync', token), uid: namespace.metadata.uid, rule };
}

/** `podmutation sync --once` of one cluster into the shared table under CLUSTER_ID, with extra flags. */
function runSync(cluster: SyncedCluster, extra: readonly string[] = []) {
  return syncOnce([
    '--kubeconfig',
    cluster.kubeconfig,
    '--dynamodb-endpoint',
    dynamo.endpoint,
    '--table',
    TABLE,
    '--cluster-id',
    CLUSTER_ID,
    ...extra,
  ]);
}

/** The rule names of the cluster id's current snapshot, and its version. */
async function published(): Promise<{ readonly version?: number; readonly rules?: readonly string[] }> {
  const snapshot = await snapshotsOf({ client: dynamoClient, tableName: TABLE })(CLUSTER_ID).read();
  return { version: snapshot?.version, rules: snapshot?.rules.map((rule) => rule.name) };
}

beforeAll(async () => {
  dynamo = await startEmbeddedDynamo();
  dynamoClient = createDynamoClient({ endpoint: dynamo.endpoint });
  clusters.first = await setUp(first(), 'first-cluster-rule');
  clusters.second = await setUp(second(), 'second-cluster-rule');
  expect(clusters.first.uid).not.toBe(clusters.second.uid);
});

afterAll(async () => {
  dynamoClient?.destroy();
  await dynamo?.close();
});

describe('one cluster per table entry', () => {
  it('grants the sync get on the kube-system namespace alone (infra/rbac.yaml), nothing on other namespaces', async () => {
    for (const plane of [first(), second()]) {
      const other = await plane.kubectl(['auth', 'can-i', 'get', 'namespace/default', `--as=${SYNC_USER}`]);
      expect(other.stdout.trim()).toBe('no');
      const list = await plane.kubectl(['auth', 'can-i', 'list', 'namespaces', `--as=${SYNC_USER}`]);
      expect(list.stdout.trim()).toBe('no');
    }
  });

  it("binds the cluster id to the first cluster's kube-system uid on its first publish", async () => {
    const { run, report } = await runSync(synced('first'));

    expect(run.code, run.stderr).toBe(0);
    expect(report).toMatchObject({ outcome: 'published', valid: 1 });
    expect(await published()).toMatchObject({ rules: ['first-cluster-rule'] });
    expect(await bindingsOf({ client: dynamoClient, tableName: TABLE })(CLUSTER_ID).read()).toMatchObject({
      clusterUid: synced('first').uid,
    });
  });

  it("refuses sync --once with the second cluster's kubeconfig, naming both uids, the cluster id and the table, and keeps the first cluster's snapshot", async () => {
    const before = await published();

    const { run, report } = await runSync(synced('second'));

    expect(run.code).toBe(1);
    expect(report).toMatchObject({ outcome: 'failed', failedStep: 'identity', statusPatched: 0 });
    for (const part of [synced('first').uid, synced('second').uid, `"${CLUSTER_ID}"`, `"${TABLE}"`])
      expect(report?.error).toContain(part);
    expect(run.stderr).toContain(`--rebind-from ${synced('first').uid}`);
    expect(await published()).toEqual(before);
    // Nothing was written to the second cluster either: its rule has no status.
    const rule = await second().admin.json<{ status?: unknown }>(
      'GET',
      `/apis/${GROUP}/v1alpha1/podmutations/second-cluster-rule`,
    );
    expect(rule.status).toBeUndefined();
  });

  it('refuses a re-bind whose --rebind-from names a uid the cluster id is not bound to, changing nothing', async () => {
    const before = await published();
    // The bound uid with its last digit changed.
    const bound = synced('first').uid;
    const typo = `${bound.slice(0, -1)}${bound.endsWith('0') ? '1' : '0'}`;

    const { run, report } = await runSync(synced('second'), ['--rebind-from', typo]);

    expect(run.code).toBe(1);
    expect(report).toMatchObject({ outcome: 'failed', failedStep: 'identity' });
    expect(report?.error).toContain(`--rebind-from names ${typo}`);
    expect(report?.error).toContain(synced('first').uid);
    expect(await published()).toEqual(before);
    expect((await bindingsOf({ client: dynamoClient, tableName: TABLE })(CLUSTER_ID).read())?.clusterUid).toBe(
      synced('first').uid,
    );
  });

  it("re-binds to the second cluster with --rebind-from the first cluster's uid, publishes its rules, then refuses the first", async () => {
    const before = await published();

    const rebound = await runSync(synced('second'), ['--rebind-from', synced('first').uid]);

    expect(rebound.run.code, rebound.run.stderr).toBe(0);
    expect(rebound.report).toMatchObject({ outcome: 'published', version: (before.version ?? 0) + 1 });
    expect(await published()).toMatchObject({ rules: ['second-cluster-rule'] });
    expect(await bindingsOf({ client: dynamoClient, tableName: TABLE })(CLUSTER_ID).read()).toMatchObject({
      clusterUid: synced('second').uid,
      previousUid: synced('first').uid,
    });

    const old = await runSync(synced('first'));
    expect(old.run.code).toBe(1);
    expect(old.report).toMatchObject({ outcome: 'failed', failedStep: 'identity' });
    expect(await published()).toMatchObject({ rules: ['second-cluster-rule'] });
  });
});
