/**
 * What a rule's own fields say about where its Pods can run: an added term no node can satisfy makes the rule invalid
 * (it could only strand the Pods given it); an added term that excludes what the rule's own match keeps is a warning.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ruleWarnings, validatePodMutation, type NormalizedRule } from '../../lib/api/index.ts';
import { Capacity } from '../../lib/capacity/index.ts';
import { compileRuleSet, reviewPod } from '../../lib/engine/index.ts';

import { pod, podMutation, req, rule } from '../support/builders.ts';
import { type NodeSelectorRequirement } from '../../lib/scheduling/core-shapes.ts';

const POOL = 'example.com/node-pool';
const TERMS = 'spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms';
const required = (...terms: NodeSelectorRequirement[][]) => ({
  requiredDuringSchedulingIgnoredDuringExecution: {
    nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })),
  },
});

/** The issues of a rule adding these terms (and this nodeSelector), or [] when it is valid. */
function addIssues(terms: NodeSelectorRequirement[][], nodeSelector?: Record<string, string>) {
  const verdict = validatePodMutation(
    podMutation('adds', {
      mutationAdd: { nodeAffinity: required(...terms), ...(nodeSelector === undefined ? {} : { nodeSelector }) },
    }),
  );
  return verdict.valid ? [] : verdict.invalid.issues;
}

describe('an added term that no node can satisfy', () => {
  it.each([
    ['In and NotIn of the same value', [req(POOL, 'In', 'merged'), req(POOL, 'NotIn', 'merged')], undefined],
    ['In of disjoint values', [req(POOL, 'In', 'merged'), req(POOL, 'In', 'general')], undefined],
    ['Exists and DoesNotExist', [req(POOL, 'Exists'), req(POOL, 'DoesNotExist')], undefined],
    ['an empty integer range', [req('example.com/gen', 'Gt', '5'), req('example.com/gen', 'Lt', '3')], undefined],
    ['In against the nodeSelector the rule adds', [req(POOL, 'In', 'legacy')], { [POOL]: 'merged' }],
  ])('makes the rule invalid at the term: %s', (_case, expressions, nodeSelector) => {
    expect(addIssues([expressions], nodeSelector)).toEqual([
      {
        field: `${TERMS}[0]`,
        reason: expect.stringMatching(
          /^can match no node \(.+\), so a Pod given it could run nowhere by this term; fix or drop the term$/,
        ) as unknown,
      },
    ]);
  });

  it('names each impossible term, and only those', () => {
    const issues = addIssues([[req(POOL, 'In', 'merged')], [req(POOL, 'In', 'merged'), req(POOL, 'NotIn', 'merged')]]);
    expect(issues.map(({ field }) => field)).toEqual([`${TERMS}[1]`]);
    expect(issues[0]!.reason).toContain(`${POOL} In [merged] and ${POOL} NotIn [merged] exclude each other`);
  });

  it.each([
    ['In with NotIn of another value', [req(POOL, 'In', 'merged', 'legacy'), req(POOL, 'NotIn', 'legacy')], undefined],
    [
      'requirements on different keys',
      [req(POOL, 'In', 'merged'), req('kubernetes.io/arch', 'In', 'arm64')],
      undefined,
    ],
    ['In holding the nodeSelector the rule adds', [req(POOL, 'In', 'merged', 'legacy')], { [POOL]: 'merged' }],
    ['a non-empty integer range', [req('example.com/gen', 'Gt', '3'), req('example.com/gen', 'Lt', '5')], undefined],
  ])('leaves a rule valid whose term some node could satisfy: %s', (_case, expressions, nodeSelector) => {
    expect(addIssues([expressions], nodeSelector)).toEqual([]);
  });

  const operatorValues = fc.oneof(
    fc.record({
      operator: fc.constantFrom('In', 'NotIn'),
      values: fc.uniqueArray(fc.constantFrom('1', '2', '3'), { minLength: 1 }),
    }),
    fc.record({
      operator: fc.constantFrom('Gt', 'Lt'),
      values: fc.constantFrom('1', '2', '3').map((value) => [value]),
    }),
    fc.record({ operator: fc.constantFrom('Exists', 'DoesNotExist'), values: fc.constant([] as string[]) }),
  );
  const expression = fc
    .tuple(fc.constantFrom('example.com/a', 'example.com/b'), operatorValues)
    .map(([key, { operator, values }]): NodeSelectorRequirement =>
      values.length === 0 ? { key, operator } : { key, operator, values },
    );

  it('rejects a rule exactly when admission would find every Pod given its term fitting nowhere, with no capacity', () => {
    // The unvalidated rule: what the engine would do with the term if the validator let it through.
    const base = rule('adds', { mutationAdd: { nodeAffinity: required([req(POOL, 'Exists')]) } });
    fc.assert(
      fc.property(fc.array(expression, { minLength: 1, maxLength: 4 }), (expressions) => {
        const candidate: NormalizedRule = {
          ...base,
          mutationAdd: { nodeAffinity: required(expressions) } as NormalizedRule['mutationAdd'],
        };
        const outcome = reviewPod(
          { pod: pod(), namespace: 'production', ruleSet: compileRuleSet([candidate]), context: { requestUid: 'law' } },
          {
            capacity: Capacity.unknown(),
          },
        );
        expect(addIssues([expressions]).length > 0).toBe(outcome.fit?.after.kind === 'nowhere');
      }),
    );
  });
});

