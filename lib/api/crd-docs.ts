/**
 * The CRD's descriptions, laid over the declaration (lib/api/schema.ts) by the CRD generator (lib/api/crd.ts) alone,
 * so that the contract carries no documentation text and the functions never do. Each is keyed by its schema path in
 * openAPIV3Schema: property names joined by `.`, `[]` for the items of a list; `''` is the root. The generator fails
 * on a path the schema does not have. Shared fragments (a requirement, a term, a node affinity, a toleration) are
 * written once, below the paths they appear at.
 */
import {
  DEFAULT_SPOT_PERCENT,
  ENFORCEMENT_ANNOTATION,
  POD_PLACEMENT_KIND,
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  RESERVED_KEYS,
} from './constants.ts';

/** Descriptions by schema path. */
type Docs = Readonly<Record<string, string>>;

const RESERVED_NAMES = [...RESERVED_KEYS].join(', ');
const KEY_SYNTAX =
  "a qualified name: an optional lowercase DNS subdomain prefix and \"/\", then a name of at most 63 alphanumerics, '-', '_' or '.' that starts and ends with an alphanumeric";
const VALUE_SYNTAX = "empty, or at most 63 alphanumerics, '-', '_' or '.' that starts and ends with an alphanumeric";
const REQUIRED_FIELD = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED_FIELD = 'preferredDuringSchedulingIgnoredDuringExecution';

/** The docs of a fragment, placed at `prefix`. */
function at(prefix: string, docs: Docs): Docs {
  return Object.fromEntries(
    Object.entries(docs).map(([path, text]) => [
      path === '' ? prefix : path.startsWith('[]') ? `${prefix}${path}` : `${prefix}.${path}`,
      text,
    ]),
  );
}

/** Where a term sits: the values of a Pod's required terms are label values, a preferred term's integers may be signed. */
type Placement = 'required' | 'preferred';

function requirementDocs(placement: Placement): Docs {
  const required = placement === 'required';
  return {
    '': 'A requirement on one node label: the label key, an operator, and the values the operator compares with.',
    key: `The node label key, ${KEY_SYNTAX}. The keys managed by the product (${RESERVED_NAMES}) are rejected.`,
    operator: required
      ? "How the label is compared: In and NotIn need at least one value; Exists and DoesNotExist take no values; Gt and Lt take exactly one value, a 64-bit integer without a sign (the API server validates the values of a Pod's required node affinity as label values)."
      : 'How the label is compared: In and NotIn need at least one value; Exists and DoesNotExist take no values; Gt and Lt take exactly one value, a 64-bit integer (a sign is allowed in preferred terms).',
    values: required
      ? `The values to compare with, at most 64, compared as a set (order and duplicates do not matter when matching). Each is a label value: ${VALUE_SYNTAX}; so the single integer operand of Gt and Lt takes no sign.`
      : `The values to compare with, at most 64, compared as a set (order and duplicates do not matter when matching). Each is a label value: ${VALUE_SYNTAX}, except the single integer operand of Gt and Lt, which may carry a sign.`,
  };
}

function termDocs(placement: Placement): Docs {
  return {
    '': 'A node selector term: its requirements are ANDed. Terms of one selector are ORed.',
    matchExpressions:
      'Requirements on node labels, all of which must hold; at least 1 (an empty term matches no node) and at most 64.',
    ...at('matchExpressions[]', requirementDocs(placement)),
    matchFields:
      'Not supported: rules select nodes by label only, so any matchFields is rejected. It is declared only so that the API server rejects it instead of silently dropping it.',
    'matchFields[].key': 'The node field (Kubernetes supports metadata.name only).',
    'matchFields[].operator': 'The operator, In or NotIn in Kubernetes.',
    'matchFields[].values': 'The field values.',
  };
}

