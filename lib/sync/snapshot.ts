/** From one complete cluster list to snapshot content and per-resource verdicts. Pure. */
import {
  applySnapshotBudget,
  ruleWarnings,
  validatePodMutation,
  type InvalidRule,
  type NormalizedRule,
  type RuleVerdict,
} from '../api/index.ts';
import { DuplicateRuleError, MalformedInputError } from '../errors/index.ts';
import type { PodMutationList } from '../cluster/index.ts';
import type { SnapshotContent } from '../store/index.ts';
import { isJsonObject, type Issue } from '../values/index.ts';

/** One listed resource: its name and generation, the status it carries now, and the validator's verdict. */
interface AssessedResource {
  readonly name: string;
  readonly generation?: number;
  /** `.status` as listed (written by an earlier sync, or absent). */
  readonly status: unknown;
  readonly verdict: RuleVerdict;
  /** What the valid rule likely does not mean (ruleWarnings), for its status; absent when nothing. */
  readonly warnings?: readonly Issue[];
}

/**
 * Validates every item of a list, in list order, then applies the snapshot budget (a valid rule that does not fit is
 * invalid on its own). Throws MalformedInputError for an item without metadata.name and DuplicateRuleError when a
 * name repeats: either means the list is not one consistent cluster view.
 */
function assessList(list: PodMutationList): readonly AssessedResource[] {
  const positions = new Map<string, number>();
  return Object.freeze(
    applySnapshotBudget(
      list.items.map((item, index): AssessedResource => {
        const metadata = isJsonObject(item) && isJsonObject(item['metadata']) ? item['metadata'] : undefined;
        const name = metadata?.['name'];
        if (typeof name !== 'string' || name === '') {
          throw new MalformedInputError(
            `list item ${index} has no metadata.name; expected every PodMutation to be named`,
            {
              context: { item: index },
            },
          );
        }
        const earlier = positions.get(name);
        // Names are unique per cluster, so a repeat means the pages came from different views of the cluster.
        if (earlier !== undefined) throw new DuplicateRuleError(name, [`list item ${earlier}`, `list item ${index}`]);
        positions.set(name, index);
        const generation = metadata?.['generation'];
        const verdict = validatePodMutation(item);
        const status = isJsonObject(item) ? item['status'] : undefined;
        const warnings = verdict.valid ? ruleWarnings(verdict.rule, item) : [];
        return {
          name,
          ...(typeof generation === 'number' ? { generation } : {}),
          status,
          verdict,
          ...(warnings.length === 0 ? {} : { warnings }),
        };
      }),
    ),
  );
}

/** Snapshot content of assessed resources: valid rules and invalid ones, each sorted by name (the store hashes arrays in order). */
function snapshotContentOf(
  resources: readonly AssessedResource[],
  resourceVersion: string,
  now: number,
): SnapshotContent {
  const rules: NormalizedRule[] = [];
  const invalid: InvalidRule[] = [];
  for (const { verdict } of resources) {
    if (verdict.valid) rules.push(verdict.rule);
    else invalid.push(verdict.invalid);
  }
  return Object.freeze({
    rules: Object.freeze(rules.sort(byName)),
    invalid: Object.freeze(invalid.sort(byName)),
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

// Code-unit order, not localeCompare: the order must not depend on the runtime's locale data.
function byName(left: { readonly name: string }, right: { readonly name: string }): number {
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

export { assessList, snapshotContentOf, buildSnapshotContent };
export type { AssessedResource };
