/** The per-rule budget and the snapshot budget (issue #9): a rule over its budget is invalid on its own. */
import type { NodeAffinity, NodeSelectorTerm } from '../scheduling/index.ts';
import { RULE_BUDGET, SNAPSHOT_BUDGET, type NormalizedRule, type RuleIssue, type RuleVerdict } from './types.ts';

/** What a rule spends of its budget. */
export interface RuleCost {
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
  for (const term of affinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) addTerm(counts, term);
  for (const entry of affinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []) addTerm(counts, entry.preference);
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
function overBudget(what: string, actual: number, budget: number): RuleIssue {
  return { field: 'spec', reason: `the rule holds ${actual} ${what}, above the per-rule budget of ${budget}` };
}

/** The issues of a rule over its budget, each naming the budget; empty within it. */
export function budgetIssues(cost: RuleCost): RuleIssue[] {
  const issues: RuleIssue[] = [];
  if (cost.requirements > RULE_BUDGET.maxRequirements) issues.push(overBudget('requirements (node affinity and label selector)', cost.requirements, RULE_BUDGET.maxRequirements));
  if (cost.values > RULE_BUDGET.maxValues) issues.push(overBudget('requirement values', cost.values, RULE_BUDGET.maxValues));
  if (cost.bytes > RULE_BUDGET.maxBytes) issues.push(overBudget('bytes of JSON', cost.bytes, RULE_BUDGET.maxBytes));
  return issues;
}

/** The order rules apply in: ascending priority, then name in code-unit order (not locale order, so every machine agrees). */
export function byApplicationOrder(left: { readonly priority: number; readonly name: string }, right: { readonly priority: number; readonly name: string }): number {
  if (left.priority !== right.priority) return left.priority - right.priority;
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

/**
 * Applies the snapshot budget to the verdicts of one rule set: valid rules are published in application order while
 * their JSON fits SNAPSHOT_BUDGET.maxRuleBytes; each later one becomes invalid with an issue naming the budget, and
 * every rule before it is still published. Verdicts keep their order. Pure.
 */
export function applySnapshotBudget<T extends { readonly verdict: RuleVerdict }>(entries: readonly T[]): T[] {
  const valid = entries.flatMap((entry, index) => (entry.verdict.valid ? [{ index, rule: entry.verdict.rule }] : []));
  valid.sort((left, right) => byApplicationOrder(left.rule, right.rule));
  const overBudget = new Map<number, number>();
  let spent = 0;
  for (const { index, rule } of valid) {
    const { bytes } = ruleCost(rule);
    if (spent + bytes <= SNAPSHOT_BUDGET.maxRuleBytes) spent += bytes;
    else overBudget.set(index, bytes);
  }
  if (overBudget.size === 0) return [...entries];
  return entries.map((entry, index) => {
    const bytes = overBudget.get(index);
    if (bytes === undefined || !entry.verdict.valid) return entry;
    const { rule } = entry.verdict;
    const reason = `not published: the snapshot budget of ${SNAPSHOT_BUDGET.maxRuleBytes} bytes of rules is spent by rules that apply before this one (priority, then name), and this rule needs ${bytes}`;
    const invalid = { name: rule.name, ...(rule.generation === undefined ? {} : { generation: rule.generation }), issues: [{ field: 'spec', reason }] };
    return { ...entry, verdict: { valid: false, invalid } };
  });
}
