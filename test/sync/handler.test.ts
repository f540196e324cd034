/**
 * The deployed entry point, functions/sync/index.ts, wired from its environment: the kubeconfig comes from a
 * Secrets Manager stand-in, the rules go to a real DynamoDB, logs and EMF metrics are read from the console.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import { nodeObject, nodePoolObject, placementOf } from '../capacity/support.ts';
import { kubeconfigFor, type WorkloadObjectInput } from '../cluster/fake-api-server.ts';
import { startFakeAws, type FakeAws } from '../cluster/fake-aws.ts';
import { freshClusterId, snapshotsOf, leasesOf } from '../store/support.ts';
import { createFreshTable } from '../support/dynamo.ts';
import { startSyncWorld, validSpec, type SyncWorld } from './support.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation-kubeconfig-AbCdEf';

let world: SyncWorld;
let aws: FakeAws;
let tableName: string;
const clusterId = freshClusterId();
const printed: string[] = [];

function lambdaContext(remainingMs: number): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'podmutation-sync',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:podmutation-sync',
    memoryLimitInMB: '256',
    awsRequestId: 'c0ffee00-0000-4000-8000-000000000001',
    logGroupName: '/aws/lambda/podmutation-sync',
    logStreamName: 'test',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

beforeAll(async () => {
  world = await startSyncWorld();
  aws = await startFakeAws();
  aws.secrets.set(SECRET_ARN, kubeconfigFor(world.server));
  tableName = await createFreshTable(world.dynamo.endpoint);
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      printed.push(args.map(String).join(' '));
    });
  }
  vi.stubEnv('RULES_TABLE', tableName);
  vi.stubEnv('CLUSTER_ID', clusterId);
  vi.stubEnv('DYNAMODB_ENDPOINT', world.dynamo.endpoint);
  vi.stubEnv('KUBECONFIG_SECRET_ARN', SECRET_ARN);
  vi.stubEnv('AWS_ENDPOINT_URL_SECRETS_MANAGER', aws.url);
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDFAKEAWS');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'fake-aws-secret');
  // Dev mode sends logs and EMF to the global console, where the test reads them; metrics stay enabled.
  vi.stubEnv('POWERTOOLS_DEV', 'true');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'podmutation');
  vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'podmutation-sync');
});

afterAll(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await aws.close();
  await world.close();
});

describe('the sync Lambda entry point', () => {
  it('syncs once on a manual invocation, returns the report and flushes the metrics', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    world.server.putObjects([nodeObject('general-1', { 'example.com/pool': 'general' }) as WorkloadObjectInput]);
    const { handler } = await import('../../functions/sync/index.ts');

    const result = await handler({}, lambdaContext(70_000));

    expect(result).toMatchObject({ outcome: 'published', resources: 1, valid: 1, version: 1 });
    const snapshot = await snapshotsOf({ client: world.client, tableName })(clusterId).read();
    expect(snapshot?.rules.map((rule) => rule.name)).toEqual(['alpha-pool']);
    // The rule source and the capacity source each read the kubeconfig once for the life of the container.
    expect(aws.calls.getSecretValue).toBe(2);
    const emf = printed.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => '_aws' in entry);
    expect(emf).toMatchObject({
      RulesSynced: 1,
      RulesInvalid: 0,
      SyncErrors: 0,
      SnapshotPublished: 1,
      service: 'podmutation-sync',
    });
    const logLine = printed.find((line) => line.includes('sync published a new snapshot'));
    expect(JSON.parse(logLine ?? '{}')).toMatchObject({
      level: 'INFO',
      function_request_id: 'c0ffee00-0000-4000-8000-000000000001',
      outcome: 'published',
      resources: 1,
    });
  });

  it('reuses the kubeconfig read at the first invocation on the next one', async () => {
    const { handler } = await import('../../functions/sync/index.ts');

    const result = await handler({}, lambdaContext(70_000));

    expect(result).toMatchObject({ outcome: 'unchanged', version: 1 });
    expect(aws.calls.getSecretValue).toBe(2);
  });

  it('skips a sync while a CLI sync holds the lease, counting it in SyncSkipped and not in SyncErrors', async () => {
    const { handler } = await import('../../functions/sync/index.ts');
    const leases = leasesOf({ client: world.client, tableName });
    const cli = await leases(clusterId).acquire('cli:laptop:4242');
    if (!cli.acquired) throw new Error('test setup: the lease was not free');
    const printedBefore = printed.length;

    const result = await handler({}, lambdaContext(70_000));

    expect(result).toMatchObject({ outcome: 'skipped', skipReason: 'leaseHeld', leaseHolder: 'cli:laptop:4242' });
    const lines = printed.slice(printedBefore).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.find((entry) => '_aws' in entry)).toMatchObject({
      SyncSkipped: 1,
      SyncErrors: 0,
      SnapshotPublished: 0,
    });
    expect(lines.find((entry) => entry['level'] === 'WARN')).toMatchObject({
      message: 'sync skipped: another sync holds the sync lease of the cluster; the next sync retries',
      leaseHolder: 'cli:laptop:4242',
    });
    await leases(cli.lease.clusterId).release(cli.lease);
  });

  it('holds the lease as lambda:<request id> and releases it after its sync', async () => {
    const { handler } = await import('../../functions/sync/index.ts');

    const result = await handler({}, lambdaContext(70_000));

    expect(result).toMatchObject({ outcome: 'unchanged', version: 1 });
    const lease = await leasesOf({ client: world.client, tableName })(clusterId).read();
    expect(lease).toMatchObject({
      owner: 'lambda:c0ffee00-0000-4000-8000-000000000001',
      releasedAt: expect.any(String) as unknown,
    });
  });

  it("publishes the cluster's Nodes and, once Karpenter's CRD is installed, its NodePools with the rules", async () => {
    const { handler } = await import('../../functions/sync/index.ts');
    world.server.setNodePoolsInstalled(true);
    world.server.putObjects([
      nodePoolObject('merged', {}, { labels: { 'example.com/pool': 'merged' } }) as WorkloadObjectInput,
    ]);

    const result = await handler({}, lambdaContext(70_000));

    expect(result).toMatchObject({ outcome: 'published', version: 2 });
    const snapshot = await snapshotsOf({ client: world.client, tableName })(clusterId).read();
    const capacity = Capacity.fromPublished(snapshot?.capacity, 'the snapshot');
    const judged = (pool: string) => capacity.judge(placementOf({ nodeSelector: { 'example.com/pool': pool } })).text();
    expect([judged('general'), judged('merged')]).toEqual(['fits 1 Node', 'fits NodePool merged; 0 Nodes']);
  });

  it('with REPORT_INTERVAL_MINUTES writes Schedulable on each rule and emits UnschedulablePods per rule', async () => {
    // A fresh module: the function reads its configuration once, when its container starts.
    vi.stubEnv('REPORT_INTERVAL_MINUTES', '1');
    vi.resetModules();
    const { handler } = await import('../../functions/sync/index.ts');
    world.server.put({
      metadata: { name: 'to-nowhere' },
      spec: validSpec('nowhere', { workloadSelector: { namespaces: ['strand'] } }),
    });
    world.server.putObjects([
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'checkout', namespace: 'strand', uid: 'uid-checkout' },
        spec: { containers: [{ name: 'app', image: 'app:1' }] },
      },
    ]);
    const printedBefore = printed.length;

    const result = await handler({}, lambdaContext(70_000));

    expect(result).toMatchObject({ outcome: 'published', progress: { unschedulableRules: 1, statusFailed: 0 } });
    const conditions = (world.server.get('to-nowhere')?.['status'] as { conditions: { type: string }[] }).conditions;
    expect(conditions.find((condition) => condition.type === 'Schedulable')).toMatchObject({
      status: 'False',
      reason: 'PodsWouldFitNowhere',
    });
    const emf = printed
      .slice(printedBefore)
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => '_aws' in entry);
    expect(emf.filter((entry) => 'UnschedulablePods' in entry)).toEqual([
      expect.objectContaining({ UnschedulablePods: 1, rule: 'to-nowhere', service: 'podmutation-sync' }),
    ]);
    expect(emf.find((entry) => 'UnschedulableRules' in entry)).toMatchObject({ UnschedulableRules: 1 });
  });
});
