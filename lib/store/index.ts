import { createSnapshotCache } from './cache.ts';
import { readStoreConfig } from './config.ts';
import { createDynamoClient, createSnapshotTable } from './dynamo.ts';
import { EXPIRES_AT_ATTRIBUTE } from './layout.ts';
import { createSyncLeaseStore } from './lease.ts';
import { createPlacementStore } from './placements.ts';
import { createSnapshotStore } from './store.ts';
import { createSyncRecordStore } from './sync-records.ts';
import type { SnapshotCacheOptions } from './cache.ts';
import type { DynamoClientOptions } from './dynamo.ts';
import type { SyncLeaseStoreOptions } from './lease.ts';
import type { PlacementStoreOptions } from './placements.ts';
import type { SnapshotStoreOptions } from './store.ts';
import type { SyncRecordStoreOptions } from './sync-records.ts';
import type {
  CachedSnapshot,
  HeldSyncLease,
  PlacementSet,
  PlacementStore,
  PlacementVersion,
  PlacementWrite,
  PublishOptions,
  PublishOutcome,
  UntrustedListStart,
  SnapshotCache,
  SnapshotCacheStats,
  SnapshotContent,
  SnapshotPointer,
  SnapshotStore,
  StoreConfig,
  SyncLeaseAcquisition,
  SyncLeaseState,
  SyncLeaseStore,
  SyncRecordStore,
  SyncOutcome,
  SyncRecord,
  SyncStatus,
} from './types.ts';

export {
  createDynamoClient,
  createSnapshotTable,
  createSnapshotStore,
  createSyncRecordStore,
  createSyncLeaseStore,
  createPlacementStore,
  createSnapshotCache,
  readStoreConfig,
  EXPIRES_AT_ATTRIBUTE,
};
export type {
  DynamoClientOptions,
  SnapshotStoreOptions,
  SyncRecordStoreOptions,
  SyncLeaseStoreOptions,
  PlacementStoreOptions,
  SnapshotCacheOptions,
  SnapshotStore,
  SyncRecordStore,
  SnapshotContent,
  SnapshotPointer,
  PublishOptions,
  PublishOutcome,
  UntrustedListStart,
  SyncOutcome,
  SyncRecord,
  SyncStatus,
  SyncLeaseStore,
  SyncLeaseState,
  SyncLeaseAcquisition,
  HeldSyncLease,
  PlacementStore,
  PlacementSet,
  PlacementVersion,
  PlacementWrite,
  SnapshotCache,
  SnapshotCacheStats,
  CachedSnapshot,
  StoreConfig,
};
