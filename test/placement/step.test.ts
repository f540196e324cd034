import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import { reviewPod, type RuleSet } from '../../lib/engine/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import {
  CAPACITY_ANNOTATION,
  createPlacementStep,
  parsePlacementPolicy,
  withRecordedCapacity,
  type CapacityFlavour,
  type PlacementPolicy,
} from '../../lib/placement/index.ts';
import { pod, req, required, rule, rules, termOf } from '../support/builders.ts';

const deployment = (overrides: Partial<PlacementPolicy> = {}): PlacementPolicy =>
  parsePlacementPolicy({ namespace: 'production', kind: 'Deployment', name: 'web', mode: 'Spot', ...overrides });
const webPod = (options: Parameters<typeof pod>[0] = {}) =>
  pod({ labels: { app: 'web', 'pod-template-hash': '5d8f7c9b4' }, ...options });

function place(
  input: Pod,
  policy: PlacementPolicy,
  options: { flavour?: CapacityFlavour; ruleSet?: RuleSet; uid?: string } = {},
) {
  const step = createPlacementStep({ flavour: options.flavour ?? 'karpenter', policies: [policy] });
  return reviewPod(
    {
      pod: input,
      namespace: 'production',
      ruleSet: options.ruleSet ?? rules(),
      context: { requestUid: options.uid ?? 'uid-1' },
    },
    { managedSteps: [step] },
  );
}

const requiredOf = (result: Pod) =>
  result.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;

describe('managed capacity placement', () => {
  it.each([
    ['karpenter', 'Spot', 'karpenter.sh/capacity-type', 'spot'],
    ['karpenter', 'NonSpot', 'karpenter.sh/capacity-type', 'on-demand'],
    ['eks', 'Spot', 'eks.amazonaws.com/capacityType', 'SPOT'],
    ['eks', 'NonSpot', 'eks.amazonaws.com/capacityType', 'ON_DEMAND'],
    ['gke', 'Spot', 'cloud.google.com/gke-provisioning', 'spot'],
    ['gke', 'NonSpot', 'cloud.google.com/gke-provisioning', 'standard'],
  ] as const)('with flavour %s and mode %s creates a required selector on %s In [%s]', (flavour, mode, key, value) => {
    const outcome = place(webPod(), deployment({ mode }), { flavour });
    expect(requiredOf(outcome.pod)).toEqual([termOf(req(key, 'In', value))]);
  });

  it('ANDs the requirement into every required term', () => {
    const outcome = place(
      webPod({ required: [termOf(req('zone', 'In', 'a')), termOf(req('zone', 'In', 'b'))] }),
      deployment(),
    );
    expect(requiredOf(outcome.pod)).toEqual([
      termOf(req('zone', 'In', 'a'), req('karpenter.sh/capacity-type', 'In', 'spot')),
      termOf(req('zone', 'In', 'b'), req('karpenter.sh/capacity-type', 'In', 'spot')),
    ]);
  });

  it('runs after every customer rule, so it survives mutationRemove.nodeAffinity.all: true ("It is therefore still present after mutationRemove.nodeAffinity.all: true")', () => {
    const removeAll = rules(rule('drop-affinity', { mutationRemove: { nodeAffinity: { all: true } } }));
    const outcome = place(webPod({ required: [termOf(req('example.com/pool', 'In', 'legacy'))] }), deployment(), {
      ruleSet: removeAll,
    });
    expect(requiredOf(outcome.pod)).toEqual([termOf(req('karpenter.sh/capacity-type', 'In', 'spot'))]);
    expect(outcome.pod.metadata?.annotations?.[APPLIED_ANNOTATION]).toBe('drop-affinity,managed:capacity');
  });

  it('keeps the capacity requirement when a rule removes other keys', () => {
    const swap = rules(
      rule('swap-pool', {
        mutationRemove: { nodeAffinity: { keys: ['example.com/pool'] } },
        mutationAdd: { nodeAffinity: required(termOf(req('example.com/pool', 'In', 'merged'))) },
      }),
    );
    const outcome = place(
      webPod({ required: [termOf(req('example.com/pool', 'In', 'legacy'))] }),
      deployment({ mode: 'NonSpot' }),
      { ruleSet: swap },
    );
    expect(requiredOf(outcome.pod)).toEqual([
      termOf(req('example.com/pool', 'In', 'merged'), req('karpenter.sh/capacity-type', 'In', 'on-demand')),
    ]);
  });

  it.each([
    ['Spot', 'another-request'],
    ['NonSpot', 'another-request'],
    // Diversity draws from the request's uid, so its second pass is the same request's (an API server retry).
    ['Diversity', 'first'],
  ] as const)(
    'is idempotent in mode %s: a second pass over its own output, by request %s, changes nothing',
    (mode, uid) => {
      const first = place(webPod({ required: [termOf(req('zone', 'In', 'a'))] }), deployment({ mode }), {
        uid: 'first',
      });
      const second = place(first.pod, deployment({ mode }), { uid });
      expect(second.patch).toEqual([]);
    },
  );

  it('leaves workloads without a policy alone', () => {
    const outcome = place(webPod({ owner: { kind: 'StatefulSet', name: 'db' } }), deployment());
    expect(outcome.decision).toBe('unchanged');
  });

  it('denies when the capacity requirement would exceed a limit, naming the managed step', () => {
    const wide = webPod({
      required: [termOf(...Array.from({ length: 64 }, (_, index) => req(`example.com/k${index}`, 'Exists')))],
    });
    const outcome = place(wide, deployment());
    expect(outcome.denial?.message).toBe(
      'managed capacity placement (Spot, placement policy production/Deployment/web): requirements in one combined required term would be 65, above the limit of 64',
    );
  });
});

