/**
 * The candidate index of a compiled rule set: which enabled rules can match a Pod's workload, found without
 * looking at the others. A rule matches only when every workload dimension it sets holds, so a rule filed under the
 * values of one dimension it sets (namespace, kind or name) can only match a workload with one of those values; a rule
 * setting none of them goes on the "any" list. Candidates are positions in application order, so matching them in
 * ascending position keeps the engine's order (priority, then name).
 */
import type { Workload } from './workload.ts';

/** The workload dimensions a rule can be filed under, in the order that breaks ties. */
const DIMENSIONS = ['namespaces', 'names', 'kinds'] as const;
type Dimension = (typeof DIMENSIONS)[number];

/** The workload field each dimension compares. */
const WORKLOAD_FIELD: Readonly<Record<Dimension, keyof Workload>> = {
  namespaces: 'namespace',
  names: 'name',
  kinds: 'kind',
};

/** What the index needs of a compiled rule. */
interface IndexedRule {
  readonly enabled: boolean;
  readonly match: { readonly [D in Dimension]: ReadonlySet<string> | undefined };
}

/** Positions (in application order, ascending) of the enabled rules that can match, per dimension value. */
export interface RuleIndex {
  readonly byValue: { readonly [D in Dimension]: ReadonlyMap<string, readonly number[]> };
  /** Enabled rules that set none of namespaces, kinds and names. */
  readonly any: readonly number[];
}

const NONE: readonly number[] = [];

/** How many rules list each value, per dimension: a value many rules share makes a poor bucket. */
function valueCounts(rules: readonly IndexedRule[]): Record<Dimension, Map<string, number>> {
  const counts = {
    namespaces: new Map<string, number>(),
    names: new Map<string, number>(),
    kinds: new Map<string, number>(),
  };
  for (const rule of rules) {
    if (!rule.enabled) continue;
    for (const dimension of DIMENSIONS) {
      for (const value of rule.match[dimension] ?? [])
        counts[dimension].set(value, (counts[dimension].get(value) ?? 0) + 1);
    }
  }
  return counts;
}

/**
 * The dimension to file a rule under: of those it sets, the one whose most shared value is shared by the fewest
 * rules, so that 1,000 teams' rules for `names: [api]` in their own namespace are filed by namespace, and 1,000
 * rules for different names in one namespace by name.
 */
function chosenDimension(rule: IndexedRule, counts: Record<Dimension, Map<string, number>>): Dimension | undefined {
  let best: Dimension | undefined;
  let bestCost = Infinity;
  for (const dimension of DIMENSIONS) {
    const values = rule.match[dimension];
    if (values === undefined) continue;
    let cost = 0;
    for (const value of values) cost = Math.max(cost, counts[dimension].get(value)!);
    if (cost < bestCost) {
      best = dimension;
      bestCost = cost;
    }
  }
  return best;
}

/** Builds the index of rules given in application order; disabled rules are in no list. Pure. */
export function indexRules(rules: readonly IndexedRule[]): RuleIndex {
  const counts = valueCounts(rules);
  const byValue = {
    namespaces: new Map<string, number[]>(),
    names: new Map<string, number[]>(),
    kinds: new Map<string, number[]>(),
  };
  const any: number[] = [];
  for (let position = 0; position < rules.length; position += 1) {
    const rule = rules[position]!;
    if (!rule.enabled) continue;
    const dimension = chosenDimension(rule, counts);
    if (dimension === undefined) {
      any.push(position);
      continue;
    }
    const lists = byValue[dimension];
    for (const value of rule.match[dimension]!) {
      const list = lists.get(value);
      if (list === undefined) lists.set(value, [position]);
      else list.push(position);
    }
  }
  return { byValue, any };
}

/** Merges two ascending position lists (disjoint: each rule is filed under one dimension). */
function mergeAscending(left: readonly number[], right: readonly number[]): readonly number[] {
  if (left.length === 0) return right;
  if (right.length === 0) return left;
  const merged: number[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) merged.push(left[i]! < right[j]! ? left[i++]! : right[j++]!);
  while (i < left.length) merged.push(left[i++]!);
  while (j < right.length) merged.push(right[j++]!);
  return merged;
}

/**
 * Positions of the rules that can match a workload, ascending (application order): the workload's bucket in each
 * dimension and the "any" list. Every enabled rule that matches is among them. Pure.
 */
export function candidatePositions(index: RuleIndex, workload: Workload): readonly number[] {
  let positions = index.any;
  for (const dimension of DIMENSIONS) {
    positions = mergeAscending(positions, index.byValue[dimension].get(workload[WORKLOAD_FIELD[dimension]]) ?? NONE);
  }
  return positions;
}
