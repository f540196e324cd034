/** How one sync ended: one case per outcome, logged as one line, emitted as metrics and printed by the CLI. */
import { errorLogFields, messageOf } from '../errors/index.ts';
import type { Logger, Metrics } from '../observability/index.ts';
import type { SyncOutcome, SyncRecordStore } from '../store/index.ts';

/**
 * Where a failed sync stopped: taking or renewing the lease, the cluster's identity (its kube-system uid read, or
 * refused by the cluster id's binding), the list, validation or the publish.
 */
type SyncStep = 'lease' | 'identity' | 'list' | 'validate' | 'publish';

/** What the migration report of a sync did, when one was due. */
interface ProgressReport {
  readonly pods: number;
  readonly pendingPods: number;
  /** Rules whose Schedulable condition is False: some Pod they match would go from fitting somewhere to nowhere. */
  readonly unschedulableRules: number;
  readonly statusPatched: number;
  readonly statusFailed: number;
  readonly durationMs: number;
  /** Why the report failed; the sync's own outcome never depends on it. */
  readonly error?: string;
}

/**
 * The PodPlacements a list read: how many, valid and invalid (over the snapshot budget included); `crdInstalled` false
 * when the cluster has no PodPlacement CRD (the list answered 404), read as none.
 */
interface PlacementCounts {
  readonly crdInstalled: boolean;
  readonly resources: number;
  readonly valid: number;
  readonly invalid: number;
}

/** The fields of every outcome. */
interface SyncReportBase {
  readonly startedAt: string;
  /** Resources in the list (0 when no list was read). */
  readonly resources: number;
  readonly valid: number;
  readonly invalid: number;
  readonly durationMs: number;
  /** Status writes that succeeded, failed, or were left for the next sync (budget spent, or the cluster refuses them all). */
  readonly statusPatched: number;
  readonly statusFailed: number;
  readonly statusSkipped: number;
  /** The metadata.uid of the cluster's kube-system namespace, once the sync read it: the cluster the sync stands for. */
  readonly clusterUid?: string;
  /** The PodPlacements of the list, once it was read and validated. */
  readonly placements?: PlacementCounts;
}

/** What a list read: when it started (after the lease was taken; the snapshot's syncedAt and list start) and its resourceVersion. */
interface ListedFields {
  readonly listStartedAt: string;
  readonly resourceVersion: string;
}

/** Fields another outcome has and this one never sets, so that a reader of any report may ask for them. */
type Absent<K extends string> = { readonly [P in K]?: never };

/** A sync that published a new snapshot, or found the current one unchanged. */
interface PublishedSync
  extends SyncReportBase, ListedFields, Absent<'failedStep' | 'skipReason' | 'leaseHolder' | 'leaseExpiresAt'> {
  readonly outcome: 'published' | 'unchanged';
  /** Snapshot version current after the sync. */
  readonly version: number;
  /** Set when this sync bound the cluster id to the cluster (its first publish) or re-bound it (--rebind-from). */
  readonly binding?: 'bound' | 'rebound';
  /** Why recording the attempt failed (the snapshot is published). */
  readonly error?: string;
  /** The migration report, when one was due after the publish. */
  readonly progress?: ProgressReport;
}

/** A sync skipped because another sync holds the lease. */
interface LeaseHeldSync
  extends
    SyncReportBase,
    Absent<'listStartedAt' | 'resourceVersion' | 'version' | 'error' | 'failedStep' | 'progress' | 'binding'> {
  readonly outcome: 'skipped';
  readonly skipReason: 'leaseHeld';
  /** The owner of the lease that kept this sync from running. */
  readonly leaseHolder: string;
  /** When that lease expires, by its holder's clock (ISO-8601). */
  readonly leaseExpiresAt: string;
}

/** A sync skipped because a list that started after this one is already published. */
interface SupersededSync
  extends
    SyncReportBase,
    ListedFields,
    Absent<'failedStep' | 'progress' | 'leaseHolder' | 'leaseExpiresAt' | 'binding'> {
  readonly outcome: 'skipped';
  readonly skipReason: 'superseded';
  /** The version that newer list published. */
  readonly version?: number;
  /** Which newer list superseded this one. */
  readonly error: string;
}

/** A sync that failed; nothing was published. */
interface FailedSync
  extends
    SyncReportBase,
    Partial<ListedFields>,
    Absent<'version' | 'skipReason' | 'leaseHolder' | 'leaseExpiresAt' | 'progress' | 'binding'> {
  readonly outcome: 'failed';
  readonly failedStep: SyncStep;
  readonly error: string;
}