describe('Diversity', () => {
  const diversity = (spotPercent: number) => deployment({ mode: 'Diversity', spotPercent });

  it('places spotPercent of many Pods on Spot, within a few percent', () => {
    for (const spotPercent of [20, 50, 80]) {
      const total = 4000;
      let spot = 0;
      for (let index = 0; index < total; index += 1) {
        const outcome = place(webPod(), diversity(spotPercent), { uid: randomUUID() });
        if (outcome.pod.metadata?.annotations?.[CAPACITY_ANNOTATION] === 'spot') spot += 1;
      }
      expect(Math.abs((100 * spot) / total - spotPercent)).toBeLessThan(3);
    }
  });

  it.each([
    [100, 'on-demand', 'spot'],
    [0, 'spot', 'on-demand'],
  ] as const)(
    'decides alone: under spotPercent %i, 200 Pods whose template says %s all get %s',
    (spotPercent, opted, placed) => {
      const choices = Array.from({ length: 200 }, () => {
        const outcome = place(webPod({ annotations: { [CAPACITY_ANNOTATION]: opted } }), diversity(spotPercent), {
          uid: randomUUID(),
        });
        return [outcome.pod.metadata?.annotations?.[CAPACITY_ANNOTATION], requiredOf(outcome.pod)];
      });
      expect(new Set(choices.map(([choice]) => choice))).toEqual(new Set([placed]));
      const value = placed === 'spot' ? 'spot' : 'on-demand';
      for (const [, terms] of choices) expect(terms).toEqual([termOf(req('karpenter.sh/capacity-type', 'In', value))]);
    },
  );

  it('draws the same choice for the same request, whatever the Pod arrives with', () => {
    for (let index = 0; index < 50; index += 1) {
      const uid = randomUUID();
      const plain = place(webPod(), diversity(50), { uid });
      for (const opted of ['spot', 'on-demand', 'Spot', '']) {
        const carrying = place(webPod({ annotations: { [CAPACITY_ANNOTATION]: opted } }), diversity(50), { uid });
        expect(carrying.pod.metadata?.annotations?.[CAPACITY_ANNOTATION]).toBe(
          plain.pod.metadata?.annotations?.[CAPACITY_ANNOTATION],
        );
      }
    }
  });

  describe("a choice the caller records (withRecordedCapacity), as report passes the running Pod's", () => {
    const placeRecorded = (input: Pod, policy: PlacementPolicy, choice: unknown, uid: string) =>
      reviewPod(
        {
          pod: input,
          namespace: 'production',
          ruleSet: rules(),
          context: withRecordedCapacity({ requestUid: uid }, choice),
        },
        {
          managedSteps: [createPlacementStep({ flavour: 'karpenter', policies: [policy] })],
        },
      );

    it('is kept on a second pass under another request, so that pass changes nothing', () => {
      for (let index = 0; index < 50; index += 1) {
        const first = place(webPod(), diversity(50), { uid: randomUUID() });
        const second = placeRecorded(
          first.pod,
          diversity(50),
          first.pod.metadata?.annotations?.[CAPACITY_ANNOTATION],
          randomUUID(),
        );
        expect(second.patch).toEqual([]);
      }
    });

    it.each([
      ['spot', 0, 'on-demand'],
      ['on-demand', 100, 'spot'],
      ['Spot', 0, 'on-demand'],
    ] as const)(
      '%s is redrawn when spotPercent %i cannot draw it, or it is no choice',
      (recorded, spotPercent, placed) => {
        const outcome = placeRecorded(webPod(), diversity(spotPercent), recorded, 'uid-1');
        expect(outcome.pod.metadata?.annotations?.[CAPACITY_ANNOTATION]).toBe(placed);
      },
    );
  });

  it("spreads a Deployment's Pods across instance types by the labels of their ReplicaSet, pod-template-hash included", () => {
    const outcome = place(webPod(), diversity(50));
    expect(outcome.pod.spec?.topologySpreadConstraints).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'node.kubernetes.io/instance-type',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { app: 'web', 'pod-template-hash': '5d8f7c9b4' } },
      },
    ]);
  });

  /** Pod `ordinal` of the StatefulSet ledger, labelled as the StatefulSet controller labels it, at `revision`. */
  const ledgerPod = (ordinal: number, revision = 'ledger-6c8f7d9b5') =>
    pod({
      name: `ledger-${ordinal}`,
      owner: { kind: 'StatefulSet', name: 'ledger' },
      labels: {
        app: 'ledger',
        tier: 'db',
        'controller-revision-hash': revision,
        'statefulset.kubernetes.io/pod-name': `ledger-${ordinal}`,
        'apps.kubernetes.io/pod-index': String(ordinal),
      },
    });
  const statefulSet = (spotPercent: number) =>
    parsePlacementPolicy({
      namespace: 'production',
      kind: 'StatefulSet',
      name: 'ledger',
      mode: 'Diversity',
      spotPercent,
    });

  it('gives every Pod of a StatefulSet, at any revision, one spread whose selector selects them all', () => {
    const pods = [ledgerPod(0), ledgerPod(1), ledgerPod(2, 'ledger-7d9f8b6c5')];

    const spreads = pods.map((input, index) => place(input, statefulSet(50), { uid: `uid-${index}` }).pod.spec);

    for (const spec of spreads)
      expect(spec?.topologySpreadConstraints).toEqual([
        {
          maxSkew: 1,
          topologyKey: 'node.kubernetes.io/instance-type',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { app: 'ledger', tier: 'db' } },
        },
      ]);
    const selector = Object.entries({ app: 'ledger', tier: 'db' });
    for (const input of pods)
      expect(selector.every(([key, value]) => input.metadata?.labels?.[key] === value)).toBe(true);
  });

  it.each([
    {
      name: 'an Indexed Job Pod leaves out its completion index',
      labels: { 'job-name': 'reindex', 'batch.kubernetes.io/job-completion-index': '3' },
      selector: { 'job-name': 'reindex' },
    },
    {
      name: 'a Pod with only labels of its own gets no spread',
      labels: { 'batch.kubernetes.io/job-completion-index': '3' },
      selector: undefined,
    },
  ] as { name: string; labels: Record<string, string>; selector?: Record<string, string> }[])(
    '$name',
    ({ labels, selector }) => {
      const input = pod({ name: 'reindex-3-x7k2p', owner: { kind: 'Job', name: 'reindex' }, labels });
      const policy = parsePlacementPolicy({ namespace: 'production', kind: 'Job', name: 'reindex', mode: 'Diversity' });

      const outcome = place(input, policy);

      expect(outcome.pod.metadata?.annotations?.[CAPACITY_ANNOTATION]).toMatch(/^(spot|on-demand)$/);
      const constraints = outcome.pod.spec?.topologySpreadConstraints as
        readonly { readonly labelSelector: unknown }[] | undefined;
      expect(constraints?.map((constraint) => constraint.labelSelector)).toEqual(
        selector === undefined ? undefined : [{ matchLabels: selector }],
      );
    },
  );

  it('adds no spread when the Pod already has one on the instance-type key', () => {
    const own = {
      maxSkew: 2,
      topologyKey: 'node.kubernetes.io/instance-type',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { app: 'web' } },
    };
    const input = webPod();
    const withSpread = { ...input, spec: { ...input.spec, topologySpreadConstraints: [own] } } as Pod;
    expect(place(withSpread, diversity(50)).pod.spec?.topologySpreadConstraints).toEqual([own]);
  });
});

