/**
 * One sync: take the cluster's sync lease, list the cluster's PodMutations, publish the snapshot, record the attempt,
 * write statuses back, release the lease. Safety first: any failure before the publish publishes nothing, so the
 * last good snapshot stays current; a sync that finds the lease held, or a newer list already published, is skipped.
 */
import { ConfigurationError, messageOf, PodMutationError, StoreError } from '../errors/index.ts';
import type { LogFields, Logger, Metrics } from '../observability/index.ts';
import type { PodMutationList, PodMutationSource } from '../cluster/index.ts';
import type {
  HeldSyncLease,
  PublishOutcome,
  SnapshotStore,
  SyncLeaseAcquisition,
  SyncLeaseStore,
  SyncOutcome,
  SyncRecordStore,
} from '../store/index.ts';
import { assessList, snapshotContentOf, type AssessedResource } from './snapshot.ts';
import { listedInvalidRules, type NormalizedRule } from '../api/index.ts';
import { compileRuleSet } from '../engine/index.ts';
import {
  computeProgress,
  pendingMetricRules,
  planProgressUpdates,
  progressDue,
  progressOf,
  type ProgressDependencies,
} from './progress.ts';
import { planStatusUpdates } from './status.ts';

/** Structured log fields of the sync (the product's one LogFields). */
type SyncLogFields = LogFields;

/** The logging a sync needs (the product's one Logger). */
type SyncLogger = Logger;

/** The metrics a sync needs (the product's one Metrics). */
type SyncMetrics = Metrics;

/** The sync lease a sync holds from before its list until after its status writes: one sync at a time per cluster. */
interface SyncLeaseOptions {
  readonly leases: Pick<SyncLeaseStore, 'acquire' | 'renew' | 'release'>;
  /** Who this sync is, for people: `lambda:<request id>`, `cli:<host>:<pid>`. */
  readonly owner: string;
  /** How long to wait for a lease another sync holds, in milliseconds (default 0: skip at once). */
  readonly waitMs?: number;
  /** Time between attempts while waiting (default 1 000 ms). */
  readonly pollMs?: number;
  /** Default: a timer. */
  readonly sleep?: (milliseconds: number) => Promise<void>;
}

/** What one sync depends on; every adapter is injected so tests run it against a real API server and DynamoDB. */
interface SyncDependencies {
  readonly source: PodMutationSource;
  readonly store: Pick<SnapshotStore, 'publish'>;
  /** Where each attempt is recorded (the table's sync item). */
  readonly records: Pick<SyncRecordStore, 'recordSync'>;
  /** The sync lease; without it (the local server, sole writer of its own table) the sync takes none. */
  readonly lease?: SyncLeaseOptions;
  readonly clusterId: string;
  readonly logger: SyncLogger;
  readonly metrics: SyncMetrics;
  /** Epoch milliseconds (default Date.now); drives syncedAt, status times and durationMs. */
  readonly clock?: () => number;
  /** Status patches in flight at once (default 4). */
  readonly statusConcurrency?: number;
  /** No status patch starts later than this long after the publish (default 10 000 ms); the rest wait for the next sync. */
  readonly statusBudgetMs?: number;
  /** Migration progress on each rule's status every few minutes (reportIntervalMinutes); absent: none. */
  readonly progress?: ProgressDependencies;
}

/** What the migration report of a sync did, when one was due. */
interface ProgressReport {
  readonly pods: number;
  readonly pendingPods: number;
  readonly statusPatched: number;
  readonly statusFailed: number;
  readonly durationMs: number;
  /** Why the report failed; the sync's own outcome never depends on it. */
  readonly error?: string;
}

/** Where a failed sync stopped: taking or renewing the lease, the list, validation or the publish. */
type SyncStep = 'lease' | 'list' | 'validate' | 'publish';

/** Why a sync was skipped: another sync holds the lease, or a list that started later is already published. */
type SyncSkipReason = 'leaseHeld' | 'superseded';

