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

  it('from a snapshot are validated again, so a tampered store serves nothing', () => {
    const good = rule('good', { mutationAdd: { annotations: { 'example.com/a': 'b' } } });
    const tampered = { ...good, name: 'tampered', mutationAdd: { nodeSelector: { 'karpenter.sh/capacity-type': 'spot' } } };
    expect(() => compileSnapshotRules([good, tampered])).toThrow(/snapshot rule "tampered" fails validation: .*reserved/);
    expect(compileSnapshotRules([good]).rules.map((item) => item.name)).toEqual(['good']);
  });
});