describe('parsePlacementPolicy', () => {
  it('defaults spotPercent to 50 for Diversity', () => {
    expect(parsePlacementPolicy({ namespace: 'a', kind: 'Deployment', name: 'b', mode: 'Diversity' }).spotPercent).toBe(
      50,
    );
  });

  it.each([
    [undefined, undefined],
    [0, undefined],
    [3, 3],
  ])('stores minOnDemand %j of a Diversity policy as %j (its default 0 is left out)', (given, stored) => {
    const policy = parsePlacementPolicy({
      namespace: 'a',
      kind: 'Deployment',
      name: 'b',
      mode: 'Diversity',
      ...(given === undefined ? {} : { minOnDemand: given }),
    });
    expect(policy.minOnDemand).toBe(stored);
    expect(Object.hasOwn(policy, 'minOnDemand')).toBe(stored !== undefined);
  });

  it.each([
    [
      { namespace: 'a', kind: 'Deployment', name: 'b', mode: 'Cheap' },
      'placement policy a/Deployment/b: mode: must be one of Spot, NonSpot, Diversity (got "Cheap")',
    ],
    [
      { namespace: 'a', kind: 'Deployment', name: 'b', mode: 'Diversity', spotPercent: 120 },
      'placement policy a/Deployment/b: spotPercent: must be an integer from 0 to 100 (got 120)',
    ],
    [
      { namespace: 'a', kind: 'Deployment', name: 'b', mode: 'Spot', spotPercent: 20 },
      'placement policy a/Deployment/b: spotPercent: is only used with mode Diversity',
    ],
    [
      { namespace: 'a', kind: 'Deployment', name: 'b', mode: 'Spot', minOnDemand: 2 },
      'placement policy a/Deployment/b: minOnDemand: is only used with mode Diversity',
    ],
    [
      { namespace: 'a', kind: 'Deployment', name: 'b', mode: 'Diversity', minOnDemand: -1 },
      'placement policy a/Deployment/b: minOnDemand: must be an integer from 0 to 1000000 (got -1)',
    ],
    [
      { namespace: 'a', kind: 'Deployment', name: 'b', mode: 'Diversity', minOnDemand: '2' },
      'placement policy a/Deployment/b: minOnDemand: must be an integer from 0 to 1000000 (got "2")',
    ],
    [
      { namespace: 'Bad_NS', kind: 'Deployment', name: 'b', mode: 'Spot' },
      'placement policy Bad_NS/Deployment/b: namespace: must be a namespace name (DNS-1123 label)',
    ],
    [
      { namespace: 'a', kind: 'deployment', name: 'b', mode: 'Spot' },
      'placement policy a/deployment/b: kind: must be a workload kind such as Deployment, StatefulSet, CronJob',
    ],
    [
      { namespace: 'a', kind: 'Deployment', name: 'b', mode: 'Spot', weight: 3 },
      'placement policy a/Deployment/b: weight: unknown field; expected one of namespace, kind, name, mode, spotPercent, minOnDemand',
    ],
  ])('rejects %j with a clear message', (input, message) => {
    expect(() => parsePlacementPolicy(input)).toThrow(message);
  });
});
