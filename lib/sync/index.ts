/**
 * The sync core: one cluster list into one rule snapshot, status written back, and the cadence of syncs within
 * one scheduled invocation. Independent of middy and Lambda; the adapters (cluster source, store) are injected.
 */
import { readSyncConfig } from './config.ts';
import { buildSnapshotContent } from './snapshot.ts';
import { syncOnce } from './sync.ts';
import { createSyncHandler, runSyncWindow } from './window.ts';
import type { SyncConfig } from './config.ts';
import type { SyncDependencies, SyncLogFields, SyncLogger, SyncMetrics, SyncMetricUnit, SyncReport, SyncStep } from './sync.ts';
import type {
  SyncHandler,
  SyncHandlerOptions,
  SyncInvocationContext,
  SyncInvocationResult,
  SyncWindowOptions,
} from './window.ts';

export { buildSnapshotContent, syncOnce, runSyncWindow, createSyncHandler, readSyncConfig };
export type {
  SyncConfig,
  SyncDependencies,
  SyncLogFields,
  SyncLogger,
  SyncMetrics,
  SyncMetricUnit,
  SyncReport,
  SyncStep,
  SyncHandler,
  SyncHandlerOptions,
  SyncInvocationContext,
  SyncInvocationResult,
  SyncWindowOptions,
};
