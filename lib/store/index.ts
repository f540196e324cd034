import type { BindingCheck, ClusterBinding, ClusterBindingStore, RebindCheck } from './cluster-binding.ts';
import { readStoreConfig, type StoreConfig } from './config.ts';
import { createDynamoClient, createSnapshotTable, type DynamoClientOptions } from './dynamo.ts';
import { EXPIRES_AT_ATTRIBUTE, RULES_TABLE_LAYOUT } from './layout.ts';
import type { HeldSyncLease, SyncLeaseAcquisition, SyncLeaseState, SyncLeaseStore } from './lease.ts';
import type { DiversityCounterStore } from './diversity-counters.ts';
import type { PlacementSet, PlacementStore, PlacementVersion, PlacementWrite } from './placements.ts';
import {
  openDiversityCounterStore,
  openPlacementStore,
  openRulesTable,
  openSnapshotStore,
  type RulesTable,
  type RulesTableOptions,
} from './rules-table.ts';
import type {
  PublishOptions,
  PublishOutcome,
  SnapshotContent,
  SnapshotPointer,
  SnapshotStore,
  UntrustedListStart,
} from './snapshots.ts';
import type { SyncOutcome, SyncRecord, SyncRecordStore, SyncStatus } from './sync-records.ts';

export {
  createDynamoClient,
  createSnapshotTable,
  openRulesTable,
  openSnapshotStore,
  openPlacementStore,
  openDiversityCounterStore,
  readStoreConfig,
  EXPIRES_AT_ATTRIBUTE,
  RULES_TABLE_LAYOUT,
};
export type {
  DynamoClientOptions,
  RulesTable,
  RulesTableOptions,
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
  DiversityCounterStore,
  PlacementSet,
  PlacementVersion,
  PlacementWrite,
  StoreConfig,
  ClusterBinding,
  ClusterBindingStore,
  BindingCheck,
  RebindCheck,
};
