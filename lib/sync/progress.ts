/**
 * Migration progress on each rule's status: the counts of the migration report written as status.matchedPods,
 * status.pendingPods and status.lastReportTime, and its Schedulable condition, only for rules where either changed;
 * and on each PodPlacement's, the live Pods it places (matchedPods) and those already placed (placedPods).
 */
import type { NormalizedPlacement } from '../api/index.ts';
import type { Capacity } from '../capacity/index.ts';
import { WORKLOAD_OBJECT_KINDS, type SyncedKind, type WorkloadObjectSource } from '../cluster/index.ts';
import { podFacts, type RuleSet, type StampDigest } from '../engine/index.ts';
import { ClusterError } from '../errors/index.ts';
import {
  createPlacementStep,
  isPlaced,
  DEFAULT_CAPACITY_FLAVOUR,
  type CapacityFlavour,
  type ChosenPlacement,
  type PlacementPolicy,
  type PlacementStep,
} from '../placement/index.ts';
import { createReport, type MigrationReport, type ReportBuilder } from '../report/index.ts';
import type { SyncRecordStore } from '../store/index.ts';
import { conditionsOf, conditionUpToDate, findCondition, withCondition, withoutCondition } from './conditions.ts';
import { SCHEDULABLE, schedulableConditions, type SchedulableContext, type SchedulableFields } from './schedulable.ts';
import type { AssessedPlacement, AssessedResource } from './snapshot.ts';
import { isJsonObject } from '../json/index.ts';
import { compareCodeUnits } from '../text/index.ts';

/** What the sync needs to write migration progress; without it the sync writes none. */
interface ProgressDependencies {
  /** Pods and their owners, listed page by page (createWorkloadObjectSource). */
  readonly objects: WorkloadObjectSource;
  /** Minutes between reports (REPORT_INTERVAL_MINUTES, at least 1). */
  readonly intervalMinutes: number;
  /** Where the time of the last report is kept, so that every container and the CLI share one interval. */
  readonly records: Pick<SyncRecordStore, 'readReportTime' | 'recordReport'>;
  /**
   * The capacity placement admission runs after the rules, so that placed Pods read as current: the deployment's
   * flavour and the table's policies (read at each report); the PodPlacements are those the sync just published.
   * Absent: the karpenter flavour, no policy.
   */
  readonly placement?: {
    readonly flavour: CapacityFlavour;
    readonly policies?: () => Promise<readonly PlacementPolicy[]>;
  };
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

/** One PodPlacement's counts: the live Pods it is the chosen placement of, and those already carrying its capacity. */
type PlacementProgress = {
  readonly matchedPods: number;
  readonly placedPods: number;
};

/**
 * One progress write: the counts and the time of the report, null removing those of a resource now invalid (merge
 * patch); the conditions whole, when the Schedulable condition changes (a merge patch replaces the array).
 */
interface ProgressUpdate {
  readonly name: string;
  readonly kind?: SyncedKind;
  readonly status: Readonly<Record<string, unknown>>;
}

/** The counts a resource's status should show under their keys (none: invalid), and its conditions when they changed. */
interface WantedCounts {
  readonly keys: readonly string[];
  readonly counts: Readonly<Record<string, number>> | undefined;
  readonly conditions?: readonly unknown[] | undefined;
}

/**
 * The status a resource's counts need: `counts` with the report time when they differ from those `status` shows (or
 * `conditions` changed), nulls when the resource is invalid (`counts` undefined) and still shows some; undefined when
 * nothing changes.
 */
function countsStatus(
  status: Readonly<Record<string, unknown>>,
  { keys, counts, conditions }: WantedCounts,
  reportTime: string,
): ProgressUpdate['status'] | undefined {
  const changed = conditions === undefined ? {} : { conditions };
  if (counts === undefined) {
    const shown = keys.some((key) => status[key] != null);
    if (!shown && conditions === undefined) return undefined;
    return { ...Object.fromEntries(keys.map((key) => [key, null])), lastReportTime: null, ...changed };
  }
  const same = keys.every((key) => status[key] === counts[key]);
  if (same && conditions === undefined) return undefined;
  return { ...counts, lastReportTime: reportTime, ...changed };
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
    const { matchedPods, pendingPods } = counts ?? { matchedPods: 0, pendingPods: 0 };
    const wanted = resource.verdict.valid ? { matchedPods, pendingPods } : undefined;
    const update = countsStatus(status, { keys: RULE_COUNTS, counts: wanted, conditions }, reportTime);
    return update === undefined ? [] : [{ name: resource.name, status: update }];
  });
}

