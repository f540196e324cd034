/** The progress step of a sync: the migration report, when due, written on each rule's status. */
import type { NormalizedRule } from '../api/index.ts';
import type { PodMutationSource } from '../cluster/index.ts';
import { compileRuleSet } from '../engine/index.ts';
import { errorLogFields, messageOf } from '../errors/index.ts';
import type { Logger, Metrics } from '../observability/index.ts';
import {
  computeProgress,
  pendingMetricRules,
  planProgressUpdates,
  progressDue,
  progressOf,
  type ProgressDependencies,
} from './progress.ts';
import type { ProgressReport } from './report.ts';
import type { AssessedResource } from './snapshot.ts';
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

/**
 * The migration report, when due: list Pods and owners, compute what a rollout would change under the rules just
 * published, write each rule's counts where they changed, record the time. A failure is logged and counted
 * (ReportErrors) and never changes the sync's outcome; the next sync tries again, since no time was recorded.
 */
async function reportProgress(
  context: ProgressContext,
  progress: ProgressDependencies,
  resources: readonly AssessedResource[],
  rules: readonly NormalizedRule[],
): Promise<ProgressReport | undefined> {
  const { clock, metrics, limits } = context;
  const startedMs = clock();
  try {
    if (!(await progressDue(progress, startedMs))) return undefined;
    const migration = await computeProgress(progress, compileRuleSet(rules), (message) =>
      context.logger.warn(message, { clusterId: context.clusterId }),
    );
    const reportTime = new Date(startedMs).toISOString();
    const counts = progressOf(migration);
    const writes = await writeStatuses(context.source, planProgressUpdates(resources, counts, reportTime), {
      concurrency: limits.concurrency,
      deadlineMs: clock() + limits.budgetMs,
      clock,
    });
    // Recorded only when every write landed: otherwise the next sync reports again rather than in an interval.
    if (writes.failures.length === 0 && writes.skipped === 0) await progress.records.recordReport(reportTime);
    for (const [rule, pending] of pendingMetricRules(counts)) progress.pendingPodsMetric?.(rule, pending);
    metrics.addMetric('ReportErrors', 'Count', 0);
    metrics.addMetric('PendingPodsTotal', 'Count', migration.totals.pending);
    return {
      pods: migration.totals.pods,
      pendingPods: migration.totals.pending,
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
      statusPatched: 0,
      statusFailed: 0,
      durationMs: clock() - startedMs,
      error: messageOf(error),
    };
  }
}

export { reportProgress };
