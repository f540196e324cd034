/** The per-rule budget and the snapshot budget. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applySnapshotBudget,
  applySnapshotBudgets,
  listedInvalidRules,
  ruleCost,
  SNAPSHOT_BUDGET,
  validatePodMutation,
  type InvalidRule,
  type NormalizedPlacement,
  type NormalizedRule,
  type PlacementVerdict,
  type RuleVerdict,
} from '../../lib/api/index.ts';
import { loadCrd } from '../infra/corpus.ts';
import { createCrdAdmission } from '../infra/structural-schema.ts';
import { podMutation } from '../support/builders.ts';
import { largestRule } from '../support/largest-rule.ts';
import { RULE_BUDGET } from '../../lib/api/constants.ts';

const admit = createCrdAdmission(loadCrd());

function valid(resource: unknown): NormalizedRule {
  const verdict = validatePodMutation(resource);
  if (!verdict.valid) throw new Error(JSON.stringify(verdict.invalid.issues.slice(0, 3)));
  return verdict.rule;
}

const requirement = (index: number, values: number) => ({
  key: `example.com/k${index}`,
  operator: 'In',
  values: Array.from({ length: values }, (_, value) => `v${value}`),
});
const terms = (count: number, perTerm: number, values: number) => ({
  requiredDuringSchedulingIgnoredDuringExecution: {
    nodeSelectorTerms: Array.from({ length: count }, (_, term) => ({
      matchExpressions: Array.from({ length: perTerm }, (_, index) => requirement(term * perTerm + index, values)),
    })),
  },
});

describe('the per-rule budget', () => {
  it('admits the largest rule of the contract in the CRD and the validator, and it serializes within the byte budget', () => {
    const resource = largestRule();
    expect(admit(resource).errors).toEqual([]);
    const cost = ruleCost(valid(resource));
    expect(cost).toMatchObject({ requirements: RULE_BUDGET.maxRequirements, values: RULE_BUDGET.maxValues });
    expect(cost.bytes).toBeLessThanOrEqual(RULE_BUDGET.maxBytes);
  });

  it.each([
    [
      'one requirement more than the budget',
      terms(4, 64, 0 + 1).requiredDuringSchedulingIgnoredDuringExecution,
      { labelSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } },
      `the rule holds more than ${RULE_BUDGET.maxRequirements} requirements (node affinity and label selector), above the per-rule budget (got ${RULE_BUDGET.maxRequirements + 1})`,
    ],
    [
      'one value more than the budget',
      terms(1, 17, 61).requiredDuringSchedulingIgnoredDuringExecution,
      {},
      `the rule holds more than ${RULE_BUDGET.maxValues} requirement values, above the per-rule budget (got 1037)`,
    ],
  ])('rejects a rule with %s in the validator and the CRD, naming the budget', (_, required, selector, reason) => {
    const resource = podMutation('over-budget', {
      workloadSelector: { namespaces: ['production'], ...selector },
      mutationAdd: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: required } },
    });
    const verdict = validatePodMutation(resource);
    expect(verdict.valid ? [] : verdict.invalid.issues).toContainEqual({ field: 'spec', reason });
    expect(admit(resource).errors.map((error) => error.field)).toContain('spec');
  });
});

describe('the snapshot budget', () => {
  const small = valid(
    podMutation('small', {
      workloadSelector: { namespaces: ['production'] },
      mutationAdd: { annotations: { 'example.com/a': 'b' } },
    }),
  );
  const big = (index: number) => valid(largestRule(`big-${String(index).padStart(2, '0')}`));
  const bigRules = Array.from({ length: 20 }, (_, index) => big(index));
  const fitting = Math.floor(SNAPSHOT_BUDGET.maxRuleBytes / ruleCost(bigRules[0]!).bytes);

  it('publishes rules in application order while they fit, and rejects each later one on its own, naming the budget', () => {
    const entries = [small, ...[...bigRules].reverse()].map((rule): { verdict: RuleVerdict } => ({
      verdict: { valid: true, rule },
    }));

    const budgeted = applySnapshotBudget(entries);

    const published = budgeted.flatMap(({ verdict }) => (verdict.valid ? [verdict.rule.name] : []));
    expect(fitting).toBeLessThan(bigRules.length);
    expect(published).toHaveLength(fitting + 1);
    expect(published).toContain('small');
    const rejected = budgeted.flatMap(({ verdict }) => (verdict.valid ? [] : [verdict.invalid]));
    expect(rejected.map((invalid) => invalid.name)).toEqual(
      bigRules
        .slice(fitting)
        .map((rule) => rule.name)
        .reverse(),
    );
    expect(rejected[0]!.issues[0]!.reason).toContain(
      `the snapshot budget of ${SNAPSHOT_BUDGET.maxRuleBytes} bytes of rules is spent`,
    );
  });

  it('changes nothing for rules within the budget', () => {
    const entries = [small, bigRules[0]!].map((rule) => ({ source: 'x', verdict: { valid: true as const, rule } }));
    expect(applySnapshotBudget(entries)).toEqual(entries);
  });

  it('publishes at most its count of rules, in application order, and rejects each later one, naming the count', () => {
    // The smallest rules: the bytes they take are far within the budget, so the count decides.
    const minimal = (name: string, priority: number) =>
      valid(
        podMutation(name, { priority, workloadSelector: { all: true }, mutationAdd: { nodeSelector: { a: 'b' } } }),
      );
    const late = [minimal('a-late-1', 100), minimal('a-late-0', 100)];
    const rules = [
      ...late,
      ...Array.from({ length: SNAPSHOT_BUDGET.maxRules }, (_, index) =>
        minimal(`r${String(index).padStart(5, '0')}`, 0),
      ),
    ];

    const budgeted = applySnapshotBudget(
      rules.map((rule): { verdict: RuleVerdict } => ({ verdict: { valid: true, rule } })),
    );

    const rejected = budgeted.flatMap(({ verdict }) => (verdict.valid ? [] : [verdict.invalid]));
    expect(budgeted.filter(({ verdict }) => verdict.valid)).toHaveLength(SNAPSHOT_BUDGET.maxRules);
    expect(rejected).toEqual(
      ['a-late-1', 'a-late-0'].map((name) => ({
        name,
        issues: [
          {
            field: 'spec',
            reason: `not published: the snapshot budget of ${SNAPSHOT_BUDGET.maxRules} rules is spent by rules that apply before this one (priority, then name)`,
          },
        ],
      })),
    );
  });
});

describe('the snapshot budget over rules and PodPlacements', () => {
  const minimal = (name: string) =>
    valid(podMutation(name, { workloadSelector: { all: true }, mutationAdd: { nodeSelector: { a: 'b' } } }));
  const placement = (name: string, priority = 0): NormalizedPlacement => ({
    name,
    generation: 2,
    enable: true,
    priority,
    workloadSelector: { namespaces: ['batch'] },
    mode: 'Spot',
  });
  const asRules = (rules: readonly NormalizedRule[]) =>
    rules.map((rule): { verdict: RuleVerdict } => ({ verdict: { valid: true, rule } }));
  const asPlacements = (placements: readonly NormalizedPlacement[]) =>
    placements.map((entry): { verdict: PlacementVerdict } => ({ verdict: { valid: true, placement: entry } }));
  const names = (entries: readonly { verdict: PlacementVerdict }[], valid: boolean) =>
    entries.flatMap(({ verdict }) =>
      verdict.valid === valid ? [verdict.valid ? verdict.placement.name : verdict.invalid.name] : [],
    );

  it('publishes the PodPlacements with what the rules leave of the count, in application order, and rejects the rest', () => {
    const rules = Array.from({ length: SNAPSHOT_BUDGET.maxRules - 1 }, (_, index) =>
      minimal(`r${String(index).padStart(5, '0')}`),
    );
    const placements = asPlacements([placement('z-first', -1), placement('a-later'), placement('b-later')]);

    const budgeted = applySnapshotBudgets(asRules(rules), placements);

    expect(budgeted.rules.every(({ verdict }) => verdict.valid)).toBe(true);
    expect(names(budgeted.placements, true)).toEqual(['z-first']);
    expect(budgeted.placements[1]!.verdict).toEqual({
      valid: false,
      invalid: {
        name: 'a-later',
        generation: 2,
        issues: [
          {
            field: 'spec',
            reason: `not published: the snapshot budget of ${SNAPSHOT_BUDGET.maxRules} rules is spent by the rules and the PodPlacements that apply before this one (priority, then name)`,
          },
        ],
      },
    });
    expect(names(budgeted.placements, false)).toEqual(['a-later', 'b-later']);
  });

  it('rejects a PodPlacement once the rules spent the bytes, naming the bytes it needs, and never a rule for it', () => {
    const big = (index: number) => valid(largestRule(`big-${String(index).padStart(2, '0')}`));
    const count = Math.floor(SNAPSHOT_BUDGET.maxRuleBytes / ruleCost(big(0)).bytes);
    const rules = Array.from({ length: count }, (_, index) => big(index));
    const spent = rules.reduce((total, rule) => total + ruleCost(rule).bytes, 0);
    const left = SNAPSHOT_BUDGET.maxRuleBytes - spent;
    // A PodPlacement bigger than what the rules left: a long namespace list.
    const namespaces = Array.from(
      { length: Math.ceil(left / 40) + 1 },
      (_, index) => `namespace-${index}-${'x'.repeat(40)}`,
    );
    const large = { ...placement('large', -2147483648), workloadSelector: { namespaces } };

    const budgeted = applySnapshotBudgets(asRules(rules), asPlacements([large]));

    expect(budgeted.rules.every(({ verdict }) => verdict.valid)).toBe(true);
    const verdict = budgeted.placements[0]!.verdict;
    expect(verdict.valid).toBe(false);
    expect(verdict.valid ? '' : verdict.invalid.issues[0]!.reason).toMatch(
      new RegExp(
        `^not published: the snapshot budget of ${SNAPSHOT_BUDGET.maxRuleBytes} bytes of rules is spent .*, and this PodPlacement needs \\d+$`,
      ),
    );
  });

  it('changes nothing for rules and PodPlacements within the budget', () => {
    const rules = asRules([minimal('alpha')]);
    const placements = asPlacements([placement('to-spot')]);

    expect(applySnapshotBudgets(rules, placements)).toEqual({ rules, placements });
  });
});

describe('the invalid rules a snapshot lists', () => {
  const bytesOf = (invalid: readonly InvalidRule[]) => Buffer.byteLength(JSON.stringify(invalid), 'utf8');
  const invalidRule = fc.record({
    name: fc.string({ minLength: 1, maxLength: 40 }),
    issues: fc.array(fc.record({ field: fc.string({ maxLength: 60 }), reason: fc.string({ maxLength: 4000 }) }), {
      minLength: 1,
      maxLength: 32,
    }),
  });

  it('are the first ones given while their JSON fits the budget, and the next one would not', () => {
    fc.assert(
      fc.property(fc.array(invalidRule, { maxLength: 400 }), (invalid) => {
        const listed = listedInvalidRules(invalid);

        expect(listed).toEqual(invalid.slice(0, listed.length));
        expect(bytesOf(listed)).toBeLessThanOrEqual(SNAPSHOT_BUDGET.maxInvalidBytes);
        if (listed.length < invalid.length)
          expect(bytesOf(invalid.slice(0, listed.length + 1))).toBeGreaterThan(SNAPSHOT_BUDGET.maxInvalidBytes);
      }),
      { numRuns: 50 },
    );
  });
});