const RULE_COUNTS = ['matchedPods', 'pendingPods'];
const PLACEMENT_COUNTS = ['matchedPods', 'placedPods'];

/**
 * The progress writes due for a list's PodPlacements: a valid one whose matchedPods or placedPods differ from the
 * report's (one the report does not name placed no Pod), and an invalid one that still shows counts.
 */
function planPlacementProgressUpdates(
  placements: readonly AssessedPlacement[],
  progress: ReadonlyMap<string, PlacementProgress>,
  reportTime: string,
): readonly ProgressUpdate[] {
  return placements.flatMap((placement): ProgressUpdate[] => {
    const status = isJsonObject(placement.status) ? placement.status : {};
    const wanted = placement.verdict.valid
      ? (progress.get(placement.name) ?? { matchedPods: 0, placedPods: 0 })
      : undefined;
    const update = countsStatus(status, { keys: PLACEMENT_COUNTS, counts: wanted }, reportTime);
    return update === undefined ? [] : [{ name: placement.name, kind: 'PodPlacement', status: update }];
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
  return withCondition(conditions, SCHEDULABLE, wanted, { generation, now });
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
    .sort(([leftName, left], [rightName, right]) => right - left || compareCodeUnits(leftName, rightName))
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

/** Counts, Pod by Pod, the live Pods each PodPlacement is chosen for and those it has placed already. */
function placementTally(step: PlacementStep, flavour: CapacityFlavour) {
  const counts = new Map<string, { matchedPods: number; placedPods: number }>();
  return {
    counts: counts as ReadonlyMap<string, PlacementProgress>,
    add(pod: unknown, path: string): void {
      let facts;
      try {
        facts = podFacts(pod, '', path);
      } catch {
        return; // A Pod the engine cannot read is one admission would not place either; the report says so.
      }
      const chosen: ChosenPlacement | undefined = step.choose(facts);
      if (chosen?.placement === undefined) return;
      const tally = counts.get(chosen.placement) ?? { matchedPods: 0, placedPods: 0 };
      tally.matchedPods += 1;
      if (isPlaced(facts.nodeAffinity.required, chosen.mode, flavour)) tally.placedPods += 1;
      counts.set(chosen.placement, tally);
    },
  };
}

/** What the sync published that the report judges by: the rules compiled, the capacity, and the PodPlacements. */
interface PublishedForProgress {
  readonly ruleSet: RuleSet;
  readonly capacity: Capacity;
  readonly placements: readonly NormalizedPlacement[];
}

/** The migration report and each PodPlacement's counts. */
interface ComputedProgress {
  readonly migration: MigrationReport;
  readonly placements: ReadonlyMap<string, PlacementProgress>;
}

/**
 * The migration report of the cluster's running Pods under `ruleSet` and the capacity placement of `placements` (the
 * PodPlacements published) and the table's policies, as `podmutation report` computes it, each changed Pod judged
 * against `capacity` (the one the sync publishes); each PodPlacement's counts over the same live Pods (those the report
 * folds: not finished). `warn` as foldClusterObjects'.
 */
async function computeProgress(
  progress: ProgressDependencies,
  { ruleSet, capacity, placements }: PublishedForProgress,
  warn?: (message: string) => void,
): Promise<ComputedProgress> {
  const flavour = progress.placement?.flavour ?? DEFAULT_CAPACITY_FLAVOUR;
  const policies = (await progress.placement?.policies?.()) ?? [];
  const step = createPlacementStep({ flavour, policies, placements });
  const report = createReport(ruleSet, {
    managedSteps: step.empty ? [] : [step],
    capacity,
    ...(progress.stamps === undefined ? {} : { stamps: progress.stamps }),
  });
  const tally = placementTally(step, flavour);
  const folded: ReportBuilder =
    placements.length === 0
      ? report
      : {
          addOwner: (object, path) => report.addOwner(object, path),
          addPod(pod, path = 'Pod') {
            const verdict = report.addPod(pod, path);
            if (verdict !== undefined) tally.add(pod, path);
            return verdict;
          },
          result: () => report.result(),
        };
  await foldClusterObjects(folded, progress.objects, undefined, warn);
  return { migration: report.result(), placements: tally.counts };
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

export {
  planPlacementProgressUpdates,
  planProgressUpdates,
  pendingMetricRules,
  progressDue,
  computeProgress,
  foldClusterObjects,
  progressOf,
};
export type { ProgressDependencies };
