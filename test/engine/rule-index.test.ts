import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleSet, matchingRules, reviewPod, podFacts, type RuleSet } from '../../lib/engine/index.ts';
import type { NormalizedRule } from '../../lib/api/index.ts';
import { pod, rule } from '../support/builders.ts';
import { matchRule } from '../../lib/engine/match.ts';

// Small value spaces, so that random rules and Pods share namespaces, kinds and names often.
const NAMESPACES = ['production', 'staging', 'team-a', 'team-b'];
const WORKLOAD_NAMES = ['web', 'api', 'db'];
const KINDS = ['Deployment', 'StatefulSet', 'Job', 'CronJob', 'ReplicaSet', 'Pod'];
const APPS = ['web', 'api'];

/** A dimension: absent two times in three, else one or two values. */
const someOf = <T>(values: readonly T[]) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength: 2 }) },
  );

/** A random workloadSelector over namespace, kind, name and labels; all: true when it sets none of them. */
const selector = fc
  .record({ namespaces: someOf(NAMESPACES), kinds: someOf(KINDS), names: someOf(WORKLOAD_NAMES), app: someOf(APPS) })
  .map(({ namespaces, kinds, names, app }) => {
    const dimensions = {
      ...(namespaces === undefined ? {} : { namespaces }),
      ...(kinds === undefined ? {} : { kinds }),
      ...(names === undefined ? {} : { names }),
      ...(app === undefined
        ? {}
        : { labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: app }] } }),
    };
    return Object.keys(dimensions).length === 0 ? { all: true } : dimensions;
  });

/** Up to 40 random rules with distinct names, some disabled, priorities colliding often. */
const randomRuleSet: fc.Arbitrary<NormalizedRule[]> = fc
  .array(fc.record({ workloadSelector: selector, enable: fc.boolean(), priority: fc.integer({ min: 0, max: 3 }) }), {
    minLength: 1,
    maxLength: 40,
  })
  .map((specs) =>
    specs.map((spec, index) =>
      rule(`rule-${String(index).padStart(2, '0')}`, {
        ...spec,
        mutationAdd: { annotations: { [`example.com/rule-${index}`]: 'applied' } },
      }),
    ),
  );

/** A Pod of any workload kind the engine resolves, in a random namespace. */
const randomPod = fc
  .record({
    namespace: fc.constantFrom(...NAMESPACES),
    kind: fc.constantFrom(...KINDS),
    name: fc.constantFrom(...WORKLOAD_NAMES),
    app: fc.constantFrom(...APPS),
  })
  .map(({ namespace, kind, name, app }) => {
    const labels = { app, 'pod-template-hash': '5d8f7c9b4' };
    switch (kind) {
      case 'Pod':
        return pod({ namespace, name, labels });
      case 'Deployment':
        return pod({ namespace, labels, owner: { kind: 'ReplicaSet', name: `${name}-5d8f7c9b4` } });
      case 'CronJob':
        return pod({ namespace, labels, owner: { kind: 'Job', name: `${name}-29123456` } });
      default:
        return pod({ namespace, labels, owner: { kind, name } });
    }
  });

/** The engine before the index: every enabled rule, in application order, matched against the Pod. */
function linearMatches(ruleSet: RuleSet, facts: ReturnType<typeof podFacts>): string[] {
  return ruleSet.rules
    .filter((compiled) => compiled.enabled && matchRule(compiled, facts) === undefined)
    .map((compiled) => compiled.name);
}

