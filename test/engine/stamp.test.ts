import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NormalizedRule } from '../../lib/api/index.ts';
import {
  asRecreated,
  compileRuleSet,
  reviewPod,
  STAMP_ANNOTATION,
  type MutationOptions,
  type Pod,
  type RuleSet,
} from '../../lib/engine/index.ts';
import { createPlacementStep } from '../../lib/placement/index.ts';
import { KEYLESS_STAMPS, keyedStamps } from '../../lib/stamp/index.ts';
import {
  randomArrival,
  randomPod,
  randomRules,
  randomRulesWith,
  storedByApiServer,
  withNodeTopology,
  type BoundNode,
} from '../support/arbitraries.ts';
import { pod, preferred, req, required, rule, rules, termOf } from '../support/builders.ts';
import { MAX_ANNOTATION_BYTES } from '../../lib/engine/stamp.ts';

const STAMPS = keyedStamps('engine-stamp-test-key-0123456789abcdefghij');
const WITH_STAMPS: MutationOptions = { stamps: STAMPS };

function review(
  incoming: unknown,
  ruleSet: RuleSet,
  options: MutationOptions = WITH_STAMPS,
  requestUid = 'uid-second',
  namespace = 'production',
) {
  return reviewPod({ pod: incoming, namespace, ruleSet, context: { requestUid } }, options);
}

/** The Pod the first review sent, as the API server stored it, recreated from its own spec: what a recreation sends again. */
function firstReviewed(incoming: Pod, ruleSet: RuleSet, options: MutationOptions = WITH_STAMPS): Pod {
  return asRecreated(storedByApiServer(review(incoming, ruleSet, options, 'uid-first').pod));
}

function stampOf(stamped: Pod): Record<string, unknown> {
  return JSON.parse(stamped.metadata!.annotations![STAMP_ANNOTATION]!) as Record<string, unknown>;
}

/**
 * A Pod as stored, its stamp read: what it records and its seed, in any member order (the sum and MAC are of its
 * bytes, which follow the member order of the Pod it was taken from).
 */
function comparable(target: Pod, node?: BoundNode): unknown {
  const stored = storedByApiServer(target, node);
  const text = stored.metadata?.annotations?.[STAMP_ANNOTATION];
  if (text === undefined) return stored;
  const stamp = JSON.parse(text) as Record<string, unknown>;
  delete stamp.sum;
  delete stamp.mac;
  return {
    ...stored,
    metadata: { ...stored.metadata, annotations: { ...stored.metadata?.annotations, [STAMP_ANNOTATION]: stamp } },
  };
}

function withAnnotation(target: Pod, key: string, value: string | undefined): Pod {
  const annotations: Record<string, string> = { ...target.metadata?.annotations };
  if (value === undefined) delete annotations[key];
  else annotations[key] = value;
  return { ...target, metadata: { ...target.metadata, annotations } };
}

function withoutStamp(target: Pod): Pod {
  return withAnnotation(target, STAMP_ANNOTATION, undefined);
}

/** A stored Pod as `kubectl get -o yaml` prints it (no managedFields), with spec.nodeName deleted to recreate it. */
function fromGetYaml(stored: Pod): Pod {
  const metadata = { ...stored.metadata };
  delete metadata.managedFields;
  const spec = { ...stored.spec };
  delete spec.nodeName;
  return { ...stored, metadata, spec };
}

// A bare Pod its author names by generateName, as `kubectl create` of a Job-less batch or a debug shell sends it.
const BARE_GENERATED = pod({ generateName: 'debug-shell-', owner: null, labels: { app: 'debug' } });
const NODE_IN_ZONE_A = { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'a' } };

/**
 * The cases in which a second review used to change the Pod (docs/api.md, "Re-applying rules", lists the first three),
 * each the smallest rule set that shows it; the fourth is the one it does not list: a dropped rule had added what
 * another removes.
 */
