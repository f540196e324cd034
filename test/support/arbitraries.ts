import fc from 'fast-check';
import { validatePodMutation, type NormalizedRule } from '../../lib/api/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import type {
  NodeSelectorRequirement,
  NodeSelectorTerm,
  PreferredSchedulingTerm,
  Toleration,
} from '../../lib/scheduling/index.ts';
import type { NodeView } from '../../lib/scheduling/index.ts';

// A small key and value space, so random Pods and rules overlap often enough to exercise matching and canonicalization.
const LABEL_KEYS = ['example.com/pool', 'topology.kubernetes.io/zone', 'example.com/tier'];
const NUMERIC_KEY = 'example.com/generation';
const VALUES = ['a', 'b', 'c'];
const NUMBERS = ['1', '2', '3', '4'];
const WEIGHTS = [10, 50, 100];

const labelRequirement: fc.Arbitrary<NodeSelectorRequirement> = fc.oneof(
  fc.record({
    key: fc.constantFrom(...LABEL_KEYS),
    operator: fc.constantFrom('In', 'NotIn'),
    values: fc.array(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 3 }),
  }),
  fc.record({ key: fc.constantFrom(...LABEL_KEYS, NUMERIC_KEY), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
  fc.record({
    key: fc.constant(NUMERIC_KEY),
    operator: fc.constantFrom('Gt', 'Lt'),
    values: fc.tuple(fc.constantFrom(...NUMBERS)).map((value) => [...value]),
  }),
);

const fieldRequirement: fc.Arbitrary<NodeSelectorRequirement> = fc.record({
  key: fc.constant('metadata.name'),
  operator: fc.constantFrom('In', 'NotIn'),
  values: fc.tuple(fc.constantFrom('node-1', 'node-2')).map((value) => [...value]),
});

/** A Pod's node selector term: may be empty and may carry matchFields, as real Pods can. */
const podTerm: fc.Arbitrary<NodeSelectorTerm> = fc
  .record({
    matchExpressions: fc.array(labelRequirement, { maxLength: 3 }),
    matchFields: fc.array(fieldRequirement, { maxLength: 1 }),
  })
  .map(({ matchExpressions, matchFields }) => ({
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
    ...(matchFields.length > 0 ? { matchFields } : {}),
  }));

/** A rule's node selector term: one to three label requirements. */
const ruleTerm: fc.Arbitrary<NodeSelectorTerm> = fc
  .array(labelRequirement, { minLength: 1, maxLength: 3 })
  .map((matchExpressions) => ({ matchExpressions }));

const preferredTerm = (term: fc.Arbitrary<NodeSelectorTerm>): fc.Arbitrary<PreferredSchedulingTerm> =>
  fc.record({ weight: fc.constantFrom(...WEIGHTS), preference: term });

const toleration: fc.Arbitrary<Toleration> = fc.oneof(
  fc.record({
    key: fc.constantFrom(...LABEL_KEYS),
    operator: fc.constant('Exists'),
    effect: fc.constantFrom('NoSchedule', 'NoExecute'),
  }),
  fc.record({
    key: fc.constantFrom(...LABEL_KEYS),
    value: fc.constantFrom(...VALUES),
    effect: fc.constant('NoSchedule'),
  }),
);

/** A toleration as a rule may write it: also with an empty value, which the API server stores without the field. */
const ruleToleration: fc.Arbitrary<Toleration> = fc.oneof(
  toleration,
  fc.record({
    key: fc.constantFrom(...LABEL_KEYS),
    operator: fc.constant('Exists'),
    value: fc.constant(''),
    effect: fc.constant('NoSchedule'),
  }),
);

const labelMap = fc.dictionary(fc.constantFrom(...LABEL_KEYS), fc.constantFrom(...VALUES), { maxKeys: 2 });

/** A random Pod as a Deployment would create it, with random scheduling fields. */
export const randomPod: fc.Arbitrary<Pod> = fc
  .record({
    required: fc.option(fc.array(podTerm, { minLength: 1, maxLength: 4 }), { nil: undefined }),
    preferred: fc.option(
      fc.array(preferredTerm(podTerm.filter((term) => Object.keys(term).length > 0)), { minLength: 1, maxLength: 3 }),
      { nil: undefined },
    ),
    nodeSelector: fc.option(labelMap, { nil: undefined }),
    tolerations: fc.option(fc.array(toleration, { maxLength: 3 }), { nil: undefined }),
    annotations: fc.option(
      fc.dictionary(fc.constantFrom('example.com/a~b', 'example.com/c', 'plain'), fc.string({ maxLength: 4 }), {
        maxKeys: 2,
      }),
      { nil: undefined },
    ),
    antiAffinity: fc.boolean(),
  })
  .map(({ required, preferred, nodeSelector, tolerations, annotations, antiAffinity }) => {
    const nodeAffinity = {
      ...(required === undefined
        ? {}
        : { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: required } }),
      ...(preferred === undefined ? {} : { preferredDuringSchedulingIgnoredDuringExecution: preferred }),
    };
    const affinity = {
      ...(Object.keys(nodeAffinity).length > 0 ? { nodeAffinity } : {}),
      ...(antiAffinity
        ? {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 1, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname' } },
              ],
            },
          }
        : {}),
    };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'web-5d8f7c9b4-',
        namespace: 'production',
        labels: { app: 'web', 'pod-template-hash': '5d8f7c9b4' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f7c9b4', controller: true }],
        ...(annotations === undefined ? {} : { annotations }),
      },
      spec: {
        containers: [{ name: 'app', image: 'web:1' }],
        ...(Object.keys(affinity).length > 0 ? { affinity } : {}),
        ...(nodeSelector === undefined ? {} : { nodeSelector }),
        ...(tolerations === undefined ? {} : { tolerations }),
      },
    };
  });

