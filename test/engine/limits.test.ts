import { describe, expect, it } from 'vitest';
import { reviewPod } from '../../lib/engine/index.ts';
import type { NodeSelectorTerm, PreferredSchedulingTerm } from '../../lib/scheduling/index.ts';
import { pod, preferred, req, required, rule, rules, termOf } from '../support/builders.ts';

const context = { requestUid: 'uid-limits' };
const terms = (count: number, key = 'example.com/pool'): NodeSelectorTerm[] =>
  Array.from({ length: count }, (_, index) => termOf(req(key, 'In', `v${index}`)));
const wideTerm = (count: number, prefix = 'k'): NodeSelectorTerm =>
  termOf(...Array.from({ length: count }, (_, index) => req(`example.com/${prefix}${index}`, 'Exists')));
const preferences = (count: number): PreferredSchedulingTerm[] =>
  Array.from({ length: count }, (_, index) => preferred(10, req('example.com/p', 'In', `v${index}`)));
const addRequired = (count: number) =>
  rule('add-required', { mutationAdd: { nodeAffinity: required(...terms(count, 'topology.kubernetes.io/zone')) } });
const annotate = rule('annotate', { mutationAdd: { annotations: { 'example.com/a': 'b' } } });

describe('runtime limits ("If matching rules exceed a runtime combination limit, Pod admission is rejected")', () => {
  it.each([
    [
      'more than 4,096 intermediate required terms before canonicalization',
      pod({ required: terms(65) }),
      addRequired(64),
      'intermediate required terms before canonicalization would be 4160, above the limit of 4096',
    ],
    [
      'more than 64 required terms after combining',
      pod({ required: terms(9) }),
      addRequired(8),
      'required node selector terms after combining would be 72, above the limit of 64',
    ],
    [
      'more than 64 requirements in one combined required term',
      pod({ required: [wideTerm(60)] }),
      rule('add-wide', { mutationAdd: { nodeAffinity: required(wideTerm(5, 'added')) } }),
      'requirements in one combined required term would be 65, above the limit of 64',
    ],
    [
      'more than 64 preferred terms after combining',
      pod({ preferred: preferences(60) }),
      rule('add-preferred', {
        mutationAdd: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: Array.from({ length: 5 }, (_, index) =>
              preferred(20, req('example.com/q', 'In', `v${index}`)),
            ),
          },
        },
      }),
      'preferred node affinity terms after combining would be 65, above the limit of 64',
    ],
    [
      'more than 256 raw required terms on the incoming Pod',
      pod({ required: terms(257) }),
      annotate,
      'required node selector terms on the incoming Pod would be 257, above the limit of 256',
    ],
    [
      'more than 256 requirements in one raw term on the incoming Pod',
      pod({ required: [wideTerm(257)] }),
      annotate,
      'requirements in one required term on the incoming Pod would be 257, above the limit of 256',
    ],
  ])('denies a Pod with %s, naming the rule and the limit', (_, input, matchingRule, message) => {
    const outcome = reviewPod({ pod: input, namespace: 'production', ruleSet: rules(matchingRule), context });
    expect(outcome.decision).toBe('denied');
    expect(outcome.patch).toEqual([]);
    expect(outcome.denial?.message).toBe(`PodMutation "${matchingRule.name}": ${message}`);
  });

  it('admits a Pod over the raw limits when no rule matches it', () => {
    const outcome = reviewPod({
      pod: pod({ required: terms(300) }),
      namespace: 'production',
      ruleSet: rules(
        rule('elsewhere', {
          workloadSelector: { namespaces: ['batch'] },
          mutationAdd: { annotations: { 'example.com/a': 'b' } },
        }),
      ),
      context,
    });
    expect(outcome.decision).toBe('unchanged');
  });

  it('leaves a Pod\'s own affinity that no rule adds to as it is ("A Pod\'s own affinity that no rule adds to is left as it is")', () => {
    const outcome = reviewPod({
      pod: pod({ required: terms(100), preferred: preferences(100) }),
      namespace: 'production',
      ruleSet: rules(annotate),
      context,
    });
    expect(outcome.decision).toBe('mutated');
    expect(outcome.patch.map((operation) => operation.path)).toEqual(['/metadata/annotations']);
  });

  it('allows exactly 64 combined terms', () => {
    const outcome = reviewPod({
      pod: pod({ required: terms(8) }),
      namespace: 'production',
      ruleSet: rules(addRequired(8)),
      context,
    });
    expect(outcome.decision).toBe('mutated');
    expect(
      outcome.pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
    ).toHaveLength(64);
  });
});