const REVIEWED_TWICE: readonly { readonly name: string; readonly incoming: Pod; readonly ruleSet: RuleSet }[] = [
  {
    name: 'a rule removes a key that it adds in a preferred term mixed with another key',
    incoming: pod({ preferred: [preferred(10, req('zone', 'In', 'b'), req('pool', 'In', 'x'))] }),
    ruleSet: rules(
      rule('prefer-zone-a', {
        mutationRemove: { nodeAffinity: { keys: ['zone'] } },
        mutationAdd: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              preferred(10, req('zone', 'In', 'a'), req('tier', 'In', 'b')),
            ],
          },
        },
      }),
    ),
  },
  {
    name: 'a rule selects on what another rule added',
    incoming: pod(),
    ruleSet: rules(
      rule('set-pool', { mutationAdd: { nodeSelector: { pool: 'b' } } }),
      rule('annotate-pool-b', {
        workloadSelector: { nodeSelectorMatch: { pool: 'b' } },
        mutationAdd: { annotations: { 'example.com/pool': 'b' } },
      }),
    ),
  },
  {
    name: 'a rule that no longer matches had removed what another rule adds',
    incoming: pod({ nodeSelector: { pool: 'a' } }),
    ruleSet: rules(
      rule('add-tier', { priority: 0, mutationAdd: { nodeSelector: { tier: 'x' } } }),
      rule('leave-pool-a', {
        priority: 1,
        workloadSelector: { nodeSelectorMatch: { pool: 'a' } },
        mutationRemove: { nodeSelector: { keys: ['pool', 'tier'] } },
      }),
    ),
  },
  {
    name: "a rule that no longer matches had added what another rule removes (the issue's example)",
    incoming: pod({ required: [termOf(req('pool', 'In', 'old'))] }),
    ruleSet: rules(
      rule('a', {
        priority: -1,
        mutationRemove: { nodeAffinity: { all: true } },
        mutationAdd: { nodeAffinity: required(termOf(req('pool', 'In', 'new'))) },
      }),
      rule('b', {
        priority: 3,
        workloadSelector: { nodeAffinityMatch: required(termOf(req('pool', 'In', 'old'))) },
        mutationAdd: {
          nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [preferred(10, req('zone', 'In', 'a'))] },
        },
      }),
    ),
  },
];

