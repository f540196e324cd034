/**
 * One sync: list the cluster's PodMutations, publish the snapshot, record the attempt, write statuses back.
 * Safety first: any failure before the publish publishes nothing, so the last good snapshot stays current.
 */
import { ConfigurationError, PodMutationError } from '../errors/index.ts';
import type { LogFields, Logger, MetricUnit, Metrics } from '../observability/index.ts';
import type { PodMutationList, PodMutationSource } from '../cluster/index.ts';
import type { PublishOutcome, SnapshotStore, SyncOutcome, SyncRecordStore } from '../store/index.ts';
import { assessList, snapshotContentOf, type AssessedResource } from './snapshot.ts';
import { planStatusUpdates, type StatusUpdate } from './status.ts';

/** Structured log fields of the sync (the product's one LogFields). */
type SyncLogFields = LogFields;

/** The logging a sync needs (the product's one Logger). */
type SyncLogger = Logger;

/** CloudWatch units the sync emits. */
type SyncMetricUnit = MetricUnit;

/** The metrics a sync needs (the product's one Metrics). */
type SyncMetrics = Metrics;

/** What one sync depends on; every adapter is injected so tests run it against a real API server and DynamoDB. */
interface SyncDependencies {
  readonly source: PodMutationSource;
  readonly store: Pick<SnapshotStore, 'publish'>;
  /** Where each attempt is recorded (the table's sync item). */
  readonly records: Pick<SyncRecordStore, 'recordSync'>;
  readonly clusterId: string;
  readonly logger: SyncLogger;
  readonly metrics: SyncMetrics;
  /** Epoch milliseconds (default Date.now); drives syncedAt, status times and durationMs. */
  readonly clock?: () => number;
  /** Status patches in flight at once (default 4). */
  readonly statusConcurrency?: number;
  /** No status patch starts later than this long after the publish (default 10 000 ms); the rest wait for the next sync. */
  readonly statusBudgetMs?: number;
}

/** Where a failed sync stopped. */
type SyncStep = 'list' | 'validate' | 'publish';

/** How one sync ended; one JSON-serialisable object, logged as one line and printed by the CLI. */
interface SyncReport {
  readonly outcome: 'published' | 'unchanged' | 'failed';
  readonly startedAt: string;
  /** Resources in the list (0 when the list failed). */
  readonly resources: number;
  readonly valid: number;
  readonly invalid: number;
  /** Snapshot version current after the sync; absent when the sync failed. */
  readonly version?: number;
  /** resourceVersion of the list, when it was read. */
  readonly resourceVersion?: string;
  readonly durationMs: number;
  /** Why the sync failed (outcome failed), or why recording a successful one failed. */
  readonly error?: string;
  readonly failedStep?: SyncStep;
  /** Status writes that succeeded, failed, or were left for the next sync (budget spent, or the cluster refuses them all). */
  readonly statusPatched: number;
  readonly statusFailed: number;
  readonly statusSkipped: number;
}

/** What the status write-back did. */
interface StatusWriteResult {
  readonly patched: number;
  readonly failures: readonly { readonly name: string; readonly error: unknown }[];
  readonly skipped: number;
}

const DEFAULT_STATUS_CONCURRENCY = 4;
const DEFAULT_STATUS_BUDGET_MS = 10_000;
// Failures that would repeat for every other resource: stop patching instead of sending requests bound to fail.
const SYSTEMIC_REASONS: ReadonlySet<unknown> = new Set(['unauthorized', 'forbidden', 'network', 'timeout']);
const LOGGED_STATUS_FAILURES = 10;

/**
 * Runs one sync and reports it; rejects only with ConfigurationError for invalid options. A failed or partial
 * list, a malformed list or a failed publish publishes nothing and records the failure (lastError) without
 * touching the snapshot; a complete list with no items publishes an empty set. Statuses are written only after
 * the publish and never change its outcome.
 */