describe('an added term that excludes what the rule selects on', () => {
  /** The warnings of a valid rule (the test fails on an invalid one). */
  const warningsOf = (spec: Record<string, unknown>) => ruleWarnings(rule('moves', spec));
  const toMerged = { nodeAffinity: required([req(POOL, 'In', 'merged')]) };

  it('warns when the nodeSelector it matches is kept, since every Pod it selects would then fit nowhere', () => {
    expect(
      warningsOf({ workloadSelector: { nodeSelectorMatch: { [POOL]: 'legacy' } }, mutationAdd: toMerged }),
    ).toEqual([
      {
        field: `${TERMS}[0]`,
        reason: expect.stringContaining(
          `cannot hold with the nodeSelector every Pod this rule selects keeps (spec.workloadSelector.nodeSelectorMatch, not removed): ${POOL} In [merged] and nodeSelector ${POOL}=legacy exclude each other`,
        ) as unknown,
      },
    ]);
  });

  it('warns when the nodeAffinityMatch requirement it matches is kept, naming the match term', () => {
    const warnings = warningsOf({
      workloadSelector: { nodeAffinityMatch: required([req(POOL, 'In', 'legacy')]) },
      mutationAdd: toMerged,
    });
    expect(warnings.map(({ reason }) => reason.split(':')[0])).toEqual([
      'cannot hold with the requirements of spec.workloadSelector.nodeAffinityMatch term 0 that the rule keeps',
    ]);
  });

  it.each([
    ['the nodeSelector key removed', { nodeSelector: { keys: [POOL] } }, { nodeSelectorMatch: { [POOL]: 'legacy' } }],
    [
      'the affinity key removed',
      { nodeAffinity: { keys: [POOL] } },
      { nodeAffinityMatch: required([req(POOL, 'In', 'legacy')]) },
    ],
    [
      'all node affinity removed',
      { nodeAffinity: { all: true } },
      { nodeAffinityMatch: required([req(POOL, 'In', 'legacy')]) },
    ],
    ['a match the term allows', {}, { nodeSelectorMatch: { [POOL]: 'merged' } }],
  ])('does not warn with %s', (_case, mutationRemove, workloadSelector) => {
    expect(warningsOf({ workloadSelector, mutationRemove, mutationAdd: toMerged })).toEqual([]);
  });

  it('does not warn when the rule overwrites the matched nodeSelector key with its own', () => {
    expect(
      warningsOf({
        workloadSelector: { nodeSelectorMatch: { [POOL]: 'legacy' } },
        mutationAdd: { nodeSelector: { [POOL]: 'merged' }, ...toMerged },
      }),
    ).toEqual([]);
  });
});