describe('a second review of a Pod the webhook stamped', () => {
  it.each(REVIEWED_TWICE)(
    'changes nothing when $name, which a review without stamps changes',
    ({ incoming, ruleSet }) => {
      const unstamped = review(firstReviewed(incoming, ruleSet, {}), ruleSet, {});
      const stamped = review(firstReviewed(incoming, ruleSet), ruleSet);

      expect(unstamped.patch).not.toEqual([]);
      expect(stamped.stamp).toBe('checked');
      expect(stamped.patch).toEqual([]);
    },
  );

  it("keeps the preferred term of the issue's example, which a review of the running Pod as it is drops", () => {
    const { incoming, ruleSet } = REVIEWED_TWICE[3]!;
    const running = firstReviewed(incoming, ruleSet);
    const preferredTerms = (target: Pod) =>
      target.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;

    expect(preferredTerms(running)).toEqual([preferred(10, req('zone', 'In', 'a'))]);
    expect(preferredTerms(review(running, ruleSet).pod)).toEqual([preferred(10, req('zone', 'In', 'a'))]);
    expect(preferredTerms(review(running, ruleSet, {}).pod)).toBeUndefined();
  });

  it('applies changed rules to the Pod as its author sent it, with the draw of its first review', () => {
    const placement: MutationOptions = {
      stamps: STAMPS,
      managedSteps: [
        createPlacementStep({
          flavour: 'karpenter',
          policies: [{ namespace: 'production', kind: 'Deployment', name: 'web', mode: 'Diversity', spotPercent: 50 }],
        }),
      ],
    };
    const someRules = randomRulesWith({ labels: true });
    fc.assert(
      fc.property(randomArrival, someRules, someRules, (arrival, before, after) => {
        const { pod: sent, node, boundAtCreation } = arrival;
        // PodTopologyLabels runs before the webhook on a Pod created bound.
        const incoming = boundAtCreation ? withNodeTopology(sent, node) : sent;
        const first = review(incoming, compileRuleSet(before), placement, 'uid-first');
        fc.pre(first.decision !== 'denied');
        // Only a stamp says how the author sent the Pod, and which draw its first review made.
        fc.pre(first.pod.metadata?.annotations?.[STAMP_ANNOTATION] !== undefined);
        const again = review(asRecreated(storedByApiServer(first.pod, node)), compileRuleSet(after), placement);
        const fresh = review(incoming, compileRuleSet(after), placement, 'uid-first');

        expect(again.decision === 'denied').toBe(fresh.decision === 'denied');
        if (fresh.decision !== 'denied') expect(comparable(again.pod, node)).toEqual(comparable(fresh.pod, node));
      }),
      { numRuns: 500 },
    );
  });

  it('matches the Pod without the topology labels the API server added at binding, and keeps them', () => {
    const ruleSet = rules(
      rule('pin-merged', { mutationAdd: { nodeSelector: { 'example.com/node-pool': 'merged' } } }),
      rule('zone-a-only', {
        workloadSelector: { labelSelector: { matchLabels: { 'topology.kubernetes.io/zone': 'eu-west-1a' } } },
        mutationAdd: { annotations: { 'example.com/zone': 'a' } },
      }),
    );
    // Recreated from `kubectl get -o yaml`, which prints no managedFields: the labels binding added are sent back.
    const running = fromGetYaml(storedByApiServer(review(pod(), ruleSet, WITH_STAMPS, 'uid-first').pod));
    const again = review(running, ruleSet);

    expect(running.metadata?.labels).toMatchObject({ 'topology.kubernetes.io/zone': 'eu-west-1a' });
    expect(again.stamp).toBe('checked');
    expect(again.applied).toEqual(['pin-merged']);
    expect(again.patch).toEqual([]);
  });

  it("matches the Pod with its author's own topology labels, which binding overwrote, and keeps the Node's", () => {
    const ruleSet = rules(
      rule('zone-b-to-merged', {
        workloadSelector: { labelSelector: { matchLabels: { 'topology.kubernetes.io/zone': 'b' } } },
        mutationAdd: { nodeSelector: { 'example.com/node-pool': 'merged' } },
      }),
    );
    const authored = pod({
      labels: { app: 'web', 'pod-template-hash': '5d8f7c9b4', 'topology.kubernetes.io/zone': 'b' },
    });
    const first = review(authored, ruleSet, WITH_STAMPS, 'uid-first');
    const running = asRecreated(storedByApiServer(first.pod, NODE_IN_ZONE_A));
    const again = review(running, ruleSet);

    expect(stampOf(first.pod).before).toMatchObject({ labels: { 'topology.kubernetes.io/zone': 'b' } });
    expect(running.metadata?.labels?.['topology.kubernetes.io/zone']).toBe('a');
    expect(again.stamp).toBe('checked');
    expect(again.applied).toEqual(['zone-b-to-merged']);
    expect(again.patch).toEqual([]);
  });

  it('checks the stamp of a bare Pod created with generateName, whose name the API server generates after admission', () => {
    const ruleSet = rules(rule('pin-merged', { mutationAdd: { nodeSelector: { 'example.com/node-pool': 'merged' } } }));
    const first = review(BARE_GENERATED, ruleSet, WITH_STAMPS, 'uid-first');
    const running = asRecreated(storedByApiServer(first.pod));
    const again = review(running, ruleSet);

    expect(stampOf(first.pod).before).toMatchObject({ name: null });
    expect(running.metadata?.name).toMatch(/^debug-shell-.{5}$/);
    expect(again.stamp).toBe('checked');
    expect(again.workload).toEqual({ kind: 'Pod', name: running.metadata?.name, namespace: 'production' });
    expect(again.patch).toEqual([]);
  });

  it('matches a bare Pod created with generateName as its author sent it: a rule naming its generated name never applies', () => {
    const ruleSet = rules(
      rule('pin-merged', { mutationAdd: { nodeSelector: { 'example.com/node-pool': 'merged' } } }),
      rule('by-generated-name', {
        workloadSelector: { names: ['debug-shell-x7k2p'] },
        mutationAdd: { annotations: { 'example.com/named': 'yes' } },
      }),
    );
    const first = review(BARE_GENERATED, ruleSet, WITH_STAMPS, 'uid-first');
    const running = asRecreated(storedByApiServer(first.pod));
    const again = review(running, ruleSet);

    expect(running.metadata?.name).toBe('debug-shell-x7k2p');
    expect(first.applied).toEqual(['pin-merged']);
    expect(again.applied).toEqual(['pin-merged']);
    expect(again.patch).toEqual([]);
  });

  it('puts back what the first review changed and drops the stamp when no rule applies any more', () => {
    const { incoming, ruleSet } = REVIEWED_TWICE[3]!;
    const again = review(firstReviewed(incoming, ruleSet), rules());

    expect(again.pod.spec?.affinity).toEqual(incoming.spec?.affinity);
    expect(again.pod.metadata?.annotations ?? {}).toEqual({});
  });
});

