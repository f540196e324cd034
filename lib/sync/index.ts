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
import { createSyncHandler } from './window.ts';
import type { ProgressDependencies } from './progress.ts';
import type { SyncDependencies, SyncReport } from './sync.ts';

export { buildSnapshotContent, foldClusterObjects, listAndValidate, syncOnce, createSyncHandler, readSyncConfig };
export type { ProgressDependencies, SyncDependencies, SyncReport };
