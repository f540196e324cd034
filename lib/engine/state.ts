import type { Affinity, Pod } from './pod-shape.ts';
import type { NodeAffinity, Toleration } from '../scheduling/index.ts';
import { preferenceToKubernetes, termToKubernetes, type Term } from '../scheduling/index.ts';
import type { PodFacts } from './pod.ts';
import type { AffinitySelector } from './compile.ts';

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

/** True when two lists hold the same identities the same number of times, in any order. */
function sameMultiset(left: readonly { readonly id: string }[], right: readonly { readonly id: string }[]): boolean {
  if (left === right) return true;
  if (left.length !== right.length) return false;
  if (left.every((item, index) => item.id === right[index]!.id)) return true;
  const counts = new Map<string, number>();
  for (const item of left) counts.set(item.id, (counts.get(item.id) ?? 0) + 1);
  for (const item of right) {
    const count = counts.get(item.id);
    if (count === undefined || count === 0) return false;
    counts.set(item.id, count - 1);
  }
  return true;
}

/**
 * True when two required selectors select alike because they hold the same terms as sets: the order of terms, of
 * requirements and of values is not part of the selector. A result equal to the Pod's own selector in this sense
 * keeps the Pod's bytes, so a second review that reaches the same selector by another order emits nothing.
 */
function sameTerms(left: readonly Term[] | undefined, right: readonly Term[] | undefined): boolean {
  if (left === right) return true;
  return left !== undefined && right !== undefined && sameMultiset(left, right);
}

/** True when two affinities are the same selector: the same required terms and the same preferences, as sets. */
export function sameAffinity(left: AffinitySelector, right: AffinitySelector): boolean {
  return sameTerms(left.required, right.required) && sameMultiset(left.preferred, right.preferred);
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
    result.requiredDuringSchedulingIgnoredDuringExecution = {
      nodeSelectorTerms: selector.required.map(termToKubernetes),
    };
  }
  if (sameMultiset(selector.preferred, facts.nodeAffinity.preferred)) {
    if (original?.preferredDuringSchedulingIgnoredDuringExecution !== undefined) {
      result.preferredDuringSchedulingIgnoredDuringExecution = original.preferredDuringSchedulingIgnoredDuringExecution;
    }
  } else if (selector.preferred.length > 0) {
    result.preferredDuringSchedulingIgnoredDuringExecution = selector.preferred.map(preferenceToKubernetes);
  }
  return Object.keys(result).length === 0 ? undefined : result;
}

/** A copy of `source` with `key` set to `value`, or without it when `value` is undefined. */
export function withField<T extends object>(source: T, key: string, value: unknown): T {
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
 * Whether a state field is written into the Pod: not when the state never set it, nor when it is an empty list or map
 * where the Pod has none, which Kubernetes reads as the same (a removal from a Pod without tolerations is no change).
 */
function writes(container: object | undefined, key: string, value: unknown): boolean {
  if (value === undefined) return false;
  const empty = Array.isArray(value)
    ? value.length === 0
    : typeof value === 'object' && Object.keys(value!).length === 0;
  return !empty || (container as Record<string, unknown> | undefined)?.[key] != null;
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
  if (writes(metadata, 'annotations', state.annotations))
    metadata = withField(metadata ?? {}, 'annotations', state.annotations);
  if (writes(spec, 'nodeSelector', state.nodeSelector))
    spec = withField(spec ?? {}, 'nodeSelector', state.nodeSelector);
  if (writes(spec, 'tolerations', state.tolerations)) spec = withField(spec ?? {}, 'tolerations', state.tolerations);
  if (state.topologySpreadConstraints !== undefined)
    spec = withField(spec ?? {}, 'topologySpreadConstraints', state.topologySpreadConstraints);
  if (state.nodeAffinity !== undefined && !sameAffinity(state.nodeAffinity, facts.nodeAffinity)) {
    spec = withField(spec ?? {}, 'affinity', affinityWith(pod, nodeAffinityToKubernetes(state.nodeAffinity, facts)));
  }
  if (metadata === pod.metadata && spec === pod.spec) return pod;
  return { ...pod, ...(metadata === pod.metadata ? {} : { metadata }), ...(spec === pod.spec ? {} : { spec }) };
}