function affinityDocs(use: 'match' | 'add'): Docs {
  const match = use === 'match';
  return {
    '': match
      ? "Node affinity the Pod must already have, in the Kubernetes node affinity shape restricted to matchExpressions. Requirements are compared by key, operator and the set of values; a Pod without the corresponding affinity does not match. The product's reserved keys cannot be used."
      : "Node affinity to add, in the Kubernetes node affinity shape restricted to matchExpressions. The product's reserved keys cannot be used.",
    [REQUIRED_FIELD]: match
      ? "Matches when some selector term matches some term of the Pod's required node affinity: every requirement of the selector term has an identical requirement in the Pod term (the Pod term may hold more)."
      : "Required terms are ANDed with the Pod's current required selector: every current term is combined with every added term, then duplicate and redundant terms are dropped. A requirement on a key already present is added, not replaced; remove it first to replace it.",
    [`${REQUIRED_FIELD}.nodeSelectorTerms`]: 'The node selector terms, ORed; at least 1 and at most 64.',
    ...at(`${REQUIRED_FIELD}.nodeSelectorTerms[]`, termDocs('required')),
    [PREFERRED_FIELD]: match
      ? "Matches when every entry here has an entry of the Pod's preferred node affinity with the same weight whose term it matches as for required terms. At least 1 and at most 64 entries."
      : 'Preferred entries are appended, except an entry identical (weight and requirements) to one already present. At least 1 and at most 64 entries.',
    [`${PREFERRED_FIELD}[]`]: 'A weighted preference for nodes that match a term.',
    [`${PREFERRED_FIELD}[].weight`]: 'The weight of the preference, from 1 to 100.',
    ...at(`${PREFERRED_FIELD}[].preference`, termDocs('preferred')),
  };
}

/** A list of tolerations: its own description, then each entry's. */
function tolerationsDocs(description: string): Docs {
  return {
    '': description,
    '[]': 'A Kubernetes toleration.',
    '[].key': `The taint key, ${KEY_SYNTAX}. Empty means every key and needs operator Exists.`,
    '[].operator':
      'Equal (the default when empty or absent) compares the value; Exists matches any value and takes none.',
    '[].value': `The taint value for operator Equal, a label value: ${VALUE_SYNTAX}.`,
    '[].effect': 'The taint effect to tolerate: NoSchedule, PreferNoSchedule or NoExecute; empty means every effect.',
    '[].tolerationSeconds':
      'With effect NoExecute only: how long the Pod stays bound after the taint appears; absent means forever.',
  };
}

const WORKLOAD_SELECTOR: Docs = {
  '': 'Which Pods the resource applies to. Set at least one dimension, or all: true alone to select every Pod: an empty selector is invalid, so that a misspelt or pruned field can never widen a rule or a placement. Every dimension that is set must match (AND); values within one list are ORed; a dimension that is absent does not restrict. Pods owned by a DaemonSet are never mutated.',
  all: 'true selects every Pod (DaemonSet Pods excepted) and takes no other dimension; false counts as absent.',
  namespaces: 'Namespace names (exact match) the Pod must be created in.',
  kinds:
    "Workload kinds, matched against the workload resolved from the Pod's controller: Deployment, Rollout, ReplicaSet, StatefulSet, CronJob, Job, any other controller kind as it is, or Pod for Pods without a controller.",
  names:
    'Workload names (exact match) of the resolved workload; for Pods without a controller, the Pod name or generateName.',
  labelSelector: "A standard Kubernetes label selector on the Pod's labels.",
  'labelSelector.matchLabels': 'Labels the Pod must carry with exactly these values.',
  'labelSelector.matchExpressions': "Requirements on the Pod's labels, all of which must hold.",
  'labelSelector.matchExpressions[]': 'A requirement on one Pod label.',
  'labelSelector.matchExpressions[].key': `The label key, ${KEY_SYNTAX}.`,
  'labelSelector.matchExpressions[].operator':
    'In and NotIn need at least one value; Exists and DoesNotExist take none.',
  'labelSelector.matchExpressions[].values': `The values to compare with, each a label value: ${VALUE_SYNTAX}.`,
  ...at('nodeAffinityMatch', affinityDocs('match')),
  nodeSelectorMatch:
    "Pairs that must all be present in the Pod's spec.nodeSelector. The product's reserved keys may be matched: they are reserved in node affinity only.",
  ...at(
    'tolerationsMatch',
    tolerationsDocs(
      'Tolerations that must each be present on the Pod, equal on every field the entry sets; at most 64.',
    ),
  ),
};

