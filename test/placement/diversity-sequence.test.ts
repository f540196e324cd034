/** Diversity placing Pods by their sequence number: the choice, the deletion cost, the fallback, the stamp. */
import { describe, expect, it } from 'vitest';
import { reviewPod, STAMP_ANNOTATION, type MutationContext, type Pod } from '../../lib/engine/index.ts';
import {
  CAPACITY_ANNOTATION,
  createPlacementStep,
  diversityCounterKey,
  parsePlacementPolicy,
} from '../../lib/placement/index.ts';
import { sequenceChoice } from '../../lib/placement/sequence.ts';
import { keyedStamps } from '../../lib/stamp/index.ts';
import { podFacts } from '../../lib/engine/index.ts';
import { pod, rules } from '../support/builders.ts';

const COST = 'controller.kubernetes.io/pod-deletion-cost';
const KEY = 'StampKeyOfTheDiversityTest0123456789abcdefghijklmnopqrstuvwxyzAB';
const TARGET = { spotPercent: 70, minOnDemand: 2 };
const WEB = parsePlacementPolicy({
  namespace: 'production',
  kind: 'Deployment',
  name: 'web',
  mode: 'Diversity',
  ...TARGET,
});
const LEDGER = parsePlacementPolicy({
  namespace: 'production',
  kind: 'StatefulSet',
  name: 'ledger',
  mode: 'Diversity',
  ...TARGET,
});
const step = createPlacementStep({ flavour: 'karpenter', policies: [WEB, LEDGER] });

const webPod = (annotations?: Record<string, string>) =>
  pod({
    labels: { app: 'web', 'pod-template-hash': '5d8f7c9b4' },
    ...(annotations === undefined ? {} : { annotations }),
  });
const ledgerPod = (ordinal: number, labelled = true) =>
  pod({
    name: `ledger-${ordinal}`,
    owner: { kind: 'StatefulSet', name: 'ledger' },
    labels: { app: 'ledger', ...(labelled ? { 'apps.kubernetes.io/pod-index': String(ordinal) } : {}) },
  });

function place(input: Pod, context: Partial<MutationContext> = {}, stamped = false) {
  return reviewPod(
    {
      pod: input,
      namespace: 'production',
      ruleSet: rules(),
      context: { requestUid: 'b3a1d2c4-0e5f-4a6b-8c7d-9e0f1a2b3c4d', ...context },
    },
    { managedSteps: [step], ...(stamped ? { stamps: keyedStamps(KEY) } : {}) },
  );
}
const annotationsOf = (outcome: ReturnType<typeof place>) => outcome.pod.metadata?.annotations ?? {};

describe('Diversity with a sequence number', () => {
  it('places the Pod numbered k as the sequence rule says, and gives later numbers lower deletion costs', () => {
    const outcomes = Array.from({ length: 10 }, (_, k) => place(webPod(), { sequence: k }));
    expect(outcomes.map((outcome) => annotationsOf(outcome)[CAPACITY_ANNOTATION])).toEqual(
      Array.from({ length: 10 }, (_, k) => sequenceChoice(k, TARGET)),
    );
    expect(outcomes.map((outcome) => annotationsOf(outcome)[COST])).toEqual(
      Array.from({ length: 10 }, (_, k) => String(2_147_483_647 - k)),
    );
    expect(outcomes.flatMap((outcome) => outcome.warnings)).toEqual([]);
  });

  it('keeps a deletion cost the Pod sets itself, and warns that a scale-down may not keep the split', () => {
    const outcome = place(webPod({ [COST]: '-5' }), { sequence: 4 });
    expect(annotationsOf(outcome)[COST]).toBe('-5');
    expect(outcome.warnings).toEqual([
      `managed capacity placement (Diversity): the Pod sets its own ${COST}, so a scale-down may not keep the workload's Spot split`,
    ]);
  });

  it('draws by the uid, and says so, when the sequence number could not be had', () => {
    const outcome = place(webPod(), { sequenceUnavailable: "the counter of the workload's Pods failed" });
    expect(annotationsOf(outcome)[CAPACITY_ANNOTATION]).toMatch(/^(spot|on-demand)$/);
    expect(annotationsOf(outcome)[COST]).toBeUndefined();
    expect(outcome.warnings).toEqual([
      "managed capacity placement (Diversity): Spot or on-demand was drawn at random for this Pod, since the counter of the workload's Pods failed",
    ]);
  });

  it.each([true, false])(
    'places a StatefulSet Pod by its ordinal (labelled with apps.kubernetes.io/pod-index: %s), with no deletion cost',
    (labelled) => {
      const outcomes = Array.from({ length: 8 }, (_, ordinal) =>
        place(ledgerPod(ordinal, labelled), { sequenceUnavailable: 'ignored for an ordinal' }),
      );
      expect(outcomes.map((outcome) => annotationsOf(outcome)[CAPACITY_ANNOTATION])).toEqual(
        Array.from({ length: 8 }, (_, k) => sequenceChoice(k, TARGET)),
      );
      expect(outcomes.map((outcome) => annotationsOf(outcome)[COST])).toEqual(Array(8).fill(undefined));
      expect(outcomes.flatMap((outcome) => outcome.warnings)).toEqual([]);
    },
  );

  it('reviews a stamped Pod again with the number its stamp recorded, changing nothing', () => {
    for (let k = 0; k < 8; k += 1) {
      const first = place(webPod(), { sequence: k }, true);
      expect(first.pod.metadata?.annotations?.[STAMP_ANNOTATION]).toBeDefined();
      const again = reviewPod(
        { pod: first.pod, namespace: 'production', ruleSet: rules(), context: { requestUid: 'another-request' } },
        {
          managedSteps: [step],
          stamps: keyedStamps(KEY),
        },
      );
      expect(again.patch).toEqual([]);
      expect(again.stamp).toBe('checked');
    }
  });
});

describe('diversityCounterKey', () => {
  const facts = (input: Pod) => podFacts(input, 'production');

  it.each([
    ['a Deployment Pod', webPod(), 'production/Deployment/web#5d8f7c9b4'],
    [
      'an Argo Rollout Pod',
      pod({
        owner: { kind: 'ReplicaSet', name: 'web-6b7c8d9f' },
        labels: { app: 'web', 'rollouts-pod-template-hash': '6b7c8d9f' },
      }),
      'production/Rollout/web#6b7c8d9f',
    ],
    ['a StatefulSet Pod, numbered by its ordinal', ledgerPod(3), undefined],
  ] as const)('keys %s as %s', (_, input, key) => {
    const placing = createPlacementStep({
      flavour: 'karpenter',
      policies: [WEB, LEDGER, { ...WEB, kind: 'Rollout' }],
    });
    expect(diversityCounterKey(facts(input), placing.choose(facts(input)))).toBe(key);
  });

  it('gives none for a Pod whose placement is not Diversity, or that has none', () => {
    const spot = createPlacementStep({ flavour: 'karpenter', policies: [{ ...WEB, mode: 'Spot' }] });
    expect(diversityCounterKey(facts(webPod()), spot.choose(facts(webPod())))).toBeUndefined();
    const none = createPlacementStep({ flavour: 'karpenter', policies: [] });
    expect(diversityCounterKey(facts(webPod()), none.choose(facts(webPod())))).toBeUndefined();
  });
});
