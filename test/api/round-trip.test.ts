import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ruleToResource, validatePodMutation } from '../../lib/api/index.ts';
import { compileSnapshotRules } from '../../lib/engine/index.ts';
import { randomRule } from '../support/arbitraries.ts';
import { rule } from '../support/builders.ts';

describe('normalized rules', () => {
  it('validate back to themselves: normalization is idempotent', () => {
    fc.assert(
      fc.property(randomRule('round-trip'), (normalized) => {
        const verdict = validatePodMutation(ruleToResource(normalized));
        expect(verdict).toEqual({ valid: true, rule: normalized });
      }),
    );
  });

  it('are returned part for part as they are when validated again, not copied', () => {
    fc.assert(
      fc.property(randomRule('round-trip'), (normalized) => {
        const verdict = validatePodMutation(ruleToResource(normalized));
        expect(
          verdict.valid && [verdict.rule.workloadSelector, verdict.rule.mutationRemove, verdict.rule.mutationAdd],
        ).toEqual([normalized.workloadSelector, normalized.mutationRemove, normalized.mutationAdd]);
        expect(verdict.valid && verdict.rule.workloadSelector).toBe(normalized.workloadSelector);
        expect(verdict.valid && verdict.rule.mutationAdd).toBe(normalized.mutationAdd);
      }),
    );
  });

  const exists = (values?: string[]) => ({
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [
        {
          matchExpressions: [
            { key: 'example.com/pool', operator: 'Exists', ...(values === undefined ? {} : { values }) },
          ],
        },
      ],
    },
  });
  it.each([
    [
      'all: false left out',
      'mutationRemove',
      { nodeAffinity: { keys: ['example.com/pool'], all: false } },
      { nodeAffinity: { keys: ['example.com/pool'] } },
    ],
    ['an empty list of values left out', 'mutationAdd', { nodeAffinity: exists([]) }, { nodeAffinity: exists() }],
    [
      "fields put in the declaration's order",
      'mutationRemove',
      { tolerations: { keys: ['a'] }, nodeAffinity: { all: true } },
      { nodeAffinity: { all: true }, tolerations: { keys: ['a'] } },
    ],
    [
      'a field set to undefined left out',
      'mutationRemove',
      { nodeAffinity: { all: true }, tolerations: undefined },
      { nodeAffinity: { all: true } },
    ],
  ] as const)('are normalized when they are not normal yet: %s', (_, field, part, expected) => {
    const verdict = validatePodMutation(
      ruleToResource({ ...rule('not-normal', { mutationRemove: { nodeAffinity: { all: true } } }), [field]: part }),
    );
    expect(verdict.valid && verdict.rule[field]).toEqual(expected);
    expect(verdict.valid && JSON.stringify(verdict.rule[field])).toBe(JSON.stringify(expected));
    expect(verdict.valid && Object.keys(verdict.rule[field])).toEqual(Object.keys(expected));
  });

  it('from a snapshot are validated again, so a tampered store serves nothing', () => {
    const good = rule('good', { mutationAdd: { annotations: { 'example.com/a': 'b' } } });
    const tampered = {
      ...good,
      name: 'tampered',
      mutationAdd: { nodeSelector: { 'karpenter.sh/capacity-type': 'spot' } },
    };
    expect(() => compileSnapshotRules([good, tampered])).toThrow(
      /snapshot rule "tampered" fails validation: .*reserved/,
    );
    expect(compileSnapshotRules([good]).rules.map((item) => item.name)).toEqual(['good']);
  });
});
