import type { BindingCheck, ClusterBindingStore, RebindCheck } from './cluster-binding.ts';
import { readStoreConfig, type StoreConfig } from './config.ts';
import { createDynamoClient, createSnapshotTable } from './dynamo.ts';

import type { HeldSyncLease, SyncLeaseAcquisition, SyncLeaseStore } from './lease.ts';
import type { DiversityCounterStore } from './diversity-counters.ts';
import type { PlacementStore, PlacementVersion } from './placements.ts';
import {
  openDiversityCounterStore,
  openPlacementStore,
  openRulesTable,
  openSnapshotStore,
  type RulesTable,
} from './rules-table.ts';
import type { PublishOutcome, SnapshotContent, SnapshotStore } from './snapshots.ts';
import type { SyncOutcome, SyncRecordStore } from './sync-records.ts';

export {
  createDynamoClient,
  createSnapshotTable,
  openRulesTable,
  openSnapshotStore,
  openPlacementStore,
  openDiversityCounterStore,
  readStoreConfig,
};
export type {
  RulesTable,
  SnapshotStore,
  SyncRecordStore,
  SnapshotContent,
  PublishOutcome,
  SyncOutcome,
  SyncLeaseStore,
  SyncLeaseAcquisition,
  HeldSyncLease,
  PlacementStore,
  DiversityCounterStore,
  PlacementVersion,
  StoreConfig,
  ClusterBindingStore,
  BindingCheck,
  RebindCheck,
};
