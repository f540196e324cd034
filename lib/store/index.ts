import { createSnapshotCache } from './cache.ts';
import { readStoreConfig } from './config.ts';
import { createDynamoClient, createSnapshotTable } from './dynamo.ts';
import { EXPIRES_AT_ATTRIBUTE } from './layout.ts';
import { createPlacementStore } from './placements.ts';
import { createSnapshotStore } from './store.ts';
import { createSyncRecordStore } from './sync-records.ts';
import type { SnapshotCacheOptions } from './cache.ts';
import type { DynamoClientOptions } from './dynamo.ts';
import type { PlacementStoreOptions } from './placements.ts';
import type { SnapshotStoreOptions } from './store.ts';
import type { SyncRecordStoreOptions } from './sync-records.ts';
import type {
  CachedSnapshot,
  PlacementSet,
  PlacementStore,
  PlacementVersion,
  PlacementWrite,
  PublishOutcome,
  SnapshotCache,
  SnapshotCacheStats,
  SnapshotContent,
  SnapshotPointer,
  SnapshotStore,
  StoreConfig,
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
  createPlacementStore,
  createSnapshotCache,
  readStoreConfig,
  EXPIRES_AT_ATTRIBUTE,
};
export type {
  DynamoClientOptions,
  SnapshotStoreOptions,
  SyncRecordStoreOptions,
  PlacementStoreOptions,
  SnapshotCacheOptions,
  SnapshotStore,
  SyncRecordStore,
  SnapshotContent,
  SnapshotPointer,
  PublishOutcome,
  SyncOutcome,
  SyncRecord,
  SyncStatus,
  PlacementStore,
  PlacementSet,
  PlacementVersion,
  PlacementWrite,
  SnapshotCache,
  SnapshotCacheStats,
  CachedSnapshot,
  StoreConfig,
};
