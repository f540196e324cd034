import fc from 'fast-check';
import { validatePodMutation, type NormalizedRule } from '../../lib/api/index.ts';
import { type Pod } from '../../lib/engine/index.ts';
import type { NodeSelectorTerm, PreferredSchedulingTerm, Toleration } from '../../lib/scheduling/index.ts';
import type { NodeView } from '../../lib/scheduling/index.ts';
import { BINDING_LABELS } from '../../lib/engine/binding.ts';
import { type NodeSelectorRequirement } from '../../lib/scheduling/core-shapes.ts';

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

// The topology labels binding copies from the Node, as a Pod's author may set them too.
const TOPOLOGY_KEYS = BINDING_LABELS;

/** A label selector over the topology labels and the app label, with every operator. */
const labelSelectorSpec = fc
  .record(
    {
      matchLabels: fc.dictionary(fc.constantFrom(...TOPOLOGY_KEYS), fc.constantFrom(...VALUES), {
        minKeys: 1,
        maxKeys: 1,
      }),
      matchExpressions: fc.array(
        fc.oneof(
          fc.record({
            key: fc.constantFrom(...TOPOLOGY_KEYS, 'app'),
            operator: fc.constantFrom('In', 'NotIn'),
            values: fc.uniqueArray(fc.constantFrom(...VALUES, 'web'), { minLength: 1, maxLength: 2 }),
          }),
          fc.record({ key: fc.constantFrom(...TOPOLOGY_KEYS), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
        ),
        { minLength: 1, maxLength: 2 },
      ),
    },
    { requiredKeys: [] },
  )
  .filter((selector) => Object.keys(selector).length > 0);

function validRule(resource: unknown): NormalizedRule | undefined {
  const verdict = validatePodMutation(resource);
  return verdict.valid ? verdict.rule : undefined;
}

/**
 * A random valid rule with the given name; `selector: false` selects every Pod, `labels: true` may select by a label
 * selector over the topology labels instead.
 */
export const randomRule = (
  name: string,
  options: { selector?: boolean; labels?: boolean } = {},
): fc.Arbitrary<NormalizedRule> =>
  fc
    .record({
      priority: fc.integer({ min: -1, max: 3 }),
      enable: fc.oneof({ weight: 9, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      workloadSelector:
        options.selector === false
          ? fc.constant({ all: true })
          : options.labels === true
            ? fc.oneof(
                selectorSpec,
                labelSelectorSpec.map((labelSelector) => ({ labelSelector })),
              )
            : selectorSpec,
      mutationRemove: removeSpec,
      mutationAdd: addSpec,
    })
    .map((spec) =>
      validRule({ apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodMutation', metadata: { name }, spec }),
    )
    .filter((rule): rule is NormalizedRule => rule !== undefined);

/**
 * One to four random valid rules with distinct names. With `labels: true`, each rule either selects every Pod or may
 * select by the topology labels too: the Pods of every shape are then matched as often as randomPod by randomRules.
 */
export const randomRulesWith = (options: { labels?: boolean } = {}): fc.Arbitrary<NormalizedRule[]> => {
  const ruleNamed = (name: string) =>
    options.labels === true
      ? fc.oneof(randomRule(name, { labels: true }), randomRule(name, { selector: false }))
      : randomRule(name);
  return fc
    .integer({ min: 1, max: 4 })
    .chain((count) => fc.tuple(...Array.from({ length: count }, (_, index) => ruleNamed(`rule-${index}`))));
};

/** One to four random valid rules with distinct names. */
export const randomRules: fc.Arbitrary<NormalizedRule[]> = randomRulesWith();

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

/** A Node a Pod is bound to, as far as binding reads it: its name and its topology labels (BINDING_LABELS). */
export interface BoundNode {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

// The Node a stored Pod is bound to unless a test says otherwise: in a zone and region no generated rule names.
const DEFAULT_NODE: BoundNode = {
  name: 'ip-10-0-1-23.eu-west-1.compute.internal',
  labels: { 'topology.kubernetes.io/zone': 'eu-west-1a', 'topology.kubernetes.io/region': 'eu-west-1' },
};

// The suffix the API server's name generator appends to a generateName (five characters of its alphabet).
const GENERATED_SUFFIX = 'x7k2p';

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

type StoredShape = {
  metadata?: Record<string, unknown> & { labels?: Record<string, string>; generateName?: string; name?: string };
  spec?: Record<string, unknown> & { tolerations?: Record<string, unknown>[]; nodeName?: string };
};

/**
 * The managedFields entry of a Pod's create: the fields its author sent, before any admission (the field manager runs
 * before admission: k8s.io/apiserver endpoints/handlers/create.go). Only what asRecreated reads is written, which no
 * webhook changes: the labels, and spec.nodeName when the Pod was created bound.
 */
function creationEntry(pod: StoredShape): Record<string, unknown> {
  const owned = (keys: readonly string[]) => Object.fromEntries(keys.map((key) => [`f:${key}`, {}]));
  return {
    manager: 'kubectl-create',
    operation: 'Update',
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:metadata': { 'f:labels': owned(Object.keys(pod.metadata?.labels ?? {})) },
      'f:spec': owned(['containers', ...(pod.spec?.nodeName === undefined ? [] : ['nodeName'])]),
    },
  };
}

/**
 * The labels PodTopologyLabels gives a Pod bound to `node`: the Node's topology labels over the Pod's own
 * (plugin/pkg/admission/podtopologylabels): at creation for a Pod created with spec.nodeName, else at binding.
 */
export function withNodeTopology<T extends { metadata?: { labels?: Readonly<Record<string, string>> } }>(
  pod: T,
  node: BoundNode,
): T {
  if (Object.keys(node.labels).length === 0) return pod;
  return { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata?.labels, ...node.labels } } };
}

/**
 * A Pod as the API server stores it and gives it back (to `kubectl get -o json`, to the report): through JSON, its
 * members in another order (Go's field order), the empty strings of tolerations and the empty label and annotation maps
 * left out (omitempty), the name generated
 * from a generateName, the managedFields of its create (unless it has some); then, unless it was created bound, bound
 * by the scheduler to `node` (null: not bound yet): spec.nodeName set and the Node's topology labels over its own.
 */
export function storedByApiServer(pod: Pod, node: BoundNode | null = DEFAULT_NODE): Pod {
  const stored = reordered(JSON.parse(JSON.stringify(pod))) as StoredShape;
  const tolerations = stored.spec?.tolerations;
  if (tolerations !== undefined)
    stored.spec!.tolerations = tolerations.map((item) =>
      Object.fromEntries(Object.entries(item).filter(([, value]) => value !== '')),
    );
  const metadata = { ...stored.metadata };
  // Go's omitempty: an empty map is not stored.
  for (const map of ['labels', 'annotations'] as const) if (isEmptyObject(metadata[map])) delete metadata[map];
  if (!metadata.name && metadata.generateName) metadata.name = `${metadata.generateName}${GENERATED_SUFFIX}`;
  metadata.managedFields ??= [creationEntry(stored)];
  const created = { ...stored, metadata };
  if (node === null || created.spec?.nodeName !== undefined) return created;
  return withNodeTopology({ ...created, spec: { ...created.spec, nodeName: node.name } }, node);
}

/** A Pod as its author sends it, and the Node it is bound to: at its creation (spec.nodeName), or by the scheduler after. */
export interface Arrival {
  readonly pod: Pod;
  readonly node: BoundNode;
  /** True when the Pod is created bound to `node`. */
  readonly boundAtCreation: boolean;
}

/**
 * A random Pod of every shape the API server stores: randomPod's Deployment Pod, a bare Pod named by its author, a bare
 * Pod named from its generateName; with the topology labels its author may have set; created bound to its Node, or
 * bound by the scheduler after admission, to a Node whose topology labels may be absent, the author's or others.
 */
export const randomArrival: fc.Arbitrary<Arrival> = fc
  .record({
    pod: randomPod,
    identity: fc.constantFrom('deployment', 'named', 'generated'),
    topology: fc.dictionary(fc.constantFrom(...TOPOLOGY_KEYS), fc.constantFrom(...VALUES), { maxKeys: 2 }),
    nodeTopology: fc.dictionary(fc.constantFrom(...TOPOLOGY_KEYS), fc.constantFrom(...VALUES, 'eu-west-1a'), {
      maxKeys: 2,
    }),
    boundAtCreation: fc.oneof(
      { weight: 4, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
  })
  .map(({ pod, identity, topology, nodeTopology, boundAtCreation }) => {
    const node: BoundNode = { name: 'node-1', labels: nodeTopology };
    const { ownerReferences, generateName, labels, ...metadata } = pod.metadata ?? {};
    const identified =
      identity === 'deployment'
        ? { ...metadata, generateName, ownerReferences, labels: { ...labels, ...topology } }
        : {
            ...metadata,
            ...(identity === 'named' ? { name: 'debug-shell' } : { generateName: 'debug-shell-' }),
            labels: { app: 'debug', ...topology },
          };
    const spec = boundAtCreation ? { ...pod.spec, nodeName: node.name } : pod.spec;
    return { pod: { ...pod, metadata: identified, spec }, node, boundAtCreation };
  });

/**
 * True when binding the Arrival's Pod after admission gives one of its own topology labels another value: the one
 * shape whose author no review can see again without a stamp (docs/api.md, *Re-applying rules*).
 */
export function overwritesOwnTopology({ pod, node, boundAtCreation }: Arrival): boolean {
  const own = pod.metadata?.labels ?? {};
  return (
    !boundAtCreation &&
    BINDING_LABELS.some(
      (key) => Object.hasOwn(own, key) && Object.hasOwn(node.labels, key) && own[key] !== node.labels[key],
    )
  );
}
