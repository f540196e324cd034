/**
 * The one scheduling view of a Pod: its scheduling fields read from the Pod (`schedulingFieldsOf`), and whether two
 * views schedule alike as Kubernetes reads them (`sameScheduling`), which is what diff.ts calls an empty diff.
 */
import { requiredTerms, spreadIdentity, tolerationIdentity, type SchedulingFields } from './diff.ts';
import type { NodeAffinity, Toleration } from './core-shapes.ts';
import { preferenceFromKubernetes, termFromKubernetes } from './requirements.ts';

/** The part of a core/v1 Pod the scheduling view reads; absent and null are alike, as Go decodes null into nil. */
interface SchedulingSource {
  readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> | null } | null;
  readonly spec?: {
    readonly nodeSelector?: Readonly<Record<string, string>> | null;
    readonly tolerations?: readonly Toleration[] | null;
    readonly affinity?: { readonly nodeAffinity?: NodeAffinity | null } | null;
    readonly topologySpreadConstraints?: readonly unknown[] | null;
  } | null;
}

/**
 * The scheduling fields of a Pod the engine's boundary accepted: node selector, tolerations, node affinity, spread
 * constraints, and the annotations `annotationCounts` keeps (all of them by default); each caller says which
 * annotations belong to the change it shows (the CLI leaves out the stamp, the report keeps the rules' own, test
 * leaves out the product's).
 */
function schedulingFieldsOf(
  pod: SchedulingSource,
  annotationCounts: (key: string) => boolean = () => true,
): SchedulingFields {
  const annotations: Record<string, string> = {};
  const source = pod.metadata?.annotations ?? {};
  for (const key of Object.keys(source)) if (annotationCounts(key)) annotations[key] = source[key]!;
  return {
    annotations,
    nodeSelector: pod.spec?.nodeSelector,
    tolerations: pod.spec?.tolerations,
    nodeAffinity: pod.spec?.affinity?.nodeAffinity,
    topologySpreadConstraints: pod.spec?.topologySpreadConstraints,
  };
}

/** The value of each key either map has, a key one lacks read as absent: equal maps as diff.ts's keyChanges reads them. */
function sameMap(
  left: Readonly<Record<string, string>> | null | undefined,
  right: Readonly<Record<string, string>> | null | undefined,
): boolean {
  const before = left ?? {};
  const after = right ?? {};
  const valueOf = (map: Readonly<Record<string, string>>, key: string) =>
    Object.hasOwn(map, key) ? map[key] : undefined;
  return [...Object.keys(before), ...Object.keys(after)].every((key) => valueOf(before, key) === valueOf(after, key));
}

function sameSet(left: readonly string[], right: readonly string[]): boolean {
  const before = new Set(left);
  const after = new Set(right);
  return before.size === after.size && [...before].every((id) => after.has(id));
}

function sameMultiset(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  const counts = new Map<string, number>();
  for (const id of left) counts.set(id, (counts.get(id) ?? 0) + 1);
  for (const id of right) {
    const count = counts.get(id) ?? 0;
    if (count === 0) return false;
    counts.set(id, count - 1);
  }
  return true;
}

const preferenceIds = (affinity: NodeAffinity | null | undefined): string[] =>
  (affinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((item) => preferenceFromKubernetes(item).id);

/**
 * True when two Pods' scheduling fields are the same as Kubernetes reads them: exactly when
 * `isEmptySchedulingDiff(diffScheduling(left, right))`, with the same identities (tolerations, required terms and
 * spread constraints as sets, preferred terms as a multiset), without pairing terms or listing changes. Order and, in
 * a set, repeats are no difference.
 */
function sameScheduling(left: SchedulingFields, right: SchedulingFields): boolean {
  return (
    sameMap(left.annotations, right.annotations) &&
    sameMap(left.nodeSelector, right.nodeSelector) &&
    sameSet((left.tolerations ?? []).map(tolerationIdentity), (right.tolerations ?? []).map(tolerationIdentity)) &&
    sameSet(
      requiredTerms(left.nodeAffinity).map((term) => termFromKubernetes(term).id),
      requiredTerms(right.nodeAffinity).map((term) => termFromKubernetes(term).id),
    ) &&
    sameMultiset(preferenceIds(left.nodeAffinity), preferenceIds(right.nodeAffinity)) &&
    sameSet(
      (left.topologySpreadConstraints ?? []).map(spreadIdentity),
      (right.topologySpreadConstraints ?? []).map(spreadIdentity),
    )
  );
}

export { schedulingFieldsOf, sameScheduling };