/** How one sync ended; one JSON-serialisable object, logged as one line and printed by the CLI. */
interface SyncReport {
  readonly outcome: 'published' | 'unchanged' | 'skipped' | 'failed';
  readonly startedAt: string;
  /** When the list started (after the lease was taken); the snapshot's syncedAt and list start. */
  readonly listStartedAt?: string;
  /** Resources in the list (0 when the list failed). */
  readonly resources: number;
  readonly valid: number;
  readonly invalid: number;
  /** Snapshot version current after the sync; absent when the sync failed. */
  readonly version?: number;
  /** resourceVersion of the list, when it was read. */
  readonly resourceVersion?: string;
  readonly durationMs: number;
  /** Why the sync failed (outcome failed), why recording a successful one failed, or which newer list superseded it. */
  readonly error?: string;
  readonly failedStep?: SyncStep;
  /** Why the sync published nothing although nothing failed (outcome skipped). */
  readonly skipReason?: SyncSkipReason;
  /** The owner of the lease that kept this sync from running (skipReason leaseHeld). */
  readonly leaseHolder?: string;
  /** When that lease expires, by its holder's clock (ISO-8601). */
  readonly leaseExpiresAt?: string;
  /** Status writes that succeeded, failed, or were left for the next sync (budget spent, or the cluster refuses them all). */
  readonly statusPatched: number;
  readonly statusFailed: number;
  readonly statusSkipped: number;
  /** The migration report, when one was due after the publish. */
  readonly progress?: ProgressReport;
}

/** What the status write-back did. */
interface StatusWriteResult {
  readonly patched: number;
  readonly failures: readonly { readonly name: string; readonly error: unknown }[];
  readonly skipped: number;
}

const DEFAULT_STATUS_CONCURRENCY = 4;
const DEFAULT_LEASE_POLL_MS = 1_000;
const DEFAULT_STATUS_BUDGET_MS = 10_000;
// Failures that would repeat for every other resource: stop patching instead of sending requests bound to fail.
const SYSTEMIC_REASONS: ReadonlySet<unknown> = new Set(['unauthorized', 'forbidden', 'network', 'timeout']);
const LOGGED_STATUS_FAILURES = 10;

/**
 * Runs one sync and reports it; rejects only with ConfigurationError for invalid options. With a lease, the sync
 * first takes the cluster's sync lease (waiting up to lease.waitMs) and is skipped when another sync holds it; the
 * lease is renewed before the publish and released at the end. A failed or partial list, a malformed list or a
 * failed publish publishes nothing and records the failure (lastError) without touching the snapshot; a complete
 * list with no items publishes an empty set; a list older than the published one is skipped. Statuses are written
 * only after the publish and never change its outcome.
 */
async function syncOnce(deps: SyncDependencies): Promise<SyncReport> {
  const clock = deps.clock ?? Date.now;
  const limits = {
    concurrency: positiveInteger(deps.statusConcurrency, 'statusConcurrency', DEFAULT_STATUS_CONCURRENCY),
    budgetMs: positiveInteger(deps.statusBudgetMs, 'statusBudgetMs', DEFAULT_STATUS_BUDGET_MS),
  };
  const lease = deps.lease === undefined ? undefined : checkedLease(deps.lease);
  const run = syncRun(deps, clock, clock());
  if (lease === undefined) return listAndPublish(run, limits, undefined);

  let taken: SyncLeaseAcquisition;
  try {
    taken = await takeLease(lease, deps.clusterId, clock);
  } catch (error) {
    return run.failed('lease', error);
  }
  if (!taken.acquired) {
    const { holder } = taken;
    return run.skipped(
      'leaseHeld',
      'sync skipped: another sync holds the sync lease of the cluster; the next sync retries',
      {
        leaseHolder: holder.owner,
        leaseExpiresAt: holder.expiresAt,
      },
    );
  }
  if (taken.untrusted !== undefined) {
    deps.logger.warn(
      'took over a sync lease whose expiry lay too far ahead to honour; the clock of the sync that took it runs ahead',
      {
        clusterId: deps.clusterId,
        leaseHolder: taken.untrusted.owner,
        leaseExpiresAt: taken.untrusted.expiresAt,
        aheadMs: taken.untrusted.aheadMs,
      },
    );
  }
  const held = { lease: taken.lease };
  try {
    return await listAndPublish(run, limits, held);
  } finally {
    await releaseLease(deps, lease, held.lease);
  }
}