/** Edits of what the stamp vouches for, and copies into another namespace or workload: each a Pod the webhook did not send. */
const EDITS: readonly { readonly name: string; readonly edit: (stamped: Pod) => Pod; readonly namespace?: string }[] = [
  {
    name: 'a label added',
    edit: (stamped) => ({
      ...stamped,
      metadata: { ...stamped.metadata, labels: { ...stamped.metadata?.labels, 'example.com/edited': 'yes' } },
    }),
  },
  {
    name: 'the nodeSelector edited',
    edit: (stamped) => ({
      ...stamped,
      spec: { ...stamped.spec, nodeSelector: { ...stamped.spec?.nodeSelector, 'example.com/edited': 'yes' } },
    }),
  },
  {
    name: 'a toleration added',
    edit: (stamped) => ({
      ...stamped,
      spec: {
        ...stamped.spec,
        tolerations: [...(stamped.spec?.tolerations ?? []), { key: 'example.com/edited', operator: 'Exists' }],
      },
    }),
  },
  {
    name: 'the node affinity edited',
    edit: (stamped) => ({
      ...stamped,
      spec: {
        ...stamped.spec,
        affinity: {
          ...stamped.spec?.affinity,
          nodeAffinity: {
            ...stamped.spec?.affinity?.nodeAffinity,
            preferredDuringSchedulingIgnoredDuringExecution: [preferred(1, req('example.com/edited', 'Exists'))],
          },
        },
      },
    }),
  },
  {
    name: 'an annotation the review changed edited',
    edit: (stamped) => withAnnotation(stamped, 'podmutation.agent.cloudpilot.ai/applied', 'edited'),
  },
  {
    name: "the stamp's seed changed",
    edit: (stamped) =>
      withAnnotation(stamped, STAMP_ANNOTATION, JSON.stringify({ ...stampOf(stamped), seed: 'chosen-by-the-author' })),
  },
  {
    name: "the stamp's MAC left out",
    edit: (stamped) =>
      withAnnotation(stamped, STAMP_ANNOTATION, JSON.stringify({ ...stampOf(stamped), mac: undefined })),
  },
  {
    name: 'a copy into another namespace',
    edit: (stamped) => ({ ...stamped, metadata: { ...stamped.metadata, namespace: 'staging' } }),
    namespace: 'staging',
  },
  {
    name: 'a copy into another workload',
    edit: (stamped) => ({
      ...stamped,
      metadata: {
        ...stamped.metadata,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'other-5d8f7c9b4', controller: true }],
      },
    }),
  },
];

