/**
 * One sync: take the cluster's sync lease, read the cluster's identity, list the cluster's PodMutations and
 * PodPlacements, confirm the cluster id's binding to that identity and publish the snapshot, record the attempt, write
 * statuses back, release the lease. Safety first: any failure before the publish publishes nothing, so the last good snapshot stays current; a
 * sync of a cluster the cluster id is not bound to fails; a sync that finds the lease held, or a newer list already
 * published, is skipped. Each step is its own module (lease, identity-step, list-step, publish-step,
 * status-writes, progress-step); this one orders them.
 */
import type { NormalizedRule } from '../api/index.ts';
import { Capacity } from '../capacity/index.ts';
import { integerOption } from '../config/index.ts';
import type { PodMutationSource } from '../cluster/index.ts';
import type { Logger, Metrics } from '../observability/index.ts';
import type { SnapshotStore, SyncOutcome, SyncRecordStore } from '../store/index.ts';
import type { JsonObject } from '../json/index.ts';
import { checkedLease, HeldLease, type CheckedLease, type HeldElsewhere, type SyncLeaseOptions } from './lease.ts';
import { confirmIdentity, type BindingChange, type SyncBinding } from './identity-step.ts';
import { listAndValidate, type ListedRules } from './list-step.ts';
import type { AssessedResource } from './snapshot.ts';
import { publishedCapacity, type CapacityReader } from './capacity-step.ts';
import type { ProgressDependencies } from './progress.ts';
import { reportProgress } from './progress-step.ts';
import { publishListed, warnPublished } from './publish-step.ts';
import {
  emitMetrics,
  failedSync,
  recordAttempt,
  skippedSync,
  type PublishedSync,
  type ReportContext,
  type SyncReport,
} from './sync-report.ts';
import { additionsCondition, type SchedulableFields } from './schedulable.ts';
import { planPlacementStatusUpdates, planStatusUpdates, withStatusUpdates } from './status.ts';
import { warnIncomplete, writeStatuses } from './status-writes.ts';

/** What one sync depends on; every adapter is injected so tests run it against a real API server and DynamoDB. */
interface SyncDependencies {
  readonly source: PodMutationSource;
  /** The cluster's snapshots (openRulesTable's, bound to clusterId). */
  readonly store: Pick<SnapshotStore, 'publish'>;
  /** Where each attempt is recorded (the table's sync item). */
  readonly records: Pick<SyncRecordStore, 'recordSync'>;
  /** The cluster id's binding to one cluster: the sync publishes only for the cluster its cluster id is bound to. */
  readonly binding: SyncBinding;
  /** The sync lease; without it (the local server, sole writer of its own table) the sync takes none. */
  readonly lease?: SyncLeaseOptions;
  /** The cluster the stores are bound to, for logs and messages. */
  readonly clusterId: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Epoch milliseconds (default Date.now); drives syncedAt, status times and durationMs. */
  readonly clock?: () => number;
  /** Status patches in flight at once (default 4). */
  readonly statusConcurrency?: number;
  /** No status patch starts later than this long after the publish (default 10 000 ms); the rest wait for the next sync. */
  readonly statusBudgetMs?: number;
  /** Migration progress on each rule's status every few minutes (reportIntervalMinutes); absent: none. */
  readonly progress?: ProgressDependencies;
  /** The cluster's Nodes and NodePools, published in the snapshot for admission; absent: the snapshot carries none. */
  readonly capacity?: CapacityReader;
}

/** One sync's dependencies with its options checked, and its start. */
interface SyncRun extends ReportContext {
  readonly deps: SyncDependencies;
  readonly limits: { readonly concurrency: number; readonly budgetMs: number };
}

const DEFAULT_STATUS_CONCURRENCY = 4;
const DEFAULT_STATUS_BUDGET_MS = 10_000;

