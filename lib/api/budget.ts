/** The per-rule budget and the snapshot budget: a rule over its budget is invalid on its own. */
import type { NodeAffinity, NodeSelectorTerm } from '../scheduling/index.ts';
import { type Issue } from '../json/index.ts';
import { compareCodeUnits } from '../text/index.ts';
import { RULE_BUDGET, SNAPSHOT_BUDGET } from './constants.ts';
import { ruleReason } from './rules.ts';
import type { InvalidRule, NormalizedRule, PlacementVerdict, RuleVerdict } from './types.ts';

/** What a rule spends of its budget. */
interface RuleCost {
  readonly requirements: number;
  readonly values: number;
  /** UTF-8 bytes of its JSON, as the snapshot stores it (key order does not change the length). */
  readonly bytes: number;
}

interface Counts {
  requirements: number;
  values: number;
}

function addTerm(counts: Counts, term: NodeSelectorTerm | undefined): void {
  for (const requirement of term?.matchExpressions ?? []) {
    counts.requirements += 1;
    counts.values += requirement.values?.length ?? 0;
  }
}

function addAffinity(counts: Counts, affinity: NodeAffinity | undefined): void {
  for (const term of affinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [])
    addTerm(counts, term);
  for (const entry of affinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
    addTerm(counts, entry.preference);
}

/** The requirements and values of a validated rule's node affinities and label selector, and its size. Pure. */
export function ruleCost(rule: NormalizedRule): RuleCost {
  const counts: Counts = { requirements: 0, values: 0 };
  addAffinity(counts, rule.workloadSelector.nodeAffinityMatch);
  addAffinity(counts, rule.mutationAdd.nodeAffinity);
  addTerm(counts, rule.workloadSelector.labelSelector);
  return { ...counts, bytes: jsonBytes(rule) };
}

/** One issue of a rule over its budget. */
function overBudget(what: string, actual: number, budget: number): Issue {
  return { field: 'spec', reason: `the rule holds ${actual} ${what}, above the per-rule budget of ${budget}` };
}

/**
 * The issues of a rule over its budget, each naming the budget; empty within it. The counts are named rules the CRD
 * enforces too (lib/api/rules.ts); the size is the validator's alone.
 */
export function budgetIssues(cost: RuleCost): Issue[] {
  const issues: Issue[] = [];
  if (cost.requirements > RULE_BUDGET.maxRequirements)
    issues.push({ field: 'spec', reason: ruleReason('budget-requirements', String(cost.requirements)) });
  if (cost.values > RULE_BUDGET.maxValues)
    issues.push({ field: 'spec', reason: ruleReason('budget-values', String(cost.values)) });
  if (cost.bytes > RULE_BUDGET.maxBytes) issues.push(overBudget('bytes of JSON', cost.bytes, RULE_BUDGET.maxBytes));
  return issues;
}

/** The order rules apply in: ascending priority, then name in code-unit order (not locale order, so every machine agrees). */
export function byApplicationOrder(
  left: { readonly priority: number; readonly name: string },
  right: { readonly priority: number; readonly name: string },
): number {
  if (left.priority !== right.priority) return left.priority - right.priority;
  return compareCodeUnits(left.name, right.name);
}

/** One valid entry of a verdict list, as the budget spends it: where it is, its name, its priority and its bytes. */
interface Spending {
  readonly index: number;
  readonly name: string;
  readonly priority: number;
  readonly generation?: number;
  readonly bytes: number;
}

/** What the entries published so far have spent of SNAPSHOT_BUDGET. */
interface Spent {
  count: number;
  bytes: number;
}

/**
 * Spends the budget on `valid` in application order, from `spent` on; returns the reason of each entry that does not
 * fit, by index. `what` names the entry in the reason ("rule", "PodPlacement").
 */
function spendBudget(valid: Spending[], spent: Spent, what: string): Map<number, string> {
  valid.sort(byApplicationOrder);
  const overBudget = new Map<number, string>();
  for (const { index, bytes } of valid) {
    const countLeft = spent.count < SNAPSHOT_BUDGET.maxRules;
    if (countLeft && spent.bytes + bytes <= SNAPSHOT_BUDGET.maxRuleBytes) {
      spent.count += 1;
      spent.bytes += bytes;
      continue;
    }
    const budget = countLeft ? `${SNAPSHOT_BUDGET.maxRuleBytes} bytes of rules` : `${SNAPSHOT_BUDGET.maxRules} rules`;
    const needs = countLeft ? `, and this ${what} needs ${bytes}` : '';
    const before =
      what === 'rule'
        ? 'rules that apply before this one (priority, then name)'
        : `the rules and the ${what}s that apply before this one (priority, then name)`;
    overBudget.set(index, `not published: the snapshot budget of ${budget} is spent by ${before}${needs}`);
  }
  return overBudget;
}

/** The entries with those `overBudget` names made invalid, each with an issue on spec naming the budget. */
function withOverBudget<T extends { readonly verdict: { readonly valid: boolean } }>(
  entries: readonly T[],
  valid: readonly Spending[],
  overBudget: ReadonlyMap<number, string>,
): T[] {
  if (overBudget.size === 0) return [...entries];
  const byIndex = new Map(valid.map((entry) => [entry.index, entry]));
  return entries.map((entry, index) => {
    const reason = overBudget.get(index);
    const spending = byIndex.get(index);
    if (reason === undefined || spending === undefined) return entry;
    const invalid = {
      name: spending.name,
      ...(spending.generation === undefined ? {} : { generation: spending.generation }),
      issues: [{ field: 'spec', reason }],
    };
    return { ...entry, verdict: { valid: false, invalid } };
  });
}

/**
 * Applies the snapshot budget to the verdicts of one rule set: valid rules are published in application order while
 * they fit SNAPSHOT_BUDGET, at most maxRules of them and maxRuleBytes of JSON; each later one that does not fit becomes
 * invalid with an issue naming the budget it would exceed, and every rule before it is still published. Verdicts keep
 * their order. Pure.
 */
export function applySnapshotBudget<T extends { readonly verdict: RuleVerdict }>(entries: readonly T[]): T[] {
  return applySnapshotBudgets(entries, []).rules;
}

/**
 * The snapshot budget over rules and PodPlacements: the rules first (as applySnapshotBudget), then the valid
 * PodPlacements in application order count against the same maxRules and maxRuleBytes with what the rules left; a
 * PodPlacement that does not fit is invalid with an issue naming the budget. A rule never loses its place to a
 * PodPlacement. Each list keeps its order. Pure.
 */
export function applySnapshotBudgets<
  T extends { readonly verdict: RuleVerdict },
  P extends { readonly verdict: PlacementVerdict },
>(rules: readonly T[], placements: readonly P[]): { readonly rules: T[]; readonly placements: P[] } {
  const spent: Spent = { count: 0, bytes: 0 };
  const validRules = rules.flatMap((entry, index) =>
    entry.verdict.valid ? [spendingOf(index, entry.verdict.rule, ruleCost(entry.verdict.rule).bytes)] : [],
  );
  const rulesOver = spendBudget(validRules, spent, 'rule');
  const validPlacements = placements.flatMap((entry, index) =>
    entry.verdict.valid ? [spendingOf(index, entry.verdict.placement, jsonBytes(entry.verdict.placement))] : [],
  );
  const placementsOver = spendBudget(validPlacements, spent, 'PodPlacement');
  return {
    rules: withOverBudget(rules, validRules, rulesOver),
    placements: withOverBudget(placements, validPlacements, placementsOver),
  };
}

function spendingOf(
  index: number,
  entry: { readonly name: string; readonly priority: number; readonly generation?: number },
  bytes: number,
): Spending {
  const { name, priority, generation } = entry;
  return { index, name, priority, ...(generation === undefined ? {} : { generation }), bytes };
}

/** UTF-8 bytes of a value's JSON, as the snapshot stores it. */
function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/**
 * The invalid rules a snapshot lists: the first in the order given while their JSON fits SNAPSHOT_BUDGET.maxInvalidBytes.
 * A cold start decodes and hashes every listed one though no review reads them, so a cluster of many invalid or
 * unpublished rules would grow it without bound (57,000 of them, the rest of 62,000 minimal rules, took 700 ms); each
 * rule's own status (Accepted=False) names its reasons either way. Pure.
 */
export function listedInvalidRules(invalid: readonly InvalidRule[]): readonly InvalidRule[] {
  let spent = 2;
  for (let index = 0; index < invalid.length; index += 1) {
    spent += Buffer.byteLength(JSON.stringify(invalid[index]), 'utf8') + (index === 0 ? 0 : 1);
    if (spent > SNAPSHOT_BUDGET.maxInvalidBytes) return invalid.slice(0, index);
  }
  return invalid;
}
