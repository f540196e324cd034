/** From one complete cluster list (PodMutations, PodPlacements) to snapshot content and per-resource verdicts. Pure. */
import {
  applySnapshotBudgets,
  placementWarnings,
  POD_MUTATION_KIND,
  POD_PLACEMENT_KIND,
  ruleWarnings,
  validatePodMutation,
  validatePodPlacement,
  type InvalidRule,
  type NormalizedRule,
  type PlacementVerdict,
  type RuleVerdict,
} from '../api/index.ts';
import { DuplicateRuleError, MalformedInputError } from '../errors/index.ts';
import type { PodMutationList } from '../cluster/index.ts';
import type { SnapshotContent } from '../store/index.ts';
import { isJsonObject, type Issue } from '../json/index.ts';
import { compareCodeUnits } from '../text/index.ts';

/** One listed resource: its name and generation, the status it carries now, and the validator's verdict. */
interface Assessed<V extends RuleVerdict | PlacementVerdict> {
  readonly name: string;
  readonly generation?: number;
  /** `.status` as listed (written by an earlier sync, or absent). */
  readonly status: unknown;
  readonly verdict: V;
  /** What the valid resource likely does not mean (ruleWarnings, placementWarnings), for its status; absent when nothing. */
  readonly warnings?: readonly Issue[];
}

/** One listed PodMutation. */
type AssessedResource = Assessed<RuleVerdict>;

/** One listed PodPlacement. */
type AssessedPlacement = Assessed<PlacementVerdict>;

/** The validator of one kind: its verdict on an item, and the warnings of a valid one. */
type Judge<V extends RuleVerdict | PlacementVerdict> = (item: unknown) => {
  readonly verdict: V;
  readonly warnings: readonly Issue[];
};

const judgeRule: Judge<RuleVerdict> = (item) => {
  const verdict = validatePodMutation(item);
  return { verdict, warnings: verdict.valid ? ruleWarnings(verdict.rule, item) : [] };
};

const judgePlacement: Judge<PlacementVerdict> = (item) => {
  const verdict = validatePodPlacement(item);
  return { verdict, warnings: verdict.valid ? placementWarnings(verdict.placement, item) : [] };
};

/**
 * Validates every item of a list of `kind`, in list order. Throws MalformedInputError for an item without
 * metadata.name and DuplicateRuleError when a name repeats: either means the list is not one consistent cluster view.
 */
function assessItems<V extends RuleVerdict | PlacementVerdict>(
  list: PodMutationList,
  kind: string,
  judge: Judge<V>,
): Assessed<V>[] {
  const positions = new Map<string, number>();
  return list.items.map((item, index): Assessed<V> => {
    const metadata = isJsonObject(item) && isJsonObject(item['metadata']) ? item['metadata'] : undefined;
    const name = metadata?.['name'];
    if (typeof name !== 'string' || name === '') {
      throw new MalformedInputError(`list item ${index} has no metadata.name; expected every ${kind} to be named`, {
        context: { item: index },
      });
    }
    const earlier = positions.get(name);
    // Names are unique per cluster and kind, so a repeat means the pages came from different views of the cluster.
    if (earlier !== undefined) throw new DuplicateRuleError(name, [`list item ${earlier}`, `list item ${index}`]);
    positions.set(name, index);
    const generation = metadata?.['generation'];
    const { verdict, warnings } = judge(item);
    const status = isJsonObject(item) ? item['status'] : undefined;
    return {
      name,
      ...(typeof generation === 'number' ? { generation } : {}),
      status,
      verdict,
      ...(warnings.length === 0 ? {} : { warnings }),
    };
  });
}

/**
 * Validates every PodMutation and PodPlacement of two lists, then applies the snapshot budget to both
 * (applySnapshotBudgets: a valid resource that does not fit is invalid on its own). Throws like assessItems.
 */
function assessLists(
  mutations: PodMutationList,
  placements: PodMutationList | undefined,
): { readonly resources: readonly AssessedResource[]; readonly placements: readonly AssessedPlacement[] } {
  const budgeted = applySnapshotBudgets(
    assessItems(mutations, POD_MUTATION_KIND, judgeRule),
    placements === undefined ? [] : assessItems(placements, POD_PLACEMENT_KIND, judgePlacement),
  );
  return { resources: Object.freeze(budgeted.rules), placements: Object.freeze(budgeted.placements) };
}

/** Validates every PodMutation of a list and applies the snapshot budget; throws like assessLists. */
function assessList(list: PodMutationList): readonly AssessedResource[] {
  return assessLists(list, undefined).resources;
}

/**
 * Snapshot content of assessed resources: valid rules and invalid ones, and the valid PodPlacements, each sorted by
 * name (the store hashes arrays in order).
 */
function snapshotContentOf(
  resources: readonly AssessedResource[],
  resourceVersion: string,
  now: number,
  placements: readonly AssessedPlacement[] = [],
): SnapshotContent {
  const rules: NormalizedRule[] = [];
  const invalid: InvalidRule[] = [];
  for (const { verdict } of resources) {
    if (verdict.valid) rules.push(verdict.rule);
    else invalid.push(verdict.invalid);
  }
  // Only the valid PodPlacements: each invalid one's status names its reasons, and none is absent, so that a snapshot
  // of a cluster without PodPlacements hashes and stores as before they existed.
  const published = placements.flatMap(({ verdict }) => (verdict.valid ? [verdict.placement] : []));
  return Object.freeze({
    rules: Object.freeze(rules.sort(byName)),
    invalid: Object.freeze(invalid.sort(byName)),
    ...(published.length === 0 ? {} : { placements: Object.freeze(published.sort(byName)) }),
    resourceVersion,
    syncedAt: new Date(now).toISOString(),
  });
}

/**
 * The snapshot content of a complete list at `now` (epoch ms): valid rules normalized and sorted by name,
 * invalid ones with their issues sorted by name, and the list's resourceVersion. Throws like assessList.
 */
function buildSnapshotContent(list: PodMutationList, now: number): SnapshotContent {
  return snapshotContentOf(assessList(list), list.resourceVersion, now);
}

function byName(left: { readonly name: string }, right: { readonly name: string }): number {
  return compareCodeUnits(left.name, right.name);
}

export { assessLists, snapshotContentOf, buildSnapshotContent };
export type { Assessed, AssessedPlacement, AssessedResource };