const MUTATION_REMOVE: Docs = {
  '': 'What to remove from a selected Pod. Applied before mutationAdd of the same rule.',
  nodeAffinity:
    'Required and preferred node affinity to remove. Set exactly one of keys or all: true (all: false counts as absent). A preferred term left empty is dropped; a required term left empty clears the whole required selector, since an empty term would match no node.',
  'nodeAffinity.keys': `Label keys whose requirements are removed from every required and preferred term; 1 to 64 keys, each ${KEY_SYNTAX}. The product's reserved keys cannot be removed.`,
  'nodeAffinity.all': 'true removes all required and preferred node affinity; podAffinity and podAntiAffinity stay.',
  nodeSelector: "Keys to remove from the Pod's spec.nodeSelector.",
  'nodeSelector.keys': `The nodeSelector keys to remove; 1 to 64 keys, each ${KEY_SYNTAX}. The product's reserved keys may be removed (a Pod's own pin, such as an instance type); adding them stays reserved.`,
  tolerations: 'Tolerations to remove from the Pod, by key.',
  'tolerations.keys': `Tolerations with these keys are removed; 1 to 64 keys, each ${KEY_SYNTAX}.`,
};

const MUTATION_ADD: Docs = {
  '': 'What to add to a selected Pod. Applied after mutationRemove of the same rule.',
  annotations: `Annotations to set on the Pod, overwriting existing values. Keys are qualified names; keys under ${PRODUCT_ANNOTATION_PREFIX} are managed by the product and rejected.`,
  nodeSelector:
    "Pairs to set in the Pod's spec.nodeSelector, overwriting existing values. The product's reserved keys cannot be used.",
  ...at(
    'tolerations',
    tolerationsDocs('Tolerations to append to the Pod, unless an identical one is present; at most 64.'),
  ),
  ...at('nodeAffinity', affinityDocs('add')),
};

const SPEC: Docs = {
  '': 'What the rule selects and how it rewrites the scheduling fields of each new Pod it selects. Every enabled rule is matched against the Pod as it arrives, before any rule mutates it; matching rules then apply in ascending priority, then name, each removing before adding.',
  enable: 'Whether the rule is applied. A rule is applied only when enable is true.',
  priority: 'Order among matching rules: lower priorities apply first, equal priorities in order of name. Default 0.',
  ...at('workloadSelector', WORKLOAD_SELECTOR),
  ...at('mutationRemove', MUTATION_REMOVE),
  ...at('mutationAdd', MUTATION_ADD),
};

const PLACEMENT_SPEC: Docs = {
  '': 'Which workloads the placement selects and how their new Pods are placed on Spot and on-demand capacity. The placement is appended after every PodMutation. Where several enabled PodPlacements select a Pod, only the first in ascending priority, then name, applies; a per-workload policy set with podmutation placement set wins over every PodPlacement.',
  enable: 'Whether the placement is applied. A placement is applied only when enable is true.',
  priority:
    'Order among the PodPlacements that select a Pod: the lowest priority applies, equal priorities in order of name. Default 0.',
  ...at('workloadSelector', WORKLOAD_SELECTOR),
  mode: 'Spot requires Spot capacity, NonSpot on-demand capacity, Diversity a share of each (spotPercent, minOnDemand).',
  spotPercent: `With mode Diversity only: the share of the workload's Pods placed on Spot, 0 to 100. Default ${DEFAULT_SPOT_PERCENT}.`,
  minOnDemand:
    "With mode Diversity only: the fewest of the workload's Pods kept on on-demand capacity, whatever spotPercent says. Default 0.",
};

