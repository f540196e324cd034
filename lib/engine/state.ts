import type { Affinity, NodeAffinity, Pod, Toleration } from '../kubernetes/index.ts';
import { preferenceToKubernetes, termToKubernetes, type Preference, type Term } from '../scheduling/index.ts';
import type { PodFacts } from './pod.ts';
import type { AffinitySelector } from './rules.ts';

/**
 * The scheduling fields of a Pod while rules are applied. Immutable: every step returns a new
 * state. A field left undefined is unchanged from the incoming Pod.
 */
export interface SchedulingState {
  readonly annotations?: Readonly<Record<string, string>>;
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly tolerations?: readonly Toleration[];
  readonly nodeAffinity?: AffinitySelector;
  readonly topologySpreadConstraints?: readonly unknown[];
  readonly warnings: readonly string[];
}

/** The state before any rule: nothing changed yet. */
export const INITIAL_STATE: SchedulingState = Object.freeze({ warnings: Object.freeze([]) });

/** Current node affinity of the state (the Pod's own while no step changed it). */
export function currentNodeAffinity(state: SchedulingState, facts: PodFacts): AffinitySelector {
  return state.nodeAffinity ?? facts.nodeAffinity;
}

function sameTerms(left: readonly Term[] | undefined, right: readonly Term[] | undefined): boolean {
  if (left === right) return true;
  if (left === undefined || right === undefined || left.length !== right.length) return false;
  return left.every((item, index) => item.id === right[index]!.id && sameRequirementOrder(item, right[index]!));
}

function sameRequirementOrder(left: Term, right: Term): boolean {
  return (
    left.expressions.length === right.expressions.length &&
    left.expressions.every((item, index) => item === right.expressions[index] || item.id === right.expressions[index]!.id)
  );
}

function samePreferences(left: readonly Preference[], right: readonly Preference[]): boolean {
  return left === right || (left.length === right.length && left.every((item, index) => item.id === right[index]!.id));
}

/** True when two affinities are the same selector, term for term in the same order. */
export function sameAffinity(left: AffinitySelector, right: AffinitySelector): boolean {
  return sameTerms(left.required, right.required) && samePreferences(left.preferred, right.preferred);
}

/**
 * The node affinity to emit. A half (required or preferred) that no step changed is the Pod's own object, byte for
 * byte (its duplicate requirements, value order and empty lists included): no field a rule did not ask for is touched.
 */
function nodeAffinityToKubernetes(selector: AffinitySelector, facts: PodFacts): NodeAffinity | undefined {
  const original = facts.pod.spec?.affinity?.nodeAffinity ?? undefined;
  const result: { -readonly [K in keyof NodeAffinity]: NodeAffinity[K] } = {};
  if (sameTerms(selector.required, facts.nodeAffinity.required)) {
    if (original?.requiredDuringSchedulingIgnoredDuringExecution !== undefined) {
      result.requiredDuringSchedulingIgnoredDuringExecution = original.requiredDuringSchedulingIgnoredDuringExecution;
    }
  } else if (selector.required !== undefined && selector.required.length > 0) {
    // Never emit a required selector with no terms: Kubernetes rejects it.
    result.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: selector.required.map(termToKubernetes) };
  }
  if (samePreferences(selector.preferred, facts.nodeAffinity.preferred)) {
    if (original?.preferredDuringSchedulingIgnoredDuringExecution !== undefined) {
      result.preferredDuringSchedulingIgnoredDuringExecution = original.preferredDuringSchedulingIgnoredDuringExecution;
    }
  } else if (selector.preferred.length > 0) {
    result.preferredDuringSchedulingIgnoredDuringExecution = selector.preferred.map(preferenceToKubernetes);
  }
  return Object.keys(result).length === 0 ? undefined : result;
}

function withField<T extends object>(source: T, key: string, value: unknown): T {
  const copy: Record<string, unknown> = { ...(source as Record<string, unknown>) };
  if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy as T;
}

function affinityWith(pod: Pod, nodeAffinity: NodeAffinity | undefined): Affinity | undefined {
  // The boundary read a null affinity as absent; an object is built afresh then.
  const affinity = withField(pod.spec?.affinity ?? {}, 'nodeAffinity', nodeAffinity);
  // An affinity container left empty is dropped rather than kept as {}.
  return Object.keys(affinity).length === 0 ? undefined : affinity;
}

/**
 * Builds the resulting Pod: a copy of the incoming Pod with only the changed subtrees replaced
 * (unchanged subtrees are shared, never edited in place).
 */
export function podWithState(facts: PodFacts, state: SchedulingState): Pod {
  const { pod } = facts;
  // A null metadata or spec was read as absent by the boundary; it is replaced by an object only when written into.
  let metadata = pod.metadata;
  let spec = pod.spec;
  if (state.annotations !== undefined) metadata = withField(metadata ?? {}, 'annotations', state.annotations);
  if (state.nodeSelector !== undefined) spec = withField(spec ?? {}, 'nodeSelector', state.nodeSelector);
  if (state.tolerations !== undefined) spec = withField(spec ?? {}, 'tolerations', state.tolerations);
  if (state.topologySpreadConstraints !== undefined) spec = withField(spec ?? {}, 'topologySpreadConstraints', state.topologySpreadConstraints);
  if (state.nodeAffinity !== undefined && !sameAffinity(state.nodeAffinity, facts.nodeAffinity)) {
    spec = withField(spec ?? {}, 'affinity', affinityWith(pod, nodeAffinityToKubernetes(state.nodeAffinity, facts)));
  }
  if (metadata === pod.metadata && spec === pod.spec) return pod;
  return { ...pod, ...(metadata === pod.metadata ? {} : { metadata }), ...(spec === pod.spec ? {} : { spec }) };
}
