/**
 * Diversity's sequence rule: the capacity of a workload's k-th Pod (k from 0) as a pure function of k, so that every
 * prefix of the sequence holds the target split exactly and its first `minOnDemand` Pods are on-demand.
 */
import type { PodFacts } from '../engine/index.ts';
import { workloadKey } from './policy.ts';
import type { CapacityChoice } from './types.ts';

/**
 * The targets of one Diversity policy: percent of Pods on Spot, and the least number of Pods on on-demand.
 * @internal Exported for tests: the tests type the split they check.
 */
interface SplitTarget {
  readonly spotPercent: number;
  readonly minOnDemand: number;
}

/**
 * The number of Spot Pods among the first `count`: floor(count * spotPercent / 100), but never so many that fewer than
 * minOnDemand remain on-demand. Non-decreasing in count, by 0 or 1 per Pod.
 * @internal Exported for tests: tested on its own: the law that a workload's split converges to its target.
 */
function spotCount(count: number, target: SplitTarget): number {
  return Math.max(0, Math.min(Math.floor((count * target.spotPercent) / 100), count - target.minOnDemand));
}

/** The capacity of the Pod with 0-based sequence number `sequence`: Spot iff it raises spotCount by one. */
function sequenceChoice(sequence: number, target: SplitTarget): CapacityChoice {
  return spotCount(sequence + 1, target) > spotCount(sequence, target) ? 'spot' : 'on-demand';
}

// The StatefulSet controller labels each Pod with its ordinal (apps.kubernetes.io/pod-index, since 1.28) and names it
// <set>-<ordinal> (pkg/controller/statefulset/stateful_set_utils.go getPodName).
const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
const ORDINAL_SUFFIX = /-(\d{1,9})$/;

/**
 * A StatefulSet Pod's ordinal, its number in the sequence: the controller creates ordinals from 0 and scales down from
 * the highest (pkg/controller/statefulset/stateful_set_control.go), so its live Pods are always a prefix. Undefined for
 * any other Pod, or a StatefulSet Pod that carries neither.
 */
function statefulSetOrdinal(facts: PodFacts): number | undefined {
  if (facts.workload.kind !== 'StatefulSet') return undefined;
  const index = facts.labels[POD_INDEX_LABEL];
  if (index !== undefined && /^\d{1,9}$/.test(index)) return Number(index);
  const name = facts.pod.metadata?.name;
  const suffix = typeof name === 'string' ? ORDINAL_SUFFIX.exec(name) : null;
  return suffix === null ? undefined : Number(suffix[1]);
}

// Each ReplicaSet of a rolling update counts from 0: its Pods carry their template's hash (the Deployment controller's
// pod-template-hash, Argo Rollouts' rollouts-pod-template-hash).
const REVISION_LABELS = ['pod-template-hash', 'rollouts-pod-template-hash'] as const;

/**
 * The key of the counter that numbers a Diversity Pod (workload, then the revision of its template); undefined when
 * the Pod needs none: not placed by Diversity, or a StatefulSet Pod, numbered by its ordinal. Pure.
 */
function diversityCounterKey(facts: PodFacts, placement: { readonly mode: string } | undefined): string | undefined {
  if (placement?.mode !== 'Diversity' || statefulSetOrdinal(facts) !== undefined) return undefined;
  const { namespace, kind, name } = facts.workload;
  const revision = REVISION_LABELS.map((key) => facts.labels[key]).find((value) => value !== undefined) ?? '';
  return `${workloadKey(namespace, kind, name)}#${revision}`;
}

export { spotCount, sequenceChoice, statefulSetOrdinal, diversityCounterKey };
export type { SplitTarget };