const PLACEMENT_STATUS: Docs = {
  '': 'What the sync last observed about this placement. Written by the sync function; never set it by hand.',
  conditions:
    'Conditions of the placement. Accepted is True (reason Valid) when the placement passed validation and is served to admission, False (reason Invalid) with the validation message when it is skipped.',
  'conditions[]': 'One condition, in the shape of a Kubernetes metav1.Condition.',
  'conditions[].type': 'The condition type: Accepted.',
  'conditions[].status': 'True, False or Unknown.',
  'conditions[].reason': 'A CamelCase reason for the status, e.g. Valid or Invalid.',
  'conditions[].message': 'A human-readable explanation; for an invalid placement, the field paths and reasons.',
  'conditions[].lastTransitionTime': 'When the status last changed.',
  'conditions[].observedGeneration': 'The metadata.generation the condition was computed from.',
  observedGeneration: 'The metadata.generation the sync last validated.',
  lastSyncTime: 'When the sync last wrote this status.',
  matchedPods: 'Running Pods this placement is the one to apply to, as of lastReportTime.',
  placedPods: 'Of matchedPods, those already placed as the placement says, as of lastReportTime.',
  lastReportTime: 'When the sync last computed matchedPods and placedPods.',
};

/** Every description of the PodPlacement CRD's openAPIV3Schema, by schema path. */
export const PLACEMENT_CRD_DOCS: Docs = {
  '': 'PodPlacement selects workloads and places their new Pods on Spot or on-demand capacity, or a share of each, during admission, after every PodMutation. It does not change running Pods: roll out a workload after creating or changing a placement.',
  apiVersion: `The versioned schema of this object: ${POD_MUTATION_API_VERSION}.`,
  kind: `${POD_PLACEMENT_KIND}.`,
  ...at('spec', PLACEMENT_SPEC),
  ...at('status', PLACEMENT_STATUS),
};

const STATUS: Docs = {
  '': 'What the sync last observed about this rule. Written by the sync function; never set it by hand.',
  conditions:
    'Conditions of the rule. Accepted is True (reason Valid) when the rule passed validation and is served to admission (the message then lists what podmutation validate warns about, each after "warning: "), False (reason Invalid) with the validation message when it is skipped. Schedulable, for each enabled valid rule: with the sync report (reportIntervalMinutes), False (reason PodsWouldFitNowhere) when some running Pod the rule matches, recreated with it, would fit no Node and no NodePool while it fits without it, with how many and one example, True (PodsFit) when none would; without it, False (AdditionsFitNowhere) when what the rule adds fits no Node and no NodePool, else Unknown (PodsNotJudged); Unknown when the sync could not read the Nodes and NodePools (CapacityUnknown) or the rule is audited (Audited).',
  'conditions[]': 'One condition, in the shape of a Kubernetes metav1.Condition.',
  'conditions[].type': 'The condition type: Accepted or Schedulable.',
  'conditions[].status': 'True, False or Unknown.',
  'conditions[].reason': 'A CamelCase reason for the status, e.g. Valid, Invalid or PodsWouldFitNowhere.',
  'conditions[].message':
    'A human-readable explanation; for an invalid rule, the field paths and reasons; for an unschedulable one, where a Pod fails to fit.',
  'conditions[].lastTransitionTime': 'When the status last changed.',
  'conditions[].observedGeneration': 'The metadata.generation the condition was computed from.',
  observedGeneration: 'The metadata.generation the sync last validated.',
  lastSyncTime:
    'When the sync last wrote this status (it writes only when the verdict, the generation or the enforcement changes).',
  enforcement: `How admission treats the valid rule: enforce applies it, audit only records it (the ${ENFORCEMENT_ANNOTATION} annotation).`,
  matchedPods: 'Running Pods the rule matches, as of lastReportTime (the sync report, reportIntervalMinutes).',
  pendingPods: 'Matched Pods whose scheduling a rollout would still change, as of lastReportTime.',
  lastReportTime: 'When the sync last computed matchedPods and pendingPods (written when they change).',
};

/** Every description of the CRD's openAPIV3Schema, by schema path. */
export const CRD_DOCS: Docs = {
  '': 'PodMutation selects workloads and rewrites the scheduling fields (node affinity, nodeSelector, tolerations, annotations) of their new Pods during admission. It does not change running Pods: roll out a workload after creating or changing a rule.',
  apiVersion: `The versioned schema of this object: ${POD_MUTATION_API_VERSION}.`,
  kind: `${POD_MUTATION_KIND}.`,
  ...at('spec', SPEC),
  ...at('status', STATUS),
};
