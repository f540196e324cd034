/** The if-unschedulable annotation of a PodMutation: read at the one boundary, a typo is an invalid rule. */
import { describe, expect, it } from 'vitest';
import { ruleToResource, validatePodMutation } from '../../lib/api/index.ts';
import { compileRuleSet } from '../../lib/engine/index.ts';
import { podMutation } from '../support/builders.ts';
import { ENFORCEMENT_ANNOTATION, IF_UNSCHEDULABLE_ANNOTATION } from '../../lib/api/constants.ts';

const SPEC = { mutationAdd: { nodeSelector: { 'example.com/pool': 'general' } } };

function withAnnotations(annotations: unknown): unknown {
  return { ...podMutation('move', SPEC), metadata: { name: 'move', annotations } };
}

describe('the if-unschedulable annotation', () => {
  it.each([
    ['no annotation', {}, 'warn'],
    ['warn', { [IF_UNSCHEDULABLE_ANNOTATION]: 'warn' }, 'warn'],
    ['skip', { [IF_UNSCHEDULABLE_ANNOTATION]: 'skip' }, 'skip'],
  ])('compiles %s as %s', (_case, annotations, expected) => {
    const verdict = validatePodMutation(withAnnotations(annotations));
    if (!verdict.valid) throw new Error('the rule is invalid');

    expect(compileRuleSet([verdict.rule]).rules[0]!.ifUnschedulable).toBe(expected);
  });

  it('normalises warn, the default, to no field, so that one meaning has one stored form', () => {
    const verdict = validatePodMutation(withAnnotations({ [IF_UNSCHEDULABLE_ANNOTATION]: 'warn' }));

    expect(verdict.valid && Object.hasOwn(verdict.rule, 'ifUnschedulable')).toBe(false);
  });

  it.each([
    ['a capitalised value', 'Skip', '"Skip"'],
    ['another word', 'ignore', '"ignore"'],
    ['an empty value', '', '""'],
    ['a value that is not a string', false, 'false'],
  ])('rejects %s, naming the field path, the allowed values and what it got', (_case, value, shown) => {
    const verdict = validatePodMutation(withAnnotations({ [IF_UNSCHEDULABLE_ANNOTATION]: value }));

    expect(verdict.valid).toBe(false);
    expect(!verdict.valid && verdict.invalid.issues).toEqual([
      {
        field: `metadata.annotations["${IF_UNSCHEDULABLE_ANNOTATION}"]`,
        reason: `must be warn or skip (got ${shown})`,
      },
    ]);
  });

  it('round-trips a skip rule, audited too, through its resource form', () => {
    const verdict = validatePodMutation(
      withAnnotations({ [IF_UNSCHEDULABLE_ANNOTATION]: 'skip', [ENFORCEMENT_ANNOTATION]: 'audit' }),
    );
    if (!verdict.valid) throw new Error('the rule is invalid');

    expect(validatePodMutation(ruleToResource(verdict.rule))).toEqual({ valid: true, rule: verdict.rule });
  });
});
