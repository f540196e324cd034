/** validatePodPlacement: the envelope and selector of a PodMutation, the placement, defaults and the inverse. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { placementToResource, placementWarnings, validatePodPlacement } from '../../lib/api/index.ts';

const resource = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'agent.cloudpilot.ai/v1alpha1',
  kind: 'PodPlacement',
  metadata: { name: 'batch', ...metadata },
  spec,
});

const selector = { workloadSelector: { namespaces: ['batch'] } };

describe('validatePodPlacement', () => {
  it('gives Diversity its default share and minimum', () => {
    const verdict = validatePodPlacement(resource({ enable: true, ...selector, mode: 'Diversity' }));
    expect(verdict).toMatchObject({ valid: true, placement: { spotPercent: 50, minOnDemand: 0, priority: 0 } });
  });

  it('rejects a misspelt selector dimension with the message a PodMutation gets', () => {
    const verdict = validatePodPlacement(resource({ workloadSelector: { namespace: ['batch'] }, mode: 'Spot' }));
    expect(verdict.valid ? [] : verdict.invalid.issues.map((issue) => issue.field)).toContain(
      'spec.workloadSelector.namespace',
    );
  });

  it('rejects a PodMutation handed to it, naming the kind', () => {
    const verdict = validatePodPlacement({ ...resource({ ...selector, mode: 'Spot' }), kind: 'PodMutation' });
    expect(verdict.valid ? [] : verdict.invalid.issues).toContainEqual({
      field: 'kind',
      reason: 'must be PodPlacement (got "PodMutation")',
    });
  });

  it('rejects an annotation under the product prefix, which a PodPlacement never takes', () => {
    const annotations = { 'podmutation.agent.cloudpilot.ai/enforcement': 'audit' };
    const verdict = validatePodPlacement(resource({ ...selector, mode: 'Spot' }, { annotations }));
    expect(verdict.valid ? [] : verdict.invalid.issues.map((issue) => issue.reason)).toEqual([
      'unknown annotation under podmutation.agent.cloudpilot.ai/; this kind takes none',
    ]);
  });

  it('warns when enable is left out: the placement is stored disabled', () => {
    const input = resource({ ...selector, mode: 'Spot' });
    const verdict = validatePodPlacement(input);
    if (!verdict.valid) throw new Error('valid expected');
    expect(placementWarnings(verdict.placement, input).map((issue) => issue.field)).toEqual(['spec.enable']);
  });

  it('normalizes to a placement whose resource validates back to it', () => {
    const spec = fc.record({
      enable: fc.boolean(),
      priority: fc.integer({ min: -2147483648, max: 2147483647 }),
      mode: fc.constantFrom('Spot', 'NonSpot', 'Diversity'),
      spotPercent: fc.integer({ min: 0, max: 100 }),
      minOnDemand: fc.integer({ min: 0, max: 10_000 }),
    });
    fc.assert(
      fc.property(spec, ({ spotPercent, minOnDemand, ...rest }) => {
        const diversity = rest.mode === 'Diversity' ? { spotPercent, minOnDemand } : {};
        const first = validatePodPlacement(resource({ ...rest, ...selector, ...diversity }));
        if (!first.valid) return false;
        const again = validatePodPlacement(placementToResource(first.placement));
        expect(again).toEqual(first);
        return true;
      }),
    );
  });
});