/** How one sync ended; one JSON-serialisable object. */
type SyncReport = PublishedSync | LeaseHeldSync | SupersededSync | FailedSync;

/** What a sync has seen when it stops early: the cluster's uid and the list's counts, once they were read. */
type SeenSoFar = Partial<ListedFields> &
  Partial<Pick<SyncReportBase, 'resources' | 'valid' | 'invalid' | 'clusterUid' | 'placements'>>;

/** What the outcome builders need: where to log, count and record, and when the sync started. */
interface ReportContext {
  readonly clusterId: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly records: Pick<SyncRecordStore, 'recordSync'>;
  readonly clock: () => number;
  readonly startedMs: number;
  readonly startedAt: string;
}

const NO_STATUS = { statusPatched: 0, statusFailed: 0, statusSkipped: 0 };
const NOTHING_LISTED = { resources: 0, valid: 0, invalid: 0 };

/** The sync's metrics; the names are the ones serverless.yml's alarms read. */
function emitMetrics(metrics: Metrics, report: SyncReport): void {
  metrics.addMetric('SyncErrors', 'Count', report.outcome === 'failed' ? 1 : 0);
  metrics.addMetric('SyncSkipped', 'Count', report.outcome === 'skipped' ? 1 : 0);
  metrics.addMetric('SyncDurationMs', 'Milliseconds', report.durationMs);
  metrics.addMetric('SnapshotPublished', 'Count', report.outcome === 'published' ? 1 : 0);
  if (report.outcome === 'failed' || report.outcome === 'skipped') return;
  metrics.addMetric('RulesSynced', 'Count', report.valid);
  metrics.addMetric('RulesInvalid', 'Count', report.invalid);
  metrics.addMetric('StatusWriteErrors', 'Count', report.statusFailed);
}

/** Records the attempt; a failure to record is logged and returned as a message, never thrown. */
async function recordAttempt(context: ReportContext, at: string, outcome: SyncOutcome): Promise<string | undefined> {
  try {
    await context.records.recordSync({ at, outcome });
    return undefined;
  } catch (error) {
    context.logger.error('recording the sync attempt failed; the sync item (last success time) is out of date', {
      clusterId: context.clusterId,
      ...errorLogFields(error),
    });
    return `recording the sync attempt failed: ${messageOf(error)}`;
  }
}

/** A failed sync, recorded in the sync item, logged and counted. */
async function failedSync(
  context: ReportContext,
  step: SyncStep,
  error: unknown,
  seen: SeenSoFar = {},
): Promise<FailedSync> {
  const message = messageOf(error);
  await recordAttempt(context, seen.listStartedAt ?? context.startedAt, { status: 'failed', error: message });
  const report: FailedSync = {
    outcome: 'failed',
    ...NOTHING_LISTED,
    ...seen,
    startedAt: context.startedAt,
    ...NO_STATUS,
    durationMs: context.clock() - context.startedMs,
    error: message,
    failedStep: step,
  };
  context.logger.error('sync failed; nothing was published and the last snapshot stays current', {
    clusterId: context.clusterId,
    ...report,
    ...errorLogFields(error),
  });
  emitMetrics(context.metrics, report);
  return report;
}

/**
 * A skipped sync: not recorded in the sync item, whose last attempt stays the sync that did run (the holder, or
 * the newer list). A warning counted in SyncSkipped, not SyncErrors: one is expected whenever two syncs meet, and
 * the next sync retries.
 */
function skippedSync(
  context: ReportContext,
  message: string,
  skip:
    | Pick<LeaseHeldSync, 'skipReason' | 'leaseHolder' | 'leaseExpiresAt'>
    | (Pick<
        SupersededSync,
        'skipReason' | 'error' | 'version' | 'resources' | 'valid' | 'invalid' | 'clusterUid' | 'placements'
      > &
        ListedFields),
): LeaseHeldSync | SupersededSync {
  const { skipReason, ...seen } = skip;
  const report = {
    outcome: 'skipped',
    ...NOTHING_LISTED,
    ...seen,
    startedAt: context.startedAt,
    ...NO_STATUS,
    durationMs: context.clock() - context.startedMs,
    skipReason,
  } as LeaseHeldSync | SupersededSync;
  context.logger.warn(message, { clusterId: context.clusterId, ...report });
  emitMetrics(context.metrics, report);
  return report;
}

export { emitMetrics, recordAttempt, failedSync, skippedSync };
export type { ListedFields, PlacementCounts, ProgressReport, PublishedSync, ReportContext, SyncReport, SyncStep };
