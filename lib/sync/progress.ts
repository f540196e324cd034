/**
 * Migration progress on each rule's status: the counts of the migration report written as status.matchedPods,
 * status.pendingPods and status.lastReportTime, and its Schedulable condition, only for rules where either changed.
 */
import type { Capacity } from '../capacity/index.ts';
import { WORKLOAD_OBJECT_KINDS, type WorkloadObjectSource } from '../cluster/index.ts';
import type { ManagedStep, RuleSet, StampDigest } from '../engine/index.ts';
import { ClusterError } from '../errors/index.ts';
import { createReport, type MigrationReport, type ReportBuilder } from '../report/index.ts';
import type { SyncRecordStore } from '../store/index.ts';
import { conditionsOf, conditionUpToDate, findCondition, withCondition, withoutCondition } from './conditions.ts';
import { SCHEDULABLE, schedulableConditions, type SchedulableContext, type SchedulableFields } from './schedulable.ts';
import type { AssessedResource } from './snapshot.ts';
import { isJsonObject } from '../values/index.ts';

/** What the sync needs to write migration progress; without it the sync writes none. */
interface ProgressDependencies {
  /** Pods and their owners, listed page by page (createWorkloadObjectSource). */
  readonly objects: WorkloadObjectSource;
  /** Minutes between reports (REPORT_INTERVAL_MINUTES, at least 1). */
  readonly intervalMinutes: number;
  /** Where the time of the last report is kept, so that every container and the CLI share one interval. */
  readonly records: Pick<SyncRecordStore, 'readReportTime' | 'recordReport'>;
  /** The managed steps admission runs after the rules (capacity placement), so that placed Pods read as current. */
  readonly managedSteps?: () => Promise<readonly ManagedStep[]>;
  /** Emits PendingPods for one rule (a metric with a rule dimension); called for MAX_PENDING_METRIC_RULES rules at most. */
  readonly pendingPodsMetric?: (rule: string, pendingPods: number) => void;
  /** Emits UnschedulablePods for one rule (a metric with a rule dimension); called for MAX_PENDING_METRIC_RULES rules at most. */
  readonly unschedulablePodsMetric?: (rule: string, unschedulablePods: number) => void;
  /** The stamps' digests (lib/stamp's keyless ones): a Pod recreated from its own spec is evaluated as admission evaluates it. */
  readonly stamps?: StampDigest;
}

/** One rule's counts in a migration report, and the Schedulable condition they make. */
interface RuleProgress {
  readonly matchedPods: number;
  readonly pendingPods: number;
  /** Pods it matched that it would strand (the report's unschedulable). */
  readonly unschedulablePods: number;
  readonly schedulable: SchedulableFields;
}

/**
 * One progress write: the counts and the time of the report, null removing those of a rule now invalid (merge patch);
 * the conditions whole, when the Schedulable condition changes (a merge patch replaces the array).
 */
interface ProgressUpdate {
  readonly name: string;
  readonly status: (
    | { readonly matchedPods: number; readonly pendingPods: number; readonly lastReportTime: string }
    | { readonly matchedPods: null; readonly pendingPods: null; readonly lastReportTime: null }
  ) & { readonly conditions?: readonly unknown[] };
}

/**
 * PendingPods goes to CloudWatch per rule for this many rules at most, those with the most pending Pods: each
 * metric name and dimension pair is a custom metric billed monthly ($0.30 in us-east-1, 2026), so a cluster with
 * 1,000 rules would pay $300 a month for a number the status and the report already show; 10 cost $3.
 */
const MAX_PENDING_METRIC_RULES = 10;

/**
 * The progress writes due for a list's resources: a valid rule whose matchedPods or pendingPods differ from the
 * report's (a rule the report does not name matched nothing) or whose Schedulable condition differs from the one the
 * report makes (a rule the report does not name, being disabled, carries none), and an invalid rule that still shows
 * counts or the condition.
 */
function planProgressUpdates(
  resources: readonly AssessedResource[],
  progress: ReadonlyMap<string, RuleProgress>,
  reportTime: string,
): readonly ProgressUpdate[] {
  return resources.flatMap((resource): ProgressUpdate[] => {
    const status = isJsonObject(resource.status) ? resource.status : {};
    const counts = resource.verdict.valid ? progress.get(resource.name) : undefined;
    const conditions = schedulableChange(conditionsOf(status), counts?.schedulable, resource.generation, reportTime);
    const changed = conditions === undefined ? {} : { conditions };
    if (!resource.verdict.valid) {
      const shown = status['matchedPods'] != null || status['pendingPods'] != null;
      return shown || conditions !== undefined
        ? [{ name: resource.name, status: { matchedPods: null, pendingPods: null, lastReportTime: null, ...changed } }]
        : [];
    }
    const { matchedPods, pendingPods } = counts ?? { matchedPods: 0, pendingPods: 0 };
    const same = status['matchedPods'] === matchedPods && status['pendingPods'] === pendingPods;
    if (same && conditions === undefined) return [];
    return [{ name: resource.name, status: { matchedPods, pendingPods, lastReportTime: reportTime, ...changed } }];
  });
}

