/** The Schedulable condition each rule of a migration report gets, from its counts and its workloads' fit. Pure. */
import { describe, expect, it } from 'vitest';
import { FIT_CAVEAT } from '../../lib/capacity/index.ts';
import type { MigrationReport } from '../../lib/report/index.ts';
import { schedulableConditions } from '../../lib/sync/schedulable.ts';

type Rule = MigrationReport['rules'][number];
type Workload = MigrationReport['workloads'][number];

function rule(name: string, unschedulable: number, enforcement: Rule['enforcement'] = 'enforce'): Rule {
  return { name, enforcement, matched: 3, current: 0, pending: 3, unschedulable };
}

function workload(name: string, rules: readonly string[], fit?: Workload['fit']): Workload {
  return {
    namespace: 'production',
    kind: 'Deployment',
    name,
    pods: 3,
    current: 0,
    pending: 3,
    denied: 0,
    rules,
    change: 'nodeAffinity',
    ...(fit === undefined ? {} : { fit }),
  };
}

const NOWHERE = { kind: 'nowhere', reason: 'fits nowhere: no Node and no NodePool takes it' } as const;

function conditionOf(
  rules: readonly Rule[],
  workloads: readonly Workload[],
  capacityKnown = true,
  skipRules: ReadonlySet<string> = new Set(),
) {
  const report: MigrationReport = {
    rules,
    workloads,
    totals: { pods: 3, unaffected: 0, current: 0, pending: 3, denied: 0 },
  };
  return schedulableConditions(report, { capacityKnown, skipRules }).get(rules[0]!.name);
}

describe('the Schedulable condition of a rule', () => {
  it.each([
    ['an enforced rule that strands none, judged against a capacity', [rule('move', 0)], true, 'True', 'PodsFit'],
    ['an enforced rule that strands none, with no capacity', [rule('move', 0)], false, 'Unknown', 'CapacityUnknown'],
    ['an audited rule, which changes no Pod', [rule('move', 0, 'audit')], true, 'Unknown', 'Audited'],
    ['an enforced rule that strands Pods, with no capacity', [rule('move', 2)], false, 'False', 'PodsWouldFitNowhere'],
  ] as const)('for %s is %s', (_case, rules, capacityKnown, status, reason) => {
    expect(conditionOf(rules, [], capacityKnown)).toMatchObject({ status, reason });
  });

  it('names how many Pods and the first workload of the rule whose Pods fit nowhere, with the caveat', () => {
    const condition = conditionOf(
      [rule('move', 2), rule('other', 1)],
      [
        workload('api', ['other'], NOWHERE),
        workload('cart', ['move'], { kind: 'fits', reason: 'fits NodePool general' }),
        workload('checkout', ['move'], NOWHERE),
      ],
    );

    expect(condition?.message).toBe(
      '2 Pods the rule matches would go from fitting somewhere to fitting nowhere once recreated with it, e.g. ' +
        `Deployment production/checkout: fits nowhere: no Node and no NodePool takes it; ${FIT_CAVEAT}`,
    );
  });

  it('says one Pod in the singular, and names no example when no workload of the rule fits nowhere', () => {
    expect(conditionOf([rule('move', 1)], [])?.message).toBe(
      `1 Pod the rule matches would go from fitting somewhere to fitting nowhere once recreated with it; ${FIT_CAVEAT}`,
    );
  });

  it('says of a rule annotated if-unschedulable: skip that admission holds it back from those Pods', () => {
    expect(conditionOf([rule('move', 2)], [], true, new Set(['move']))).toMatchObject({
      status: 'False',
      reason: 'PodsWouldFitNowhere',
      message:
        '2 Pods the rule matches would go from fitting somewhere to fitting nowhere with it, so admission holds it back ' +
        `from them (if-unschedulable: skip) and they stay where they run; ${FIT_CAVEAT}`,
    });
  });
});