describe('the rule index', () => {
  it('finds exactly the rules a scan of every rule finds, in the same order, on random rule sets and Pods', () => {
    let nonEmpty = 0;
    fc.assert(
      fc.property(randomRuleSet, randomPod, (rules, input) => {
        const ruleSet = compileRuleSet(rules);
        const facts = podFacts(input, input.metadata!.namespace!);
        const linear = linearMatches(ruleSet, facts);
        if (linear.length > 0) nonEmpty += 1;
        expect(matchingRules(ruleSet, facts).map((compiled) => compiled.name)).toEqual(linear);
      }),
      { numRuns: 1000 },
    );
    // The generators must exercise matching, not only agree on finding nothing.
    expect(nonEmpty).toBeGreaterThan(500);
  });

  it('gives a review the same outcome as explain mode, which evaluates every rule', () => {
    fc.assert(
      fc.property(randomRuleSet, randomPod, (rules, input) => {
        const ruleSet = compileRuleSet(rules);
        const context = { requestUid: 'uid-index' };
        const indexed = reviewPod({ pod: input, namespace: input.metadata!.namespace!, ruleSet, context });
        const explained = reviewPod(
          { pod: input, namespace: input.metadata!.namespace!, ruleSet, context },
          { explain: true },
        );
        expect(indexed.applied).toEqual(explained.applied);
        expect(indexed.patch).toEqual(explained.patch);
        expect(
          explained.evaluations
            .filter((evaluation) => evaluation.outcome === 'matched')
            .map((evaluation) => evaluation.rule.name),
        ).toEqual(indexed.applied);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ['a rule selecting only labels goes on the "any" list', { labelSelector: { matchLabels: { app: 'web' } } }, 'any'],
    ['a rule selecting a namespace is filed by namespace', { namespaces: ['team-a'] }, 'namespaces'],
    ['a rule selecting a kind alone is filed by kind', { kinds: ['StatefulSet'] }, 'kinds'],
    ['a rule selecting a name alone is filed by name', { names: ['db'] }, 'names'],
  ] as const)('%s', (_, workloadSelector, where) => {
    const { index } = compileRuleSet([
      rule('under-test', { workloadSelector, mutationAdd: { annotations: { 'example.com/seen': 'yes' } } }),
    ]);
    const filed =
      where === 'any' ? [...index.any] : [...index.byValue[where].values()].flatMap((positions) => [...positions]);
    expect(filed).toEqual([0]);
  });

  it('files a rule under the dimension whose values the fewest rules share', () => {
    // Every team's rule names the workload "api" in the team's own namespace: the namespace is the selective one.
    const teams = Array.from({ length: 5 }, (_, team) =>
      rule(`team-${team}`, {
        workloadSelector: { namespaces: [`team-${team}`], names: ['api'] },
        mutationAdd: { annotations: { 'example.com/team': `${team}` } },
      }),
    );
    // Many rules in one namespace, each for another workload: the name is the selective one.
    const databases = Array.from({ length: 5 }, (_, db) =>
      rule(`db-${db}`, {
        workloadSelector: { namespaces: ['production'], names: [`db-${db}`] },
        mutationAdd: { annotations: { 'example.com/db': `${db}` } },
      }),
    );
    const { index, rules } = compileRuleSet([...teams, ...databases]);
    const byNamespace = [...index.byValue.namespaces.values()].flatMap((positions) =>
      [...positions].map((position) => rules[position]!.name),
    );
    const byName = [...index.byValue.names.values()].flatMap((positions) =>
      [...positions].map((position) => rules[position]!.name),
    );
    expect(byNamespace.sort()).toEqual(teams.map((item) => item.name).sort());
    expect(byName.sort()).toEqual(databases.map((item) => item.name).sort());
  });

  it('leaves disabled rules out of every list', () => {
    const { index } = compileRuleSet([
      rule('off', {
        enable: false,
        workloadSelector: { namespaces: ['team-a'] },
        mutationAdd: { annotations: { 'example.com/off': 'yes' } },
      }),
      rule('off-any', {
        enable: false,
        workloadSelector: { all: true },
        mutationAdd: { annotations: { 'example.com/off': 'yes' } },
      }),
    ]);
    expect(index.any.length).toBe(0);
    expect(index.byValue.namespaces.size).toBe(0);
  });
});