async function syncOnce(deps: SyncDependencies): Promise<SyncReport> {
  const clock = deps.clock ?? Date.now;
  const concurrency = positiveInteger(deps.statusConcurrency, 'statusConcurrency', DEFAULT_STATUS_CONCURRENCY);
  const budgetMs = positiveInteger(deps.statusBudgetMs, 'statusBudgetMs', DEFAULT_STATUS_BUDGET_MS);
  const startedMs = clock();
  const startedAt = new Date(startedMs).toISOString();
  const base = { startedAt, statusPatched: 0, statusFailed: 0, statusSkipped: 0 };

  const failed = async (step: SyncStep, error: unknown, seen: Partial<SyncReport> = {}): Promise<SyncReport> => {
    const message = messageOf(error);
    await record(deps, startedAt, { status: 'failed', error: message });
    const report: SyncReport = {
      outcome: 'failed',
      resources: 0,
      valid: 0,
      invalid: 0,
      ...seen,
      ...base,
      durationMs: clock() - startedMs,
      error: message,
      failedStep: step,
    };
    deps.logger.error('sync failed; nothing was published and the last snapshot stays current', {
      clusterId: deps.clusterId,
      ...report,
      ...errorFields(error),
    });
    emitMetrics(deps.metrics, report);
    return report;
  };

  let list: PodMutationList;
  try {
    list = await deps.source.listPodMutations();
  } catch (error) {
    return failed('list', error);
  }
  const listed = { resources: list.items.length, resourceVersion: list.resourceVersion };

  let resources: readonly AssessedResource[];
  try {
    resources = assessList(list);
  } catch (error) {
    return failed('validate', error, listed);
  }
  const content = snapshotContentOf(resources, list.resourceVersion, startedMs);
  const counts = { ...listed, valid: content.rules.length, invalid: content.invalid.length };

  let outcome: PublishOutcome;
  try {
    outcome = await deps.store.publish(deps.clusterId, content);
  } catch (error) {
    return failed('publish', error, counts);
  }
  if (outcome.cleanupError !== undefined) {
    deps.logger.warn('published; marking the superseded snapshot for expiry failed, a later publish retries it', {
      clusterId: deps.clusterId,
      version: outcome.version,
      ...errorFields(outcome.cleanupError),
    });
  }
  const status: SyncOutcome['status'] = outcome.published ? 'published' : 'unchanged';
  const recordError = await record(deps, startedAt, { status, version: outcome.version });

  const writes = await writeStatuses(deps, planStatusUpdates(resources, startedAt), {
    concurrency,
    deadlineMs: clock() + budgetMs,
    clock,
  });
  if (writes.failures.length > 0 || writes.skipped > 0) {
    deps.logger.warn('status write-back incomplete; the snapshot is published and the next sync retries', {
      clusterId: deps.clusterId,
      statusFailed: writes.failures.length,
      statusSkipped: writes.skipped,
      failures: writes.failures.slice(0, LOGGED_STATUS_FAILURES).map(({ name, error }) => ({ name, ...errorFields(error) })),
    });
  }

  const report: SyncReport = {
    outcome: status,
    ...counts,
    ...base,
    version: outcome.version,
    durationMs: clock() - startedMs,
    statusPatched: writes.patched,
    statusFailed: writes.failures.length,
    statusSkipped: writes.skipped,
    ...(recordError === undefined ? {} : { error: recordError }),
  };
  deps.logger.info(outcome.published ? 'sync published a new snapshot' : 'sync found the snapshot unchanged', {
    clusterId: deps.clusterId,
    ...report,
  });
  emitMetrics(deps.metrics, report);
  return report;
}

/** Records the attempt; a failure to record is logged and returned as a message, never thrown. */
async function record(deps: SyncDependencies, at: string, outcome: SyncOutcome): Promise<string | undefined> {
  try {
    await deps.records.recordSync(deps.clusterId, { at, outcome });
    return undefined;
  } catch (error) {
    deps.logger.error('recording the sync attempt failed; the sync item (last success time) is out of date', {
      clusterId: deps.clusterId,
      ...errorFields(error),
    });
    return `recording the sync attempt failed: ${messageOf(error)}`;
  }
}

/** Patches statuses with bounded concurrency until the deadline; stops early on a failure every patch would share. */
async function writeStatuses(
  deps: SyncDependencies,
  updates: readonly StatusUpdate[],
  limits: { readonly concurrency: number; readonly deadlineMs: number; readonly clock: () => number },
): Promise<StatusWriteResult> {
  const failures: { name: string; error: unknown }[] = [];
  let patched = 0;
  let next = 0;
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (!stopped && next < updates.length && limits.clock() < limits.deadlineMs) {
      const update = updates[next]!;
      next += 1;
      try {
        await deps.source.patchStatus(update.name, update.status);
        patched += 1;
      } catch (error) {
        failures.push({ name: update.name, error });
        if (error instanceof PodMutationError && SYSTEMIC_REASONS.has(error.context['reason'])) stopped = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limits.concurrency, updates.length) }, worker));
  return { patched, failures, skipped: updates.length - patched - failures.length };
}

function emitMetrics(metrics: SyncMetrics, report: SyncReport): void {
  const failed = report.outcome === 'failed';
  metrics.addMetric('SyncErrors', 'Count', failed ? 1 : 0);
  metrics.addMetric('SyncDurationMs', 'Milliseconds', report.durationMs);
  metrics.addMetric('SnapshotPublished', 'Count', report.outcome === 'published' ? 1 : 0);
  if (failed) return;
  metrics.addMetric('RulesSynced', 'Count', report.valid);
  metrics.addMetric('RulesInvalid', 'Count', report.invalid);
  metrics.addMetric('StatusWriteErrors', 'Count', report.statusFailed);
}

function errorFields(error: unknown): SyncLogFields {
  const name = error instanceof Error ? error.name : typeof error;
  const reason = error instanceof PodMutationError ? error.context['reason'] : undefined;
  return { errorName: name, errorMessage: messageOf(error), ...(reason === undefined ? {} : { errorReason: reason }) };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function positiveInteger(value: number | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigurationError(`sync option ${option} is ${value}; expected a positive integer`);
  }
  return value;
}

export { syncOnce };
export type { SyncDependencies, SyncLogger, SyncLogFields, SyncMetrics, SyncMetricUnit, SyncReport, SyncStep };
