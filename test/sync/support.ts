/** Test support for the sync: the fake API server and a real DynamoDB, recording logger and metrics, rule specs. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LogFields, Logger, Metrics } from '../../lib/observability/index.ts';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createPodMutationSource, type PodMutationSource } from '../../lib/cluster/index.ts';
import {
  createDynamoClient,
  type ClusterBindingStore,
  type SnapshotStore,
  type SyncRecordStore,
} from '../../lib/store/index.ts';
import { syncOnce, type SyncDependencies, type SyncReport } from '../../lib/sync/index.ts';
import {
  kubeconfigFor,
  startFakeApiServer,
  type FakeApiServer,
  type KubeconfigOverrides,
} from '../cluster/fake-api-server.ts';
import { bindingsOf, freshClusterId, snapshotsOf, recordsOf, type PerCluster } from '../store/support.ts';
import { createFreshTable, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';
import { type PodMutationSourceOptions } from '../../lib/cluster/source.ts';

/** One logged line. */
interface LogEntry {
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: LogFields;
}

/** One emitted metric value. */
interface MetricEntry {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
}

/** A logger and metrics that keep what they are given. */
interface Recorder {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly logs: LogEntry[];
  readonly emitted: MetricEntry[];
}

function createRecorder(): Recorder {
  const logs: LogEntry[] = [];
  const emitted: MetricEntry[] = [];
  const log = (level: LogEntry['level']) => (message: string, fields: LogFields) => {
    logs.push({ level, message, fields });
  };
  return {
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    metrics: { addMetric: (name, unit, value) => emitted.push({ name, unit, value }) },
    logs,
    emitted,
  };
}

/** The fake cluster and a real table shared by one test file. */
interface SyncWorld {
  readonly server: FakeApiServer;
  readonly dynamo: TestDynamo;
  readonly tableName: string;
  readonly client: DynamoDBClient;
  readonly store: PerCluster<SnapshotStore>;
  readonly records: PerCluster<SyncRecordStore>;
  readonly bindings: PerCluster<ClusterBindingStore>;
  /** A source through the real client-node; small pages so every list spans several requests. */
  source(options?: PodMutationSourceOptions, kubeconfig?: KubeconfigOverrides): PodMutationSource;
  close(): Promise<void>;
}

const SOURCE_DEFAULTS: PodMutationSourceOptions = { pageSize: 2, requestTimeoutMs: 400, maxListRestarts: 1 };

async function startSyncWorld(): Promise<SyncWorld> {
  const server = await startFakeApiServer();
  const dynamo = await startTestDynamo();
  const tableName = await createFreshTable(dynamo.endpoint);
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  return {
    server,
    dynamo,
    tableName,
    client,
    store: snapshotsOf({ client, tableName }),
    records: recordsOf({ client, tableName }),
    bindings: bindingsOf({ client, tableName }),
    source: (options = {}, kubeconfig = {}) =>
      createPodMutationSource(
        { mode: 'kubeconfigText', text: kubeconfigFor(server, kubeconfig) },
        { ...SOURCE_DEFAULTS, ...options },
      ),
    async close() {
      client.destroy();
      await server.close();
      await dynamo.close();
    },
  };
}

/** A clock that stands still until advanced; epoch milliseconds. */
interface ManualClock {
  (): number;
  advance(milliseconds: number): void;
}

function manualClock(start = Date.parse('2026-12-01T10:00:00.000Z')): ManualClock {
  let now = start;
  const clock = (() => now) as ManualClock;
  clock.advance = (milliseconds) => {
    now += milliseconds;
  };
  return clock;
}

/** A sync of one fresh cluster id in the world, with its recorder. */
interface SyncSubject {
  readonly clusterId: string;
  readonly recorder: Recorder;
  sync(overrides?: Partial<SyncDependencies>): Promise<SyncReport>;
}

/** A sync's dependencies for the subject's cluster, given its id (the stores are bound to one cluster). */
type SubjectDefaults = Partial<SyncDependencies> | ((clusterId: string) => Partial<SyncDependencies>);

function syncSubject(world: SyncWorld, given: SubjectDefaults = {}): SyncSubject {
  const clusterId = freshClusterId();
  const defaults = typeof given === 'function' ? given(clusterId) : given;
  const recorder = createRecorder();
  const source = world.source();
  return {
    clusterId,
    recorder,
    sync: (overrides = {}) =>
      syncOnce({
        source,
        store: world.store(clusterId),
        records: world.records(clusterId),
        binding: { store: world.bindings(clusterId), owner: 'lambda:test' },
        clusterId,
        logger: recorder.logger,
        metrics: recorder.metrics,
        ...defaults,
        ...overrides,
      }),
  };
}

/** Removes every object and fault from the fake cluster; its PodPlacement CRD is installed again. */
function resetCluster(server: FakeApiServer): void {
  server.clearFaults();
  for (const name of server.names()) server.remove(name);
  for (const name of server.placementNames()) server.removePlacement(name);
  server.setPlacementsInstalled(true);
}

/**
 * The world of one test file: started before its tests, emptied after each, closed after all. The object stands for
 * the started world (reading it before the tests run throws).
 */
function useSyncWorld(): SyncWorld {
  let world: SyncWorld | undefined;
  beforeAll(async () => {
    world = await startSyncWorld();
  });
  afterAll(async () => {
    await world?.close();
  });
  afterEach(() => {
    if (world !== undefined) resetCluster(world.server);
  });
  return new Proxy({} as SyncWorld, {
    get(_target, key) {
      if (world === undefined) throw new Error('the sync world is started in beforeAll; read it inside a test');
      return Reflect.get(world, key) as unknown;
    },
  });
}

/** A spec the validator accepts. */
function validSpec(pool = 'general', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    enable: true,
    workloadSelector: { namespaces: ['apps'] },
    mutationAdd: { nodeSelector: { 'example.com/pool': pool } },
    ...extra,
  };
}

/** A spec the validator rejects at spec.priority. */
function invalidSpec(): Record<string, unknown> {
  return { ...validSpec(), priority: 'high' };
}

export { startSyncWorld, useSyncWorld, manualClock, createRecorder, syncSubject, resetCluster, validSpec, invalidSpec };
export type { SyncWorld, ManualClock, Recorder, SyncSubject };
