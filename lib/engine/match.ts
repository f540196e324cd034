import type { LabelSelectorRequirement, Pod, Toleration } from '../kubernetes/index.ts';
import { preferenceFromKubernetes, preferredMatches, requiredMatches, termFromKubernetes } from '../scheduling/index.ts';
import type { AffinitySelector, CompiledRule } from './rules.ts';
import { resolveWorkload, type Workload } from './workload.ts';

/** What matching reads of the incoming Pod; the node affinity is parsed on first use only. */
export interface PodFacts {
  readonly pod: Pod;
  readonly workload: Workload;
  readonly labels: Readonly<Record<string, string>>;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
  readonly nodeAffinity: AffinitySelector;
}

/** Where a rule stopped matching: the first dimension that failed, with a short reason. */
export interface MatchFailure {
  readonly dimension: string;
  readonly reason: string;
}

/** Reads the facts of the original incoming Pod. */
export function podFacts(pod: Pod, namespace: string): PodFacts {
  let nodeAffinity: AffinitySelector | undefined;
  const spec = pod.spec ?? {};
  return {
    pod,
    workload: resolveWorkload(pod, namespace),
    labels: pod.metadata?.labels ?? {},
    nodeSelector: spec.nodeSelector ?? {},
    tolerations: spec.tolerations ?? [],
    get nodeAffinity(): AffinitySelector {
      nodeAffinity ??= parseNodeAffinity(pod);
      return nodeAffinity;
    },
  };
}

function parseNodeAffinity(pod: Pod): AffinitySelector {
  const source = pod.spec?.affinity?.nodeAffinity;
  const terms = source?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return {
    // A required selector with no terms is invalid in Kubernetes; treat it as absent rather than match-nothing.
    required: terms === undefined || terms.length === 0 ? undefined : terms.map(termFromKubernetes),
    preferred: (source?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map(preferenceFromKubernetes),
  };
}

function labelRequirementHolds(requirement: LabelSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const value = Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      return false;
  }
}

// As in Kubernetes, an absent operator means Equal; absent strings compare as empty.
function tolerationField(toleration: Toleration, field: keyof Toleration): string | number | undefined {
  if (field === 'operator') return toleration.operator || 'Equal';
  if (field === 'tolerationSeconds') return toleration.tolerationSeconds;
  return toleration[field] ?? '';
}

const TOLERATION_FIELDS: readonly (keyof Toleration)[] = ['key', 'operator', 'value', 'effect', 'tolerationSeconds'];

/** True when the Pod toleration equals the wanted one on every field the wanted one sets. */
function tolerationPresent(wanted: Toleration, present: readonly Toleration[]): boolean {
  const setFields = TOLERATION_FIELDS.filter((field) => wanted[field] !== undefined);
  return present.some((candidate) => setFields.every((field) => tolerationField(candidate, field) === tolerationField(wanted, field)));
}

function affinityFailure(selector: AffinitySelector, facts: PodFacts): MatchFailure | undefined {
  const pod = facts.nodeAffinity;
  if (selector.required !== undefined && (pod.required === undefined || !requiredMatches(pod.required, selector.required))) {
    return {
      dimension: 'nodeAffinityMatch.required',
      reason: pod.required === undefined ? 'the Pod has no required node affinity' : 'no Pod term holds every requirement of a selector term',
    };
  }
  if (selector.preferred.length > 0 && !preferredMatches(pod.preferred, selector.preferred)) {
    return {
      dimension: 'nodeAffinityMatch.preferred',
      reason: pod.preferred.length === 0 ? 'the Pod has no preferred node affinity' : 'a configured preference has no Pod preference of the same weight and term',
    };
  }
  return undefined;
}

/**
 * Matches a rule against the original incoming Pod. Returns undefined on a match, else the first
 * dimension that failed (namespaces, kinds, names, labelSelector, nodeSelectorMatch,
 * tolerationsMatch, nodeAffinityMatch; cheapest first). Pure.
 */
export function matchRule(rule: CompiledRule, facts: PodFacts): MatchFailure | undefined {
  const { match } = rule;
  const { workload } = facts;
  if (match.namespaces !== undefined && !match.namespaces.has(workload.namespace)) {
    return { dimension: 'namespaces', reason: `namespace "${workload.namespace}" is not listed` };
  }
  if (match.kinds !== undefined && !match.kinds.has(workload.kind)) {
    return { dimension: 'kinds', reason: `workload kind ${workload.kind} is not listed` };
  }
  if (match.names !== undefined && !match.names.has(workload.name)) {
    return { dimension: 'names', reason: `workload name "${workload.name}" is not listed` };
  }
  for (const [key, value] of match.matchLabels) {
    if (facts.labels[key] !== value) return { dimension: 'labelSelector.matchLabels', reason: `label ${key}=${value} is not on the Pod` };
  }
  for (const requirement of match.labelExpressions) {
    if (!labelRequirementHolds(requirement, facts.labels)) {
      return { dimension: 'labelSelector.matchExpressions', reason: `Pod labels do not satisfy ${requirement.key} ${requirement.operator}` };
    }
  }
  for (const [key, value] of match.nodeSelector) {
    if (facts.nodeSelector[key] !== value) return { dimension: 'nodeSelectorMatch', reason: `nodeSelector ${key}=${value} is not on the Pod` };
  }
  for (const toleration of match.tolerations) {
    if (!tolerationPresent(toleration, facts.tolerations)) {
      return { dimension: 'tolerationsMatch', reason: `toleration ${toleration.key ?? '(any key)'} is not on the Pod` };
    }
  }
  return match.nodeAffinity === undefined ? undefined : affinityFailure(match.nodeAffinity, facts);
}

export { tolerationPresent };
