import { describe, expect, it } from 'vitest';
import { matchRule, podFacts, rulesFor } from './support.ts';
import { pod, preferred, req, required, termOf } from '../support/builders.ts';

const pool = (...values: string[]) => req('example.com/pool', 'In', ...values);
const zone = (value: string) => req('topology.kubernetes.io/zone', 'In', value);
const anyAdd = { mutationAdd: { annotations: { 'example.com/seen': 'true' } } };

function failure(workloadSelector: Record<string, unknown>, input = pod()) {
  const [compiled] = rulesFor({ workloadSelector, ...anyAdd }).rules;
  return matchRule(compiled!, podFacts(input, input.metadata?.namespace ?? 'production'));
}

describe('workloadSelector dimensions', () => {
  it.each([
    ['all: true matches everything', { all: true }, pod(), undefined],
    [
      'an absent dimension matches everything',
      { kinds: ['Deployment'] },
      pod({ namespace: 'anywhere', labels: { 'pod-template-hash': '5d8f7c9b4' } }),
      undefined,
    ],
    ['namespaces are ORed', { namespaces: ['staging', 'production'] }, pod(), undefined],
    ['a namespace not listed fails on namespaces', { namespaces: ['staging'] }, pod(), 'namespaces'],
    [
      'kinds match the resolved workload',
      { kinds: ['Deployment'] },
      pod({ labels: { 'pod-template-hash': '5d8f7c9b4' } }),
      undefined,
    ],
    ['kinds fail for another workload kind', { kinds: ['StatefulSet'] }, pod(), 'kinds'],
    [
      'names match the resolved workload name',
      { names: ['web'] },
      pod({ labels: { 'pod-template-hash': '5d8f7c9b4' } }),
      undefined,
    ],
    ['names fail for another name', { names: ['api'] }, pod(), 'names'],
    [
      'matchLabels must all be present',
      { labelSelector: { matchLabels: { app: 'web', tier: 'front' } } },
      pod({ labels: { app: 'web' } }),
      'labelSelector.matchLabels',
    ],
    [
      'matchExpressions In holds',
      { labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } },
      pod({ labels: { app: 'web' } }),
      undefined,
    ],
    [
      'matchExpressions NotIn holds for an absent label',
      { labelSelector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] } },
      pod({ labels: { app: 'web' } }),
      undefined,
    ],
    [
      'matchExpressions DoesNotExist fails when the label is there',
      { labelSelector: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] } },
      pod({ labels: { app: 'web' } }),
      'labelSelector.matchExpressions',
    ],
    [
      'nodeSelectorMatch needs every pair in spec.nodeSelector',
      { nodeSelectorMatch: { 'example.com/pool': 'legacy' } },
      pod({ nodeSelector: { 'example.com/pool': 'legacy', 'kubernetes.io/os': 'linux' } }),
      undefined,
    ],
    [
      'nodeSelectorMatch fails on another value',
      { nodeSelectorMatch: { 'example.com/pool': 'legacy' } },
      pod({ nodeSelector: { 'example.com/pool': 'new' } }),
      'nodeSelectorMatch',
    ],
    [
      'tolerationsMatch compares only the fields the entry sets',
      { tolerationsMatch: [{ key: 'example.com/spot' }] },
      pod({ tolerations: [{ key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' }] }),
      undefined,
    ],
    [
      'tolerationsMatch fails when a set field differs',
      { tolerationsMatch: [{ key: 'example.com/spot', effect: 'NoExecute' }] },
      pod({ tolerations: [{ key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' }] }),
      'tolerationsMatch',
    ],
    [
      'tolerationsMatch treats an absent operator on the Pod as Equal',
      { tolerationsMatch: [{ key: 'example.com/gpu', operator: 'Equal', value: 'true' }] },
      pod({ tolerations: [{ key: 'example.com/gpu', value: 'true' }] }),
      undefined,
    ],
    [
      'every present dimension must match ("Selector dimensions are ANDed together")',
      { namespaces: ['production'], kinds: ['Job'] },
      pod(),
      'kinds',
    ],
  ])('%s', (_, selector, input, failedDimension) => {
    expect(failure(selector, input)).toBe(failedDimension);
  });
});

describe('nodeAffinityMatch', () => {
  const match = (selector: Record<string, unknown>, input: ReturnType<typeof pod>) =>
    failure({ nodeAffinityMatch: selector }, input);

  it.each([
    [
      'the selector term may be a subset of the Pod term ("The selector term may be a subset of the Pod term")',
      required(termOf(pool('legacy'))),
      [termOf(pool('legacy'), zone('z1'))],
      undefined,
    ],
    [
      'terms are ORed on both sides ("nodeSelectorTerms are ORed")',
      required(termOf(pool('x')), termOf(zone('z1'))),
      [termOf(pool('legacy')), termOf(zone('z1'))],
      undefined,
    ],
    [
      'values compare as a set ("Values are compared as a set")',
      required(termOf(pool('a', 'b', 'a'))),
      [termOf(req('example.com/pool', 'In', 'b', 'a'))],
      undefined,
    ],
    [
      'a different value set does not match',
      required(termOf(pool('a'))),
      [termOf(pool('a', 'b'))],
      'nodeAffinityMatch.required',
    ],
    [
      'a different operator does not match ("A requirement must have the same key and operator")',
      required(termOf(pool('a'))),
      [termOf(req('example.com/pool', 'NotIn', 'a'))],
      'nodeAffinityMatch.required',
    ],
    [
      'requirements of one selector term must sit in one Pod term ("Requirements inside one term are ANDed")',
      required(termOf(pool('a'), zone('z1'))),
      [termOf(pool('a')), termOf(zone('z1'))],
      'nodeAffinityMatch.required',
    ],
    [
      'a Pod without required affinity does not match',
      required(termOf(pool('a'))),
      undefined,
      'nodeAffinityMatch.required',
    ],
  ])('%s', (_, selector, podTerms, failedDimension) => {
    expect(match(selector, pod(podTerms === undefined ? {} : { required: podTerms }))).toBe(failedDimension);
  });

  it('matches preferred entries on the same weight and a matching term ("Preferred matching requires the same weight and a matching preference term")', () => {
    const selector = { preferredDuringSchedulingIgnoredDuringExecution: [preferred(50, zone('z1'))] };
    expect(match(selector, pod({ preferred: [preferred(50, zone('z1'), pool('a'))] }))).toBeUndefined();
    expect(match(selector, pod({ preferred: [preferred(40, zone('z1'))] }))).toBe('nodeAffinityMatch.preferred');
  });

  it('needs both required and preferred to match when both are configured ("If both required and preferred selectors are configured, both must match")', () => {
    const selector = {
      ...required(termOf(pool('a'))),
      preferredDuringSchedulingIgnoredDuringExecution: [preferred(50, zone('z1'))],
    };
    expect(match(selector, pod({ required: [termOf(pool('a'))] }))).toBe('nodeAffinityMatch.preferred');
    expect(
      match(selector, pod({ required: [termOf(pool('a'))], preferred: [preferred(50, zone('z1'))] })),
    ).toBeUndefined();
  });
});
