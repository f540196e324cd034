/**
 * One PodPlacement contract, two enforcement points: the API server (infra/podplacement-crd.yaml, emulated with its
 * schema and CEL rules) and validatePodPlacement give the same verdict, and a CEL rejection carries the validator's
 * message.
 */
import { describe, expect, it } from 'vitest';
import { validatePodPlacement } from '../../lib/api/index.ts';
import { loadCrd } from './corpus.ts';
import { createCrdAdmission } from './structural-schema.ts';

const admit = createCrdAdmission(loadCrd('podplacement-crd.yaml'));

function placement(spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodPlacement', metadata: { name: 'batch' }, spec };
}

const selector = { workloadSelector: { namespaces: ['batch'] } };

describe('valid PodPlacements', () => {
  it.each([
    ['Spot for a namespace', { enable: true, ...selector, mode: 'Spot' }],
    [
      'NonSpot by label',
      { enable: true, workloadSelector: { labelSelector: { matchLabels: { tier: 'db' } } }, mode: 'NonSpot' },
    ],
    [
      'Diversity with its share and minimum',
      { enable: true, priority: -3, ...selector, mode: 'Diversity', spotPercent: 70, minOnDemand: 2 },
    ],
    ['Diversity with defaults', { ...selector, mode: 'Diversity' }],
  ])('%s is accepted by the CRD and by the validator', (_name, spec) => {
    expect(admit(placement(spec)).errors).toEqual([]);
    expect(validatePodPlacement(placement(spec)).valid).toBe(true);
  });
});

describe('invalid PodPlacements', () => {
  it.each([
    ['spotPercent with Spot', { ...selector, mode: 'Spot', spotPercent: 30 }, 'spec.spotPercent'],
    ['minOnDemand with NonSpot', { ...selector, mode: 'NonSpot', minOnDemand: 1 }, 'spec.minOnDemand'],
    ['a mode that does not exist', { ...selector, mode: 'spot' }, 'spec.mode'],
    ['a Spot share above 100', { ...selector, mode: 'Diversity', spotPercent: 101 }, 'spec.spotPercent'],
    ['a negative minimum', { ...selector, mode: 'Diversity', minOnDemand: -1 }, 'spec.minOnDemand'],
    ['an empty selector', { workloadSelector: {}, mode: 'Spot' }, 'spec.workloadSelector'],
    ['no mode', { ...selector }, 'spec.mode'],
  ])('%s is rejected by both, the validator naming %s', (_name, spec, field) => {
    const crd = admit(placement(spec)).errors;
    const verdict = validatePodPlacement(placement(spec));
    if (verdict.valid) throw new Error('the validator accepted it');

    expect(crd.length).toBeGreaterThan(0);
    expect(verdict.invalid.issues.map((issue) => issue.field)).toContain(field);
    const reasons = verdict.invalid.issues.map((issue) => issue.reason);
    for (const { rule, message } of crd) if (rule !== undefined) expect(reasons).toContain(message);
  });
});
