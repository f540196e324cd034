import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient, createSnapshotTable, type SyncLeaseStore } from '../../lib/store/index.ts';
import {
  startFakeApiServer,
  writeKubeconfig,
  type FakeApiServer,
  type WorkloadObjectInput,
} from '../cluster/fake-api-server.ts';
import { runPodmutation, runPodmutationInProcess } from '../support/cli.ts';
import { freshClusterId, snapshotsOf, leasesOf, type PerCluster } from '../store/support.ts';
import { startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { Capacity } from '../../lib/capacity/index.ts';
import { nodeObject, placementOf } from '../capacity/support.ts';
import { invalidSpec, resetCluster, validSpec } from './support.ts';

let server: FakeApiServer;
let dynamo: TestDynamo;
let kubeconfig: string;

beforeAll(async () => {
  server = await startFakeApiServer();
  dynamo = await startTestDynamo();
  kubeconfig = writeKubeconfig(server);
});

afterAll(async () => {
  await server.close();
  await dynamo.close();
});

afterEach(() => {
  resetCluster(server);
  server.clearObjects();
});

function syncArgs(tableName: string, clusterId: string): string[] {
  return [
    'sync',
    '--once',
    '--kubeconfig',
    kubeconfig,
    '--table',
    tableName,
    '--dynamodb-endpoint',
    dynamo.endpoint,
    '--cluster-id',
    clusterId,
  ];
}

describe('podmutation sync', () => {
  it('syncs once into a new local table, prints the report as one JSON line and exits 0', async () => {
    server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    server.put({ metadata: { name: 'broken' }, spec: invalidSpec() });
    const tableName = `podmutation-cli-${freshClusterId()}`;
    const clusterId = freshClusterId();

    const run = await runPodmutation(syncArgs(tableName, clusterId));

    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      outcome: 'published',
      resources: 2,
      valid: 1,
      invalid: 1,
      version: 1,
      statusPatched: 2,
    });
    const client = createDynamoClient({ endpoint: dynamo.endpoint });
    const snapshot = await snapshotsOf({ client, tableName })(clusterId).read();
    client.destroy();
    expect(snapshot).toMatchObject({
      version: 1,
      rules: [expect.objectContaining({ name: 'alpha-pool' })],
      invalid: [expect.objectContaining({ name: 'broken' })],
    });
  });

  it("publishes the cluster's Nodes with the rules, as the Lambda does", async () => {
    server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    server.putObjects([nodeObject('general-1', { 'example.com/pool': 'general' }) as WorkloadObjectInput]);
    const tableName = `podmutation-cli-${freshClusterId()}`;
    const clusterId = freshClusterId();

    const run = await runPodmutation(syncArgs(tableName, clusterId));

    expect(run.code, run.stderr).toBe(0);
    const client = createDynamoClient({ endpoint: dynamo.endpoint });
    const snapshot = await snapshotsOf({ client, tableName })(clusterId).read();
    client.destroy();
    const capacity = Capacity.fromPublished(snapshot?.capacity, 'the snapshot');
    expect(capacity.judge(placementOf({ nodeSelector: { 'example.com/pool': 'general' } })).text()).toBe('fits 1 Node');
  });

  it('exits 1 with a failed report and the cause on stderr when the sync fails', async () => {
    server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { on: 'list' });

    const run = await runPodmutation(syncArgs(`podmutation-cli-${freshClusterId()}`, freshClusterId()));

    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      outcome: 'failed',
      failedStep: 'list',
      error: expect.stringContaining('403 Forbidden') as unknown,
    });
    expect(run.stderr).toContain('"level":"ERROR"');
    expect(run.stderr).not.toContain(server.token);
  });

  it('refuses to run without --once and points to serve for a continuous sync', async () => {
    const run = await runPodmutationInProcess(['sync', '--kubeconfig', kubeconfig]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('podmutation sync: sync needs --once');
    expect(run.stderr).toContain('podmutation serve --kubeconfig FILE');
  });

  it('exits 2 naming the flag when the cluster id is malformed', async () => {
    const run = await runPodmutationInProcess([...syncArgs('podmutation-rules', 'ok'), '--cluster-id', 'bad/id']);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--cluster-id is "bad/id"; expected 1 to 100 letters');
  });

  it('exits 2 naming the file when the kubeconfig cannot be read', async () => {
    const run = await runPodmutationInProcess(['sync', '--once', '--kubeconfig', '/nonexistent/kubeconfig']);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('cannot read kubeconfig file /nonexistent/kubeconfig');
  });
});

