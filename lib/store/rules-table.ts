/** The one way into the rules table: one cluster's snapshots, lease, sync records, placements, binding and counters. */
import { integerOption } from '../config/index.ts';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createClusterBindingStore, type ClusterBindingStore } from './cluster-binding.ts';
import { createDiversityCounterStore, type DiversityCounterStore } from './diversity-counters.ts';
import { createSyncLeaseStore, leaseDurationSeconds, type SyncLeaseStore } from './lease.ts';
import { createPlacementStore, DEFAULT_MAX_WRITE_ATTEMPTS, type PlacementStore } from './placements.ts';
import { createSnapshotStore, type SnapshotStore } from './snapshots.ts';
import { createSyncRecordStore, type SyncRecordStore } from './sync-records.ts';

/**
 * Where the table is, which cluster's items to use, and the settings of each store.
 * @internal Exported for tests: the test support types the table it opens.
 */
interface RulesTableOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly clusterId: string;
  /**
   * Epoch milliseconds (default Date.now): drives publishedAt, expiresAt, updatedAt, boundAt and the lease's expiries, and
   * stands for the table's clock when a response carries no Date header.
   */
  readonly clock?: () => number;
  readonly snapshots?: {
    /** Bytes of gzipped content per part item (default 256 KiB, at most 350,000 to stay clear of the 400 KB item limit). */
    readonly partBytes?: number;
    /** How long superseded parts stay readable before their TTL (default 900 s). */
    readonly retentionSeconds?: number;
  };
  readonly leases?: {
    /** Life of a lease from its acquisition or last renewal (default 120 s, 10 to 3600); longer than the longest sync. */
    readonly durationSeconds?: number;
  };
  readonly placements?: {
    /** Attempts of one write while other writers keep changing the set first (default 8, at most 100). */
    readonly maxWriteAttempts?: number;
  };
}

/** One cluster's stores in the rules table; see RULES_TABLE_LAYOUT for their items. */
interface RulesTable {
  readonly snapshots: SnapshotStore;
  readonly leases: SyncLeaseStore;
  readonly records: SyncRecordStore;
  readonly placements: PlacementStore;
  readonly bindings: ClusterBindingStore;
  readonly diversityCounters: DiversityCounterStore;
}

const DEFAULT_PART_BYTES = 256 * 1024;
// The rest of a part item (keys, hashes, numbers) stays under 1 KB, so 350,000 bytes of body is far from 400 KB.
const MAX_PART_BYTES = 350_000;
const MIN_PART_BYTES = 1_024;
const DEFAULT_RETENTION_SECONDS = 900;
const MAX_RETENTION_SECONDS = 30 * 24 * 3600;

/** The stores of one cluster in one table; a ConfigurationError names an option out of range. */
function openRulesTable(options: RulesTableOptions): RulesTable {
  const { client, tableName, clusterId } = options;
  const clock = options.clock ?? Date.now;
  return {
    snapshots: openSnapshotStore(options),
    leases: createSyncLeaseStore({
      client,
      tableName,
      clusterId,
      clock,
      durationMs: leaseDurationSeconds(options.leases?.durationSeconds) * 1000,
    }),
    records: createSyncRecordStore({ client, tableName, clusterId }),
    placements: openPlacementStore(options),
    bindings: createClusterBindingStore({ client, tableName, clusterId, clock }),
    diversityCounters: openDiversityCounterStore(options),
  };
}

/** openRulesTable's Diversity counters alone, for the admission Lambda (see openSnapshotStore). */
function openDiversityCounterStore(options: RulesTableOptions): DiversityCounterStore {
  const { client, tableName, clusterId } = options;
  return createDiversityCounterStore({ client, tableName, clusterId });
}

/**
 * openRulesTable's snapshots alone: the admission Lambda reads only snapshots and placements, and opening them alone
 * keeps the lease and record code out of its bundle, whose size is its load time (scripts/build.ts).
 */
function openSnapshotStore(options: RulesTableOptions): SnapshotStore {
  const { client, tableName, clusterId } = options;
  const { partBytes, retentionSeconds } = options.snapshots ?? {};
  return createSnapshotStore({
    client,
    tableName,
    clusterId,
    clock: options.clock ?? Date.now,
    partBytes: integerOption(partBytes, 'snapshot store option partBytes', {
      fallback: DEFAULT_PART_BYTES,
      minimum: MIN_PART_BYTES,
      maximum: MAX_PART_BYTES,
    }),
    retentionSeconds: integerOption(retentionSeconds, 'snapshot store option retentionSeconds', {
      fallback: DEFAULT_RETENTION_SECONDS,
      minimum: 1,
      maximum: MAX_RETENTION_SECONDS,
    }),
  });
}

/** openRulesTable's placements alone (see openSnapshotStore). */
function openPlacementStore(options: RulesTableOptions): PlacementStore {
  const { client, tableName, clusterId } = options;
  return createPlacementStore({
    client,
    tableName,
    clusterId,
    clock: options.clock ?? Date.now,
    maxWriteAttempts: integerOption(options.placements?.maxWriteAttempts, 'placement store option maxWriteAttempts', {
      fallback: DEFAULT_MAX_WRITE_ATTEMPTS,
      minimum: 1,
      maximum: 100,
    }),
  });
}

export { openRulesTable, openSnapshotStore, openPlacementStore, openDiversityCounterStore };
export type { RulesTable, RulesTableOptions };