const removeSpec = fc.record(
  {
    nodeAffinity: fc.oneof(
      fc.constant({ all: true }),
      fc.record({ keys: fc.uniqueArray(fc.constantFrom(...LABEL_KEYS, NUMERIC_KEY), { minLength: 1, maxLength: 2 }) }),
    ),
    nodeSelector: fc.record({ keys: fc.uniqueArray(fc.constantFrom(...LABEL_KEYS), { minLength: 1, maxLength: 2 }) }),
    tolerations: fc.record({ keys: fc.uniqueArray(fc.constantFrom(...LABEL_KEYS), { minLength: 1, maxLength: 2 }) }),
  },
  { requiredKeys: [] },
);

/** A random node affinity as a rule may add it. */
export const addedAffinity = fc
  .record(
    {
      requiredDuringSchedulingIgnoredDuringExecution: fc.record({
        nodeSelectorTerms: fc.array(ruleTerm, { minLength: 1, maxLength: 3 }),
      }),
      preferredDuringSchedulingIgnoredDuringExecution: fc.array(preferredTerm(ruleTerm), {
        minLength: 1,
        maxLength: 2,
      }),
    },
    { requiredKeys: [] },
  )
  .filter((affinity) => Object.keys(affinity).length > 0);

const addSpec = fc.record(
  {
    annotations: fc.dictionary(
      fc.constantFrom('example.com/migrated', 'example.com/x~y'),
      fc.constantFrom('yes', 'no'),
      { minKeys: 1, maxKeys: 2 },
    ),
    nodeSelector: fc.dictionary(fc.constantFrom(...LABEL_KEYS), fc.constantFrom(...VALUES), { minKeys: 1, maxKeys: 2 }),
    tolerations: fc.array(ruleToleration, { minLength: 1, maxLength: 2 }),
    nodeAffinity: addedAffinity,
  },
  { requiredKeys: [] },
);

const selectorSpec = fc.record(
  {
    namespaces: fc.constant(['production']),
    nodeSelectorMatch: labelMap.filter((map) => Object.keys(map).length > 0),
    nodeAffinityMatch: fc.record({
      requiredDuringSchedulingIgnoredDuringExecution: fc.record({
        nodeSelectorTerms: fc.array(ruleTerm, { minLength: 1, maxLength: 2 }),
      }),
    }),
  },
  { requiredKeys: [] },
);

function validRule(resource: unknown): NormalizedRule | undefined {
  const verdict = validatePodMutation(resource);
  return verdict.valid ? verdict.rule : undefined;
}

/** A random valid rule with the given name. */
export const randomRule = (name: string, options: { selector?: boolean } = {}): fc.Arbitrary<NormalizedRule> =>
  fc
    .record({
      priority: fc.integer({ min: -1, max: 3 }),
      enable: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      workloadSelector: options.selector === false ? fc.constant({ all: true }) : selectorSpec,
      mutationRemove: removeSpec,
      mutationAdd: addSpec,
    })
    .map((spec) =>
      validRule({ apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodMutation', metadata: { name }, spec }),
    )
    .filter((rule): rule is NormalizedRule => rule !== undefined);

/** One to four random valid rules with distinct names. */
export const randomRules: fc.Arbitrary<NormalizedRule[]> = fc
  .integer({ min: 1, max: 4 })
  .chain((count) => fc.tuple(...Array.from({ length: count }, (_, index) => randomRule(`rule-${index}`))));

/** A random node over the same label space. */
export const randomNode: fc.Arbitrary<NodeView> = fc
  .record({
    name: fc.constantFrom('node-1', 'node-2', 'node-3'),
    labels: fc.record(
      {
        'example.com/pool': fc.constantFrom(...VALUES),
        'topology.kubernetes.io/zone': fc.constantFrom(...VALUES),
        'example.com/tier': fc.constantFrom(...VALUES),
        [NUMERIC_KEY]: fc.constantFrom('0', ...NUMBERS, '5', 'x'),
      },
      { requiredKeys: [] },
    ),
  })
  .map((node) => ({ name: node.name, labels: node.labels }));

/** Every object of a JSON value with its members in reverse order: how far the API server's encoding may reorder them. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, member]) => [key, reordered(member)]),
  );
}

// The labels the PodTopologyLabels admission plugin copies from the Node when the Pod is bound (on since Kubernetes 1.35).
const NODE_TOPOLOGY_LABELS = {
  'topology.kubernetes.io/zone': 'eu-west-1a',
  'topology.kubernetes.io/region': 'eu-west-1',
};

/**
 * A Pod as the API server stores it, binds it and gives it back (to `kubectl get -o json`, to a recreation): through
 * JSON, its members in another order (Go's field order), the empty strings of tolerations left out (omitempty), and the
 * Node's topology labels added at binding.
 */
export function storedByApiServer(pod: Pod): Pod {
  const stored = reordered(JSON.parse(JSON.stringify(pod))) as {
    metadata?: { labels?: Record<string, string> };
    spec?: { tolerations?: Record<string, unknown>[] };
  };
  const tolerations = stored.spec?.tolerations;
  if (tolerations !== undefined)
    stored.spec!.tolerations = tolerations.map((item) =>
      Object.fromEntries(Object.entries(item).filter(([, value]) => value !== '')),
    );
  stored.metadata = { ...stored.metadata, labels: { ...stored.metadata?.labels, ...NODE_TOPOLOGY_LABELS } };
  return stored;
}