/**
 * Runs one sync and reports it; rejects only with ConfigurationError for invalid options. With a lease, the sync
 * first takes the cluster's sync lease (waiting up to lease.waitMs) and is skipped when another sync holds it; the
 * lease is renewed before the publish and released at the end. A cluster whose kube-system uid cannot be read, or
 * is not the one the cluster id is bound to (binding), a failed or partial list, a malformed list or a failed
 * publish publishes nothing and records the failure (lastError) without touching the snapshot; a complete
 * list with no items publishes an empty set; a list older than the published one is skipped. Statuses are written
 * only after the publish and never change its outcome.
 */
async function syncOnce(deps: SyncDependencies): Promise<SyncReport> {
  const clock = deps.clock ?? Date.now;
  const limits = {
    concurrency: integerOption(deps.statusConcurrency, 'sync option statusConcurrency', {
      fallback: DEFAULT_STATUS_CONCURRENCY,
      minimum: 1,
    }),
    budgetMs: integerOption(deps.statusBudgetMs, 'sync option statusBudgetMs', {
      fallback: DEFAULT_STATUS_BUDGET_MS,
      minimum: 1,
    }),
  };
  const lease = deps.lease === undefined ? undefined : checkedLease(deps.lease);
  const startedMs = clock();
  const run: SyncRun = {
    deps,
    limits,
    clusterId: deps.clusterId,
    logger: deps.logger,
    metrics: deps.metrics,
    records: deps.records,
    clock,
    startedMs,
    startedAt: new Date(startedMs).toISOString(),
  };
  return lease === undefined ? listAndPublish(run, undefined) : underLease(run, lease);
}

/** Takes the lease, runs the sync holding it, releases it; skipped while another sync holds it. */
async function underLease(run: SyncRun, lease: CheckedLease): Promise<SyncReport> {
  let held: HeldLease | HeldElsewhere;
  try {
    held = await HeldLease.take(lease, { clock: run.clock, logger: run.logger, clusterId: run.clusterId });
  } catch (error) {
    return failedSync(run, 'lease', error);
  }
  if (!(held instanceof HeldLease)) {
    return skippedSync(run, 'sync skipped: another sync holds the sync lease of the cluster; the next sync retries', {
      skipReason: 'leaseHeld',
      leaseHolder: held.holder.owner,
      leaseExpiresAt: held.holder.expiresAt,
    });
  }
  try {
    return await listAndPublish(run, held);
  } finally {
    await held.release();
  }
}

/** List, validate, read the identity, publish for the bound cluster, then record and write statuses, holding the lease when there is one. */
async function listAndPublish(run: SyncRun, held: HeldLease | undefined): Promise<SyncReport> {
  const { capacity: reader } = run.deps;
  // Read beside the list; the capacity step never rejects.
  const [rules, capacity] = await Promise.all([
    listAndValidate(run.deps.source, run.clock),
    reader === undefined ? undefined : publishedCapacity(reader, run),
  ]);
  if (!('content' in rules)) return failedSync(run, rules.failedStep, rules.error, rules.seen);
  warnPlacementsUninstalled(run, rules.counts.placements.crdInstalled);
  const listed = capacity === undefined ? rules : { ...rules, content: { ...rules.content, capacity } };
  let clusterUid: string;
  try {
    // After the list, so that a cluster out of reach fails the list as before; the uid never changes while a cluster lives.
    clusterUid = await run.deps.source.readClusterUid();
  } catch (error) {
    return failedSync(run, 'identity', error, listed.counts);
  }
  const seen = { ...listed.counts, clusterUid };
  const published = await publishListed(run.deps.store, listed, held, () =>
    confirmIdentity(run.deps.binding, run.clusterId, clusterUid),
  );
  if (published.kind === 'failed') return failedSync(run, published.failedStep, published.error, seen);
  if (published.kind === 'superseded') {
    return skippedSync(run, 'sync skipped: a list that started after this one is already published', {
      skipReason: 'superseded',
      ...seen,
      ...(published.version === undefined ? {} : { version: published.version }),
      error: published.error.message,
    });
  }
  warnPublished(run.logger, run.clusterId, published.outcome);
  const status: SyncOutcome['status'] = published.outcome.published ? 'published' : 'unchanged';
  return afterPublish(run, { ...listed, clusterUid, binding: published.binding }, status, published.outcome.version);
}

