/** The progress step of a sync: the migration report, when due, written on each rule's and PodPlacement's status. */
import type { NormalizedPlacement, NormalizedRule } from '../api/index.ts';
import { Capacity } from '../capacity/index.ts';
import type { PodMutationSource } from '../cluster/index.ts';
import { compileRuleSet } from '../engine/index.ts';
import { errorLogFields, messageOf } from '../errors/index.ts';
import type { Logger, Metrics } from '../observability/index.ts';
import {
  computeProgress,
  pendingMetricRules,
  planPlacementProgressUpdates,
  planProgressUpdates,
  progressDue,
  progressOf,
  type ProgressDependencies,
} from './progress.ts';
import type { ProgressReport } from './sync-report.ts';
import type { AssessedPlacement, AssessedResource } from './snapshot.ts';
import { writeStatuses } from './status-writes.ts';

/** What the progress step needs of the sync. */
interface ProgressContext {
  readonly clusterId: string;
  readonly source: Pick<PodMutationSource, 'patchStatus'>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly clock: () => number;
  readonly limits: { readonly concurrency: number; readonly budgetMs: number };
}

/** What the sync just published: its rules and PodPlacements, and its capacity (Capacity.published(); absent: none was read). */
interface PublishedContent {
  readonly rules: readonly NormalizedRule[];
  readonly placements?: readonly NormalizedPlacement[];
  readonly capacity?: unknown;
}

/** The resources the report writes on: the listed PodMutations and PodPlacements, with the statuses just planned. */
interface ListedResources {
  readonly resources: readonly AssessedResource[];
  readonly placements: readonly AssessedPlacement[];
}

/**
 * The migration report, when due: list Pods and owners, compute what a rollout would change under the rules and
 * PodPlacements just published, each changed Pod judged against the capacity published with them, write each rule's
 * counts and Schedulable condition and each PodPlacement's counts where they changed, record the time. A failure is logged and counted (ReportErrors) and never
 * changes the sync's outcome; the next sync tries again, since no time was recorded.
 */
async function reportProgress(
  context: ProgressContext,
  progress: ProgressDependencies,
  listed: ListedResources,
  published: PublishedContent,
): Promise<ProgressReport | undefined> {
  const { clock, metrics, limits } = context;
  const startedMs = clock();
  try {
    if (!(await progressDue(progress, startedMs))) return undefined;
    // Read back through the boundary admission reads it with, so that the report judges what admission judges.
    const capacity =
      published.capacity === undefined
        ? Capacity.unknown()
        : Capacity.fromPublished(published.capacity, 'the published capacity');
    const computed = await computeProgress(
      progress,
      { ruleSet: compileRuleSet(published.rules), capacity, placements: published.placements ?? [] },
      (message) => context.logger.warn(message, { clusterId: context.clusterId }),
    );
    const { migration } = computed;
    const reportTime = new Date(startedMs).toISOString();
    const counts = progressOf(migration, {
      capacityKnown: capacity.known,
      skipRules: new Set(published.rules.filter((rule) => rule.ifUnschedulable === 'skip').map((rule) => rule.name)),
    });
    const updates = [
      ...planProgressUpdates(listed.resources, counts, reportTime),
      ...planPlacementProgressUpdates(listed.placements, computed.placements, reportTime),
    ];
    const writes = await writeStatuses(context.source, updates, {
      concurrency: limits.concurrency,
      deadlineMs: clock() + limits.budgetMs,
      clock,
    });
    // Recorded only when every write landed: otherwise the next sync reports again rather than in an interval.
    if (writes.failures.length === 0 && writes.skipped === 0) await progress.records.recordReport(reportTime);
    for (const [rule, pending] of pendingMetricRules(counts)) progress.pendingPodsMetric?.(rule, pending);
    for (const [rule, stranded] of pendingMetricRules(counts, (rule) => rule.unschedulablePods))
      progress.unschedulablePodsMetric?.(rule, stranded);
    const unschedulableRules = [...counts.values()].filter((rule) => rule.schedulable.status === 'False').length;
    metrics.addMetric('ReportErrors', 'Count', 0);
    metrics.addMetric('PendingPodsTotal', 'Count', migration.totals.pending);
    metrics.addMetric('UnschedulableRules', 'Count', unschedulableRules);
    return {
      pods: migration.totals.pods,
      pendingPods: migration.totals.pending,
      unschedulableRules,
      statusPatched: writes.patched,
      statusFailed: writes.failures.length,
      durationMs: clock() - startedMs,
    };
  } catch (error) {
    metrics.addMetric('ReportErrors', 'Count', 1);
    context.logger.warn(
      'the migration report failed; rule statuses keep their last progress and the next sync retries',
      {
        clusterId: context.clusterId,
        ...errorLogFields(error),
      },
    );
    return {
      pods: 0,
      pendingPods: 0,
      unschedulableRules: 0,
      statusPatched: 0,
      statusFailed: 0,
      durationMs: clock() - startedMs,
      error: messageOf(error),
    };
  }
}

export { reportProgress };