describe('a stamped Pod that the webhook did not send as it is', () => {
  it.each(EDITS)('is reviewed as new, without its stamp, after $name', ({ edit, namespace = 'production' }) => {
    fc.assert(
      fc.property(randomPod, randomRules, (incoming, generated) => {
        const ruleSet = compileRuleSet(generated);
        const first = review(incoming, ruleSet, WITH_STAMPS, 'uid-first');
        fc.pre(first.pod.metadata?.annotations?.[STAMP_ANNOTATION] !== undefined);
        const edited = edit(asRecreated(storedByApiServer(first.pod)));
        const again = review(edited, ruleSet, WITH_STAMPS, 'uid-second', namespace);

        expect(again.stamp).toBe('refused');
        expect(again.pod).toEqual(review(withoutStamp(edited), ruleSet, WITH_STAMPS, 'uid-second', namespace).pod);
      }),
      { numRuns: 100 },
    );
  });

  it('is reviewed as new when its stamp was written without the key, as `podmutation review` writes it', () => {
    const { incoming, ruleSet } = REVIEWED_TWICE[3]!;
    const offline = firstReviewed(incoming, ruleSet, { stamps: KEYLESS_STAMPS });

    expect(stampOf(offline)).not.toHaveProperty('mac');
    expect(review(offline, ruleSet).stamp).toBe('refused');
  });

  it.each([
    ['not JSON', 'stamped'],
    ['another version', JSON.stringify({ v: 2, seed: 'x', sum: 'y', before: {} })],
    ['an unknown field', JSON.stringify({ v: 1, seed: 'x', sum: 'y', before: {}, extra: true })],
    ['an unknown field in before', JSON.stringify({ v: 1, seed: 'x', sum: 'y', before: { labels: {} } })],
    ['no seed', JSON.stringify({ v: 1, sum: 'y', before: {} })],
    ['nesting past the bound', `${'['.repeat(200)}${']'.repeat(200)}`],
  ])('refuses a stamp that is %s, and reviews the Pod as new', (_name, text) => {
    const ruleSet = rules(rule('annotate', { mutationAdd: { annotations: { 'example.com/a': 'b' } } }));
    const forged = pod({ annotations: { [STAMP_ANNOTATION]: text } });
    const outcome = review(forged, ruleSet);

    expect(outcome.stamp).toBe('refused');
    expect(outcome.pod).toEqual(review(withoutStamp(forged), ruleSet).pod);
  });

  it('loses its stamp even when no rule applies to it', () => {
    const forged = pod({ annotations: { [STAMP_ANNOTATION]: 'stamped' } });

    expect(review(forged, rules()).patch).toEqual([
      { op: 'remove', path: '/metadata/annotations/podmutation.agent.cloudpilot.ai~1stamp' },
    ]);
  });
});

describe('stamps checked without the key', () => {
  it("read the webhook's stamp by its sum and keep it byte for byte: the offline review of its Pod changes nothing", () => {
    const { incoming, ruleSet } = REVIEWED_TWICE[3]!;
    const outcome = review(firstReviewed(incoming, ruleSet), ruleSet, { stamps: KEYLESS_STAMPS });

    expect(outcome.stamp).toBe('checked');
    expect(outcome.patch).toEqual([]);
  });
});

describe('the stamp of a Pod whose annotations are near their limit', () => {
  it("denies the Pod when the stamp would take its annotations past Kubernetes' 256 KiB, and admits it below", () => {
    const ruleSet = rules(rule('add-pool', { mutationAdd: { nodeSelector: { pool: 'merged' } } }));
    const bulky = (bytes: number) => pod({ annotations: { 'example.com/bulk': 'x'.repeat(bytes) } });

    const denied = review(bulky(MAX_ANNOTATION_BYTES - 100), ruleSet);
    expect(denied.decision).toBe('denied');
    expect(denied.denial?.message).toMatch(
      /^admission: bytes of the Pod's annotations with the stamp .* above the limit of 262144$/,
    );
    expect(review(bulky(MAX_ANNOTATION_BYTES - 2000), ruleSet).decision).toBe('mutated');
  });
});

describe('rules that only audit', () => {
  it('stamp the audited annotation they add, so that a second review changes nothing', () => {
    const audited: NormalizedRule = {
      ...rule('audit-pool', { mutationAdd: { nodeSelector: { pool: 'merged' } } }),
      enforcement: 'audit',
    };
    const ruleSet = rules(audited);
    const again = review(firstReviewed(pod(), ruleSet), ruleSet);

    expect(again.audited.map((match) => match.name)).toEqual(['audit-pool']);
    expect(again.patch).toEqual([]);
  });
});