/** The conditions with Schedulable set to `wanted` (removed when undefined), or undefined when they already say it. */
function schedulableChange(
  conditions: readonly unknown[],
  wanted: SchedulableFields | undefined,
  generation: number | undefined,
  now: string,
): readonly unknown[] | undefined {
  if (wanted === undefined) return withoutCondition(conditions, SCHEDULABLE);
  if (conditionUpToDate(findCondition(conditions, SCHEDULABLE).existing, wanted, generation)) return undefined;
  return withCondition(conditions, SCHEDULABLE, wanted, generation, now);
}

/**
 * The rules whose PendingPods (or UnschedulablePods, by `count`) is emitted: the most first (then by name), at most
 * MAX_PENDING_METRIC_RULES, none at 0.
 */
function pendingMetricRules<T extends Pick<RuleProgress, 'pendingPods'>>(
  progress: ReadonlyMap<string, T>,
  count: (counts: T) => number = (counts) => counts.pendingPods,
): readonly (readonly [string, number])[] {
  return [...progress]
    .map(([name, counts]) => [name, count(counts)] as const)
    .filter(([, value]) => value > 0)
    .sort(([leftName, left], [rightName, right]) => right - left || (leftName < rightName ? -1 : 1))
    .slice(0, MAX_PENDING_METRIC_RULES);
}

/** Whether a report is due at `nowMs`: none ran yet, or the last one is at least the interval old. */
async function progressDue(progress: ProgressDependencies, nowMs: number): Promise<boolean> {
  const last = await progress.records.readReportTime();
  return last === undefined || nowMs - Date.parse(last) >= progress.intervalMinutes * 60_000;
}

/**
 * Folds the cluster's objects into a report page by page, as the sync and `podmutation report --kubeconfig` both do:
 * the RuntimeClasses and owner kinds first and the Pods last (WORKLOAD_OBJECT_KINDS), each page dropped once folded, so
 * memory is bounded by the page size and the number of workloads, not by the number of Pods. RuntimeClasses the
 * identity may not list (403) are left out and said through `warn`: the report then reads what they add to a Pod from
 * the running Pods, as they arrived at the webhook.
 */
async function foldClusterObjects(
  report: ReportBuilder,
  objects: WorkloadObjectSource,
  namespace?: string,
  warn?: (message: string) => void,
): Promise<void> {
  for (const kind of WORKLOAD_OBJECT_KINDS) {
    let index = 0;
    try {
      for await (const page of objects.pages(kind, namespace)) {
        for (const item of page) {
          const path = `${kind} list item ${index}`;
          index += 1;
          if (kind === 'Pod') report.addPod(item, path);
          else report.addOwner(item, path);
        }
      }
    } catch (error) {
      if (kind !== 'RuntimeClass' || !(error instanceof ClusterError) || error.context['reason'] !== 'forbidden')
        throw error;
      warn?.(
        `${error.message}; what RuntimeClasses add to a Pod is read from the running Pods as they arrived at the webhook`,
      );
    }
  }
}

/**
 * The migration report of the cluster's running Pods under `ruleSet`, as `podmutation report` computes it, each changed
 * Pod judged against `capacity` (the one the sync publishes); `warn` as foldClusterObjects'.
 */
async function computeProgress(
  progress: ProgressDependencies,
  ruleSet: RuleSet,
  capacity: Capacity,
  warn?: (message: string) => void,
): Promise<MigrationReport> {
  const managedSteps = progress.managedSteps === undefined ? [] : await progress.managedSteps();
  const report = createReport(ruleSet, {
    managedSteps,
    capacity,
    ...(progress.stamps === undefined ? {} : { stamps: progress.stamps }),
  });
  await foldClusterObjects(report, progress.objects, undefined, warn);
  return report.result();
}

/**
 * Each rule's counts in a report and its Schedulable condition; an audited rule's pending and unschedulable are 0,
 * because audit changes no Pod (see lib/report).
 */
function progressOf(report: MigrationReport, context: SchedulableContext): ReadonlyMap<string, RuleProgress> {
  const schedulable = schedulableConditions(report, context);
  return new Map(
    report.rules.map((rule) => [
      rule.name,
      {
        matchedPods: rule.matched,
        pendingPods: rule.pending,
        unschedulablePods: rule.unschedulable,
        schedulable: schedulable.get(rule.name)!,
      },
    ]),
  );
}

export { planProgressUpdates, pendingMetricRules, progressDue, computeProgress, foldClusterObjects, progressOf };
export type { ProgressDependencies };
