/**
 * The sync core: one cluster list into one rule snapshot under the cluster's sync lease, status written back, and
 * the cadence of syncs within one scheduled invocation. Independent of middy and Lambda; the adapters (cluster
 * source, store, lease) are injected.
 */
import { readSyncConfig } from './config.ts';
import { listAndValidate } from './list-step.ts';
import { foldClusterObjects } from './progress.ts';
import { buildSnapshotContent } from './snapshot.ts';
import { syncOnce } from './sync.ts';
import { createSyncHandler, runSyncWindow } from './window.ts';
import type { SyncConfig } from './config.ts';
import type { ListedRules } from './list-step.ts';
import type { ProgressDependencies } from './progress.ts';
import type {
  ProgressReport,
  SyncBinding,
  SyncDependencies,
  SyncLeaseOptions,
  SyncReport,
  SyncSkipReason,
  SyncStep,
} from './sync.ts';
import type {
  SyncHandler,
  SyncHandlerOptions,
  SyncInvocationContext,
  SyncInvocationResult,
  SyncWindowOptions,
} from './window.ts';

export {
  buildSnapshotContent,
  foldClusterObjects,
  listAndValidate,
  syncOnce,
  runSyncWindow,
  createSyncHandler,
  readSyncConfig,
};
export type {
  ListedRules,
  ProgressDependencies,
  ProgressReport,
  SyncBinding,
  SyncConfig,
  SyncDependencies,
  SyncLeaseOptions,
  SyncReport,
  SyncSkipReason,
  SyncStep,
  SyncHandler,
  SyncHandlerOptions,
  SyncInvocationContext,
  SyncInvocationResult,
  SyncWindowOptions,
};
