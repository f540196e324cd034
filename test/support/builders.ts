import { validatePodMutation, type NormalizedRule } from '../../lib/api/index.ts';
import { compileRuleSet, type RuleSet } from '../../lib/engine/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import type { NodeSelectorTerm, PreferredSchedulingTerm, Toleration } from '../../lib/scheduling/index.ts';
import { type PodMutationSpec } from '../../lib/api/schema.ts';
import { type NodeSelectorRequirement } from '../../lib/scheduling/core-shapes.ts';

/**
 * A PodMutation resource with the given spec. For brevity in tests, enable defaults to true and an absent
 * workloadSelector to the explicit match-all form, all: true.
 */
export function podMutation(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name },
    spec: { enable: true, workloadSelector: { all: true }, ...spec },
  };
}

/** A validated rule; throws when the spec is invalid so a test never runs on a silently broken rule. */
export function rule(name: string, spec: PodMutationSpec | Record<string, unknown>): NormalizedRule {
  const verdict = validatePodMutation(podMutation(name, spec));
  if (!verdict.valid) throw new Error(`test rule ${name} is invalid: ${JSON.stringify(verdict.invalid.issues)}`);
  return verdict.rule;
}

/** A compiled rule set from rules. */
export function rules(...items: NormalizedRule[]): RuleSet {
  return compileRuleSet(items);
}

/** Shorthand requirement: "key In a,b" style arguments. */
export function req(key: string, operator: string, ...values: string[]): NodeSelectorRequirement {
  return values.length === 0 ? { key, operator } : { key, operator, values };
}

/** A NodeSelectorTerm of label requirements. */
export function termOf(...expressions: NodeSelectorRequirement[]): NodeSelectorTerm {
  return { matchExpressions: expressions };
}

/** A required node affinity from terms. */
export function required(...terms: NodeSelectorTerm[]): {
  requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: NodeSelectorTerm[] };
} {
  return { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } };
}

/** A preferred entry. */
export function preferred(weight: number, ...expressions: NodeSelectorRequirement[]): PreferredSchedulingTerm {
  return { weight, preference: { matchExpressions: expressions } };
}

interface PodOptions {
  readonly namespace?: string;
  readonly name?: string;
  readonly generateName?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  /** The controller owner; null for none (a bare Pod created with generateName). */
  readonly owner?: { kind: string; name: string; controller?: boolean } | null;
  readonly nodeName?: string;
  readonly required?: NodeSelectorTerm[];
  readonly preferred?: PreferredSchedulingTerm[];
  readonly nodeSelector?: Record<string, string>;
  readonly tolerations?: Toleration[];
  readonly podAntiAffinity?: unknown;
}

/** A Pod as a controller creates it (generateName, ownerReference), with only the fields a test names. */
export function pod(options: PodOptions = {}): Pod {
  const nodeAffinity: Record<string, unknown> = {};
  if (options.required !== undefined)
    nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: options.required };
  if (options.preferred !== undefined) nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution = options.preferred;
  const affinity: Record<string, unknown> = {};
  if (Object.keys(nodeAffinity).length > 0) affinity.nodeAffinity = nodeAffinity;
  if (options.podAntiAffinity !== undefined) affinity.podAntiAffinity = options.podAntiAffinity;
  const metadata: Record<string, unknown> = { namespace: options.namespace ?? 'production' };
  if (options.name !== undefined) metadata.name = options.name;
  else metadata.generateName = options.generateName ?? 'web-5d8f7c9b4-';
  if (options.labels !== undefined) metadata.labels = options.labels;
  if (options.annotations !== undefined) metadata.annotations = options.annotations;
  const owner =
    options.owner === null
      ? undefined
      : (options.owner ?? (options.name === undefined ? { kind: 'ReplicaSet', name: 'web-5d8f7c9b4' } : undefined));
  if (owner !== undefined) {
    metadata.ownerReferences = [
      {
        apiVersion: 'apps/v1',
        kind: owner.kind,
        name: owner.name,
        uid: 'c0ffee00-0000-4000-8000-000000000001',
        controller: owner.controller ?? true,
      },
    ];
    if (options.labels === undefined && owner.kind === 'ReplicaSet' && owner.name === 'web-5d8f7c9b4')
      metadata.labels = { app: 'web', 'pod-template-hash': '5d8f7c9b4' };
  }
  const spec: Record<string, unknown> = { containers: [{ name: 'app', image: 'registry.example.com/web:1.0' }] };
  if (Object.keys(affinity).length > 0) spec.affinity = affinity;
  if (options.nodeSelector !== undefined) spec.nodeSelector = options.nodeSelector;
  if (options.tolerations !== undefined) spec.tolerations = options.tolerations;
  if (options.nodeName !== undefined) spec.nodeName = options.nodeName;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

/** An AdmissionReview request for a Pod CREATE. */
export function admissionReview(object: unknown, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'b3a1d2c4-0e5f-4a6b-8c7d-9e0f1a2b3c4d',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: '',
      namespace: (object as Pod | undefined)?.metadata?.namespace ?? 'production',
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object,
      oldObject: null,
      dryRun: false,
      ...overrides,
    },
  };
}
