/** The enforcement annotation of a PodMutation: read at the one boundary, a typo is an invalid rule. */
import { describe, expect, it } from 'vitest';
import { ruleToResource, validatePodMutation } from '../../lib/api/index.ts';
import { podMutation } from '../support/builders.ts';
import { ENFORCEMENT_ANNOTATION, IF_UNSCHEDULABLE_ANNOTATION } from '../../lib/api/constants.ts';

const SPEC = { mutationAdd: { nodeSelector: { 'example.com/pool': 'general' } } };

function withAnnotations(annotations: unknown): unknown {
  return { ...podMutation('audited', SPEC), metadata: { name: 'audited', annotations } };
}

describe('the enforcement annotation', () => {
  it.each([
    ['no annotations', undefined, 'enforce'],
    ['other annotations only', { 'example.com/owner': 'platform' }, 'enforce'],
    ['enforce', { [ENFORCEMENT_ANNOTATION]: 'enforce' }, 'enforce'],
    ['audit', { [ENFORCEMENT_ANNOTATION]: 'audit' }, 'audit'],
  ])('reads %s as %s', (_case, annotations, expected) => {
    const verdict = validatePodMutation(
      annotations === undefined ? podMutation('audited', SPEC) : withAnnotations(annotations),
    );

    expect(verdict.valid && verdict.rule.enforcement).toBe(expected);
  });

  it.each([
    ['a capitalised value', 'Audit', '"Audit"'],
    ['a misspelt value', 'audti', '"audti"'],
    ['an empty value', '', '""'],
    ['a value that is not a string', true, 'true'],
  ])('rejects %s naming the annotation, the allowed values and what it got', (_case, value, shown) => {
    const verdict = validatePodMutation(withAnnotations({ [ENFORCEMENT_ANNOTATION]: value }));

    expect(verdict.valid).toBe(false);
    expect(!verdict.valid && verdict.invalid.issues).toEqual([
      { field: `metadata.annotations["${ENFORCEMENT_ANNOTATION}"]`, reason: `must be enforce or audit (got ${shown})` },
    ]);
  });

  it.each([
    ['a misspelt key', 'podmutation.agent.cloudpilot.ai/enforcment'],
    ['a key in another case', 'podmutation.agent.cloudpilot.ai/Enforcement'],
    ['a product annotation of Pods', 'podmutation.agent.cloudpilot.ai/applied'],
    ['the bare prefix', 'podmutation.agent.cloudpilot.ai/'],
  ])(
    'rejects %s under the product prefix, naming the key and the known ones, so a rule meant for audit is never enforced',
    (_case, key) => {
      const verdict = validatePodMutation(withAnnotations({ [key]: 'audit' }));

      expect(verdict.valid).toBe(false);
      expect(!verdict.valid && verdict.invalid.issues).toEqual([
        {
          field: `metadata.annotations["${key}"]`,
          reason: `unknown annotation under podmutation.agent.cloudpilot.ai/; expected one of ${ENFORCEMENT_ANNOTATION}, ${IF_UNSCHEDULABLE_ANNOTATION}`,
        },
      ]);
    },
  );

  it('reports a misspelt key beside a correct one', () => {
    const verdict = validatePodMutation(
      withAnnotations({ [ENFORCEMENT_ANNOTATION]: 'enforce', 'podmutation.agent.cloudpilot.ai/enforcment': 'audit' }),
    );

    expect(!verdict.valid && verdict.invalid.issues.map((issue) => issue.field)).toEqual([
      'metadata.annotations["podmutation.agent.cloudpilot.ai/enforcment"]',
    ]);
  });

  it.each([
    ["kubectl's last applied configuration", 'kubectl.kubernetes.io/last-applied-configuration'],
    ['a key of another product that shares the domain', 'agent.cloudpilot.ai/owner'],
    ['a key that ends like the prefix', 'example.com/podmutation.agent.cloudpilot.ai'],
  ])('leaves %s alone', (_case, key) => {
    const verdict = validatePodMutation(withAnnotations({ [key]: '{}' }));

    expect(verdict.valid && verdict.rule.enforcement).toBe('enforce');
  });

  it('rejects annotations that are not a map', () => {
    const verdict = validatePodMutation(withAnnotations(['audit']));

    expect(!verdict.valid && verdict.invalid.issues).toEqual([
      { field: 'metadata.annotations', reason: 'must be a map of strings' },
    ]);
  });

  it('round-trips an audited rule through its resource form', () => {
    const verdict = validatePodMutation(withAnnotations({ [ENFORCEMENT_ANNOTATION]: 'audit' }));
    if (!verdict.valid) throw new Error('the audited rule is valid');

    const again = validatePodMutation(ruleToResource(verdict.rule));

    expect(again).toEqual(verdict);
  });

  it('reads a stored rule without an enforcement, as snapshots before audit mode hold them, as enforced', () => {
    const verdict = validatePodMutation(podMutation('older', SPEC));
    if (!verdict.valid) throw new Error('the rule is valid');
    // The JSON a snapshot stored before audit mode: no enforcement field at all.
    const older = JSON.parse(JSON.stringify({ ...verdict.rule, enforcement: undefined })) as typeof verdict.rule;

    const again = validatePodMutation(ruleToResource(older));

    expect(again.valid && again.rule.enforcement).toBe('enforce');
  });
});