/** Warns, once per sync, that the cluster has no PodPlacement CRD: the sync publishes none, and goes on. */
function warnPlacementsUninstalled(run: SyncRun, crdInstalled: boolean): void {
  if (crdInstalled) return;
  run.logger.warn(
    'the cluster has no PodPlacement CRD (listing podplacements answered 404); synced no PodPlacement. Apply infra/ (kubectl apply -k) to install it',
    { clusterId: run.clusterId },
  );
}

/**
 * While the migration report is off (and the sync reads a capacity), the status step writes each rule's Schedulable
 * condition from what the rule adds, judged against the capacity this sync published; the report owns it otherwise.
 */
function schedulableOf(run: SyncRun, published: JsonObject | undefined) {
  if (run.deps.progress !== undefined || run.deps.capacity === undefined) return undefined;
  // Read back through the boundary admission reads it with, as the report does.
  const capacity = published === undefined ? undefined : Capacity.fromPublished(published, 'the published capacity');
  const judged = new Map<string, SchedulableFields>();
  return (rule: NormalizedRule): SchedulableFields => {
    let fields = judged.get(rule.name);
    if (fields === undefined) judged.set(rule.name, (fields = additionsCondition(rule, capacity)));
    return fields;
  };
}

/** UnschedulableRules of a sync that judged what each rule adds: the enabled valid rules whose condition is False. */
function emitUnschedulableRules(
  run: SyncRun,
  resources: readonly AssessedResource[],
  schedulable: (rule: NormalizedRule) => SchedulableFields,
): void {
  const rules = resources.flatMap(({ verdict }) => (verdict.valid && verdict.rule.enable ? [verdict.rule] : []));
  run.metrics.addMetric(
    'UnschedulableRules',
    'Count',
    rules.filter((rule) => schedulable(rule).status === 'False').length,
  );
}

/** Records the attempt, writes statuses and the migration progress, and reports the sync. */
async function afterPublish(
  run: SyncRun,
  listed: ListedRules & { readonly clusterUid: string; readonly binding: BindingChange },
  status: PublishedSync['outcome'],
  version: number,
): Promise<PublishedSync> {
  const { deps, clock, limits } = run;
  const { listStartedAt } = listed.counts;
  const recordError = await recordAttempt(run, listStartedAt, { status, version });
  const schedulable = schedulableOf(run, listed.content.capacity);
  const updates = planStatusUpdates(listed.resources, listStartedAt, schedulable);
  const placementUpdates = planPlacementStatusUpdates(listed.placements, listStartedAt);
  if (schedulable !== undefined) emitUnschedulableRules(run, listed.resources, schedulable);
  const writes = await writeStatuses(deps.source, [...updates, ...placementUpdates], {
    concurrency: limits.concurrency,
    deadlineMs: clock() + limits.budgetMs,
    clock,
  });
  warnIncomplete(run.logger, run.clusterId, writes);
  // The progress step writes conditions too, and a merge patch replaces the array: it starts from the statuses just planned.
  const progress =
    deps.progress === undefined
      ? undefined
      : await reportProgress(
          { ...run, source: deps.source },
          deps.progress,
          {
            resources: withStatusUpdates(listed.resources, updates),
            placements: withStatusUpdates(listed.placements, placementUpdates, 'PodPlacement'),
          },
          listed.content,
        );
  const report: PublishedSync = {
    outcome: status,
    ...listed.counts,
    clusterUid: listed.clusterUid,
    ...(listed.binding === 'unchanged' ? {} : { binding: listed.binding }),
    startedAt: run.startedAt,
    version,
    durationMs: clock() - run.startedMs,
    statusPatched: writes.patched,
    statusFailed: writes.failures.length,
    statusSkipped: writes.skipped,
    ...(recordError === undefined ? {} : { error: recordError }),
    ...(progress === undefined ? {} : { progress }),
  };
  run.logger.info(status === 'published' ? 'sync published a new snapshot' : 'sync found the snapshot unchanged', {
    clusterId: run.clusterId,
    ...report,
  });
  emitMetrics(run.metrics, report);
  return report;
}

export { syncOnce };
export type { SyncDependencies, SyncReport };