describe('podmutation sync and the sync lease', () => {
  /** A new local table and a lease store on it (real clock, as the CLI's). */
  async function tableWithLeases(): Promise<{
    tableName: string;
    clusterId: string;
    leases: PerCluster<SyncLeaseStore>;
    close(): void;
  }> {
    const tableName = `podmutation-cli-${freshClusterId()}`;
    const client = createDynamoClient({ endpoint: dynamo.endpoint });
    await createSnapshotTable(client, tableName);
    return {
      tableName,
      clusterId: freshClusterId(),
      leases: leasesOf({ client, tableName }),
      close: () => client.destroy(),
    };
  }

  it('exits 1 naming the holder and when its lease expires while the Lambda holds the lease, and publishes nothing', async () => {
    server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    const table = await tableWithLeases();
    const taken = await table.leases(table.clusterId).acquire('lambda:c0ffee00-0000-4000-8000-000000000001');
    const expiresAt = taken.acquired ? taken.lease.expiresAt : 'test setup: the lease was not free';

    const run = await runPodmutationInProcess([...syncArgs(table.tableName, table.clusterId), '--lease-wait', '0']);

    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      outcome: 'skipped',
      skipReason: 'leaseHeld',
      leaseHolder: 'lambda:c0ffee00-0000-4000-8000-000000000001',
      leaseExpiresAt: expiresAt,
    });
    expect(run.stderr).toContain(
      `podmutation sync: not synced: the sync lease of cluster "${table.clusterId}" is held by lambda:c0ffee00-0000-4000-8000-000000000001 ` +
        `until ${expiresAt} (waited 0 s); run it again after that time, or with a longer --lease-wait`,
    );
    const client = createDynamoClient({ endpoint: dynamo.endpoint });
    expect(await snapshotsOf({ client, tableName: table.tableName })(table.clusterId).read()).toBeUndefined();
    client.destroy();
    table.close();
  });

  it('holds the lease as cli:<host>:<pid> and releases it after the sync, so the Lambda can take it at once', async () => {
    const table = await tableWithLeases();

    const run = await runPodmutationInProcess(syncArgs(table.tableName, table.clusterId));

    expect(run.code).toBe(0);
    expect(await table.leases(table.clusterId).read()).toMatchObject({
      owner: `cli:${hostname()}:${process.pid}`,
      releasedAt: expect.any(String) as unknown,
    });
    expect((await table.leases(table.clusterId).acquire('lambda:next')).acquired).toBe(true);
    table.close();
  });

  it.each(['soon', '-1', '1.5', '601', ''])('exits 2 naming --lease-wait when it is "%s"', async (value) => {
    const run = await runPodmutationInProcess([...syncArgs('podmutation-rules', 'ok'), `--lease-wait=${value}`]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--lease-wait is "${value}"; expected a whole number of seconds from 0 to 600`);
  });

  it.each(['prod', 'kube-system', '5b7e8a52-0c4f-4b8e-9d43'])(
    'exits 2 naming --rebind-from and the form of a uid when it is "%s", before any network',
    async (value) => {
      const requests = server.requests.length;

      const run = await runPodmutationInProcess([...syncArgs('podmutation-rules', 'ok'), '--rebind-from', value]);

      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`--rebind-from is "${value}"; expected a Kubernetes uid (a UUID`);
      expect(server.requests.length).toBe(requests);
    },
  );

  it('names a wrong --lease-wait and a wrong store flag in one error', async () => {
    const run = await runPodmutationInProcess([...syncArgs('podmutation-rules', 'bad/id'), '--lease-wait', 'soon']);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('2 problems: --lease-wait is "soon"');
    expect(run.stderr).toContain('--cluster-id is "bad/id"');
  });
});