/** One sync's start and the builders of its early outcomes; each is logged once, emitted as metrics and returned. */
interface SyncRun {
  readonly deps: SyncDependencies;
  readonly clock: () => number;
  readonly startedMs: number;
  readonly startedAt: string;
  /** A failed sync, recorded in the sync item. */
  failed(step: SyncStep, error: unknown, seen?: Partial<SyncReport>): Promise<SyncReport>;
  /**
   * A skipped sync: not recorded in the sync item, whose last attempt stays the sync that did run (the holder, or
   * the newer list). A warning counted in SyncSkipped, not SyncErrors: one is expected whenever two syncs meet, and
   * the next sync retries.
   */
  skipped(reason: SyncSkipReason, message: string, seen: Partial<SyncReport>): SyncReport;
}

function syncRun(deps: SyncDependencies, clock: () => number, startedMs: number): SyncRun {
  const startedAt = new Date(startedMs).toISOString();
  const base = { startedAt, statusPatched: 0, statusFailed: 0, statusSkipped: 0 };
  const empty = { resources: 0, valid: 0, invalid: 0 };
  return {
    deps,
    clock,
    startedMs,
    startedAt,
    async failed(step, error, seen = {}) {
      const message = messageOf(error);
      await record(deps, seen.listStartedAt ?? startedAt, { status: 'failed', error: message });
      const report: SyncReport = {
        outcome: 'failed',
        ...empty,
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
    },
    skipped(reason, message, seen) {
      const report: SyncReport = {
        outcome: 'skipped',
        ...empty,
        ...seen,
        ...base,
        durationMs: clock() - startedMs,
        skipReason: reason,
      };
      deps.logger.warn(message, { clusterId: deps.clusterId, ...report });
      emitMetrics(deps.metrics, report);
      return report;
    },
  };
}

/** List, validate, publish, record and write statuses, holding the lease when there is one. */
async function listAndPublish(
  run: SyncRun,
  limits: { readonly concurrency: number; readonly budgetMs: number },
  held: { lease: HeldSyncLease } | undefined,
): Promise<SyncReport> {
  const { deps, clock } = run;
  // The list starts inside the lease: a sync that waited for it lists what the cluster holds after the holder's publish.
  const listStartedMs = clock();
  const listStartedAt = new Date(listStartedMs).toISOString();

  let list: PodMutationList;
  try {
    list = await deps.source.listPodMutations();
  } catch (error) {
    return run.failed('list', error, { listStartedAt });
  }
  const listed = { listStartedAt, resources: list.items.length, resourceVersion: list.resourceVersion };

  let resources: readonly AssessedResource[];
  try {
    resources = assessList(list);
  } catch (error) {
    return run.failed('validate', error, listed);
  }
  const content = snapshotContentOf(resources, list.resourceVersion, listStartedMs);
  const counts = { ...listed, valid: content.rules.length, invalid: content.invalid.length };

  if (held !== undefined && deps.lease !== undefined) {
    // Renewing proves that no other sync took the lease during the list (its holder id is still ours) and covers the publish.
    try {
      held.lease = await deps.lease.leases.renew(held.lease);
    } catch (error) {
      return run.failed('lease', error, counts);
    }
  }

  let outcome: PublishOutcome;
  try {
    outcome = await deps.store.publish(
      deps.clusterId,
      { ...content, invalid: listedInvalidRules(content.invalid) },
      { listStartedAt: listStartedMs },
    );
  } catch (error) {
    if (error instanceof StoreError && error.context['reason'] === 'superseded') {
      const version = error.context['version'];
      return run.skipped('superseded', 'sync skipped: a list that started after this one is already published', {
        ...counts,
        ...(typeof version === 'number' ? { version } : {}),
        error: error.message,
      });
    }
    return run.failed('publish', error, counts);
  }
  if (outcome.untrustedListStart !== undefined) {
    deps.logger.warn(
      "replaced a snapshot whose list start lay too far ahead of the table's clock; the clock of the sync that published it runs ahead",
      {
        clusterId: deps.clusterId,
        version: outcome.version,
        untrustedListStartedAt: outcome.untrustedListStart.listStartedAt,
        aheadMs: outcome.untrustedListStart.aheadMs,
      },
    );
  }
  if (outcome.cleanupError !== undefined) {
    deps.logger.warn('published; marking the superseded snapshot for expiry failed, a later publish retries it', {
      clusterId: deps.clusterId,
      version: outcome.version,
      ...errorFields(outcome.cleanupError),
    });
  }
  const status: SyncOutcome['status'] = outcome.published ? 'published' : 'unchanged';
  const recordError = await record(deps, listStartedAt, { status, version: outcome.version });

  const writes = await writeStatuses(deps, planStatusUpdates(resources, listStartedAt), {
    concurrency: limits.concurrency,
    deadlineMs: clock() + limits.budgetMs,
    clock,
  });
  if (writes.failures.length > 0 || writes.skipped > 0) {
    deps.logger.warn('status write-back incomplete; the snapshot is published and the next sync retries', {
      clusterId: deps.clusterId,
      statusFailed: writes.failures.length,
      statusSkipped: writes.skipped,
      failures: writes.failures
        .slice(0, LOGGED_STATUS_FAILURES)
        .map(({ name, error }) => ({ name, ...errorFields(error) })),
    });
  }

  const progress =
    deps.progress === undefined
      ? undefined
      : await reportProgress(deps, deps.progress, resources, content.rules, limits);

  const report: SyncReport = {
    outcome: status,
    ...counts,
    startedAt: run.startedAt,
    version: outcome.version,
    durationMs: clock() - run.startedMs,
    statusPatched: writes.patched,
    statusFailed: writes.failures.length,
    statusSkipped: writes.skipped,
    ...(recordError === undefined ? {} : { error: recordError }),
    ...(progress === undefined ? {} : { progress }),
  };
  deps.logger.info(outcome.published ? 'sync published a new snapshot' : 'sync found the snapshot unchanged', {
    clusterId: deps.clusterId,
    ...report,
  });
  emitMetrics(deps.metrics, report);
  return report;
}

/**
 * The migration report, when due: list Pods and owners, compute what a rollout would change under the rules just
 * published, write each rule's counts where they changed, record the time. A failure is logged and counted
 * (ReportErrors) and never changes the sync's outcome; the next sync tries again, since no time was recorded.
 */
async function reportProgress(
  deps: SyncDependencies,
  progress: ProgressDependencies,
  resources: readonly AssessedResource[],
  rules: readonly NormalizedRule[],
  limits: { readonly concurrency: number; readonly budgetMs: number },
): Promise<ProgressReport | undefined> {
  const clock = deps.clock ?? Date.now;
  const startedMs = clock();
  try {
    if (!(await progressDue(progress, deps.clusterId, startedMs))) return undefined;
    const migration = await computeProgress(progress, compileRuleSet(rules));
    const reportTime = new Date(startedMs).toISOString();
    const counts = progressOf(migration);
    const writes = await writeStatuses(deps, planProgressUpdates(resources, counts, reportTime), {
      concurrency: limits.concurrency,
      deadlineMs: clock() + limits.budgetMs,
      clock,
    });
    // Recorded only when every write landed: otherwise the next sync reports again rather than in an interval.
    if (writes.failures.length === 0 && writes.skipped === 0)
      await progress.records.recordReport(deps.clusterId, reportTime);
    for (const [rule, pending] of pendingMetricRules(counts)) progress.pendingPodsMetric?.(rule, pending);
    deps.metrics.addMetric('ReportErrors', 'Count', 0);
    deps.metrics.addMetric('PendingPodsTotal', 'Count', migration.totals.pending);
    return {
      pods: migration.totals.pods,
      pendingPods: migration.totals.pending,
      statusPatched: writes.patched,
      statusFailed: writes.failures.length,
      durationMs: clock() - startedMs,
    };
  } catch (error) {
    deps.metrics.addMetric('ReportErrors', 'Count', 1);
    deps.logger.warn('the migration report failed; rule statuses keep their last progress and the next sync retries', {
      clusterId: deps.clusterId,
      ...errorFields(error),
    });
    return {
      pods: 0,
      pendingPods: 0,
      statusPatched: 0,
      statusFailed: 0,
      durationMs: clock() - startedMs,
      error: messageOf(error),
    };
  }
}

/** Lease options with every default filled in and checked. */
type CheckedLease = SyncLeaseOptions & Required<Pick<SyncLeaseOptions, 'waitMs' | 'pollMs' | 'sleep'>>;

function checkedLease(lease: SyncLeaseOptions): CheckedLease {
  const waitMs = lease.waitMs ?? 0;
  if (!Number.isInteger(waitMs) || waitMs < 0)
    throw new ConfigurationError(`sync option lease.waitMs is ${waitMs}; expected a whole number of milliseconds`);
  return {
    ...lease,
    waitMs,
    pollMs: positiveInteger(lease.pollMs, 'lease.pollMs', DEFAULT_LEASE_POLL_MS),
    sleep: lease.sleep ?? ((milliseconds: number) => new Promise<void>((resolve) => setTimeout(resolve, milliseconds))),
  };
}

/** Takes the lease, trying again every pollMs (or when the holder's lease runs out, if sooner) until waitMs has passed. */
async function takeLease(lease: CheckedLease, clusterId: string, clock: () => number): Promise<SyncLeaseAcquisition> {
  const deadline = clock() + lease.waitMs;
  for (;;) {
    const attempt = await lease.leases.acquire(clusterId, lease.owner);
    const now = clock();
    if (attempt.acquired || now >= deadline) return attempt;
    const untilExpiry = Date.parse(attempt.holder.expiresAt) - now + 1;
    await lease.sleep(Math.max(1, Math.min(lease.pollMs, deadline - now, untilExpiry)));
  }
}

/** Releases the lease; a failure is logged, never thrown: the lease then frees itself when it expires. */
async function releaseLease(deps: SyncDependencies, lease: SyncLeaseOptions, held: HeldSyncLease): Promise<void> {
  try {
    if (!(await lease.leases.release(held))) {
      deps.logger.warn('the sync lease was taken over before this sync released it; the sync outlasted its lease', {
        clusterId: deps.clusterId,
        owner: held.owner,
      });
    }
  } catch (error) {
    deps.logger.warn('releasing the sync lease failed; it frees itself when it expires', {
      clusterId: deps.clusterId,
      owner: held.owner,
      leaseExpiresAt: held.expiresAt,
      ...errorFields(error),
    });
  }
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
  updates: readonly { readonly name: string; readonly status: object }[],
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
  metrics.addMetric('SyncErrors', 'Count', report.outcome === 'failed' ? 1 : 0);
  metrics.addMetric('SyncSkipped', 'Count', report.outcome === 'skipped' ? 1 : 0);
  metrics.addMetric('SyncDurationMs', 'Milliseconds', report.durationMs);
  metrics.addMetric('SnapshotPublished', 'Count', report.outcome === 'published' ? 1 : 0);
  if (report.outcome === 'failed' || report.outcome === 'skipped') return;
  metrics.addMetric('RulesSynced', 'Count', report.valid);
  metrics.addMetric('RulesInvalid', 'Count', report.invalid);
  metrics.addMetric('StatusWriteErrors', 'Count', report.statusFailed);
}

function errorFields(error: unknown): SyncLogFields {
  const name = error instanceof Error ? error.name : typeof error;
  const reason = error instanceof PodMutationError ? error.context['reason'] : undefined;
  return { errorName: name, errorMessage: messageOf(error), ...(reason === undefined ? {} : { errorReason: reason }) };
}

function positiveInteger(value: number | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigurationError(`sync option ${option} is ${value}; expected a positive integer`);
  }
  return value;
}

export { syncOnce };
export type {
  ProgressReport,
  SyncDependencies,
  SyncLeaseOptions,
  SyncLogger,
  SyncLogFields,
  SyncMetrics,
  SyncReport,
  SyncSkipReason,
  SyncStep,
};
