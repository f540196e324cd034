/** The per-rule budget and the snapshot budget: a rule over its budget is invalid on its own. */
import type { NodeAffinity, NodeSelectorTerm } from '../scheduling/index.ts';
import type { Issue } from '../values/index.ts';
import { RULE_BUDGET, SNAPSHOT_BUDGET } from './constants.ts';
import { ruleReason } from './rules.ts';
import type { InvalidRule, NormalizedRule, RuleVerdict } from './types.ts';

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
  return { ...counts, bytes: Buffer.byteLength(JSON.stringify(rule), 'utf8') };
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
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

/**
 * Applies the snapshot budget to the verdicts of one rule set: valid rules are published in application order while
 * they fit SNAPSHOT_BUDGET, at most maxRules of them and maxRuleBytes of JSON; each later one that does not fit becomes
 * invalid with an issue naming the budget it would exceed, and every rule before it is still published. Verdicts keep
 * their order. Pure.
 */
export function applySnapshotBudget<T extends { readonly verdict: RuleVerdict }>(entries: readonly T[]): T[] {
  const valid = entries.flatMap((entry, index) => (entry.verdict.valid ? [{ index, rule: entry.verdict.rule }] : []));
  valid.sort((left, right) => byApplicationOrder(left.rule, right.rule));
  const overBudget = new Map<number, string>();
  let rules = 0;
  let spent = 0;
  for (const { index, rule } of valid) {
    const { bytes } = ruleCost(rule);
    if (rules < SNAPSHOT_BUDGET.maxRules && spent + bytes <= SNAPSHOT_BUDGET.maxRuleBytes) {
      rules += 1;
      spent += bytes;
    } else {
      const budget =
        rules < SNAPSHOT_BUDGET.maxRules
          ? `${SNAPSHOT_BUDGET.maxRuleBytes} bytes of rules`
          : `${SNAPSHOT_BUDGET.maxRules} rules`;
      const needs = rules < SNAPSHOT_BUDGET.maxRules ? `, and this rule needs ${bytes}` : '';
      overBudget.set(
        index,
        `not published: the snapshot budget of ${budget} is spent by rules that apply before this one (priority, then name)${needs}`,
      );
    }
  }
  if (overBudget.size === 0) return [...entries];
  return entries.map((entry, index) => {
    const reason = overBudget.get(index);
    if (reason === undefined || !entry.verdict.valid) return entry;
    const { rule } = entry.verdict;
    const invalid = {
      name: rule.name,
      ...(rule.generation === undefined ? {} : { generation: rule.generation }),
      issues: [{ field: 'spec', reason }],
    };
    return { ...entry, verdict: { valid: false, invalid } };
  });
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
