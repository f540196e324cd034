/**
 * The one semantic diff of the scheduling fields of two Pods: map keys one by one; tolerations, preferred terms and
 * spread constraints compared as multisets of whole entries (what was written), and as Kubernetes reads them (`lost`,
 * `gained`): tolerations, required terms and spread constraints as sets, preferred terms as a multiset, since the
 * scheduler adds the weight of every preferred term a node matches (a repeated term counts twice). Required terms
 * are an OR of requirement sets, each term paired with its successor so that a change inside a term reads as the
 * requirements it lost and gained. Order is never a change: of terms, of requirements in a term, of values in a
 * requirement, of tolerations.
 */
import { canonicalJson, isJsonObject } from '../json/index.ts';
import { compareCodeUnits } from '../text/index.ts';
import type { NodeAffinity, NodeSelectorTerm, PreferredSchedulingTerm, Toleration } from './core-shapes.ts';
import {
  preferenceFromKubernetes,
  termFromKubernetes,
  type Preference,
  type Requirement,
  type Term,
} from './requirements.ts';

/**
 * The scheduling fields of one Pod that rules and managed placement change, in their core/v1 shapes, as the Pod
 * boundary checked them. Absent and null are alike, as Go decodes null into a nil map, list or pointer.
 */
interface SchedulingFields {
  readonly annotations?: Readonly<Record<string, string>> | null;
  readonly nodeSelector?: Readonly<Record<string, string>> | null;
  readonly tolerations?: readonly Toleration[] | null;
  readonly nodeAffinity?: NodeAffinity | null;
  /** Compared and printed as whole JSON values: the engine only ever adds or keeps one. */
  readonly topologySpreadConstraints?: readonly unknown[] | null;
}

/** One key of a map: added (no `before`), removed (no `after`) or changed (both). */
interface KeyChange {
  readonly key: string;
  readonly before?: string;
  readonly after?: string;
}

/**
 * Whole entries of a list compared as a multiset: the entries only the list before has, then those only the list after
 * has, each in its list's order. `lost` and `gained` are the change as Kubernetes reads the list, in the same orders
 * (for a list read as a set: one entry per identity the other list lacks). `reordered` says the lists are the same as
 * Kubernetes reads them yet written differently (in another order, or with other repeats).
 */
interface EntryChanges<T> {
  readonly removed: readonly T[];
  readonly added: readonly T[];
  readonly lost: readonly T[];
  readonly gained: readonly T[];
  readonly reordered: boolean;
}

/** A required term and its 0-based position in the list it belongs to. */
interface PlacedTerm {
  readonly position: number;
  readonly term: Term;
}

/** A term before and the term after that succeeds it; the requirements it lost and gained, as written (none when unchanged). */
interface TermPair {
  readonly before: PlacedTerm;
  readonly after: PlacedTerm;
  readonly removed: readonly Requirement[];
  readonly added: readonly Requirement[];
}

/**
 * The required terms before and after: `pairs` in the order of the list after, unchanged pairs included (a person reads
 * the OR whole); terms with no successor (`removed`, in the order before) and terms with no predecessor (`added`).
 * `lost` and `gained` are the terms, one per set of requirements, that only the OR before or only the OR after has:
 * the change as Kubernetes reads it. `reordered` says the ORs are the same yet written differently.
 */
interface RequiredChanges {
  readonly pairs: readonly TermPair[];
  readonly removed: readonly PlacedTerm[];
  readonly added: readonly PlacedTerm[];
  readonly lost: readonly Term[];
  readonly gained: readonly Term[];
  readonly reordered: boolean;
}

/** What changed in each scheduling field between two Pods. */
interface SchedulingDiff {
  readonly annotations: readonly KeyChange[];
  readonly nodeSelector: readonly KeyChange[];
  readonly tolerations: EntryChanges<Toleration>;
  readonly required: RequiredChanges;
  readonly preferred: EntryChanges<Preference>;
  readonly topologySpreadConstraints: EntryChanges<unknown>;
}

/** The identity of a toleration: its five fields, an absent operator read as Equal (as Kubernetes reads it). */
function tolerationIdentity(toleration: Toleration): string {
  const { key, operator, value, effect, tolerationSeconds } = toleration;
  // A flat list of scalars is canonical JSON already, and no field's text can run into the next one's.
  return JSON.stringify([key ?? '', operator || 'Equal', value ?? '', effect ?? '', tolerationSeconds ?? null]);
}

function keyChanges(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>): KeyChange[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const changes: KeyChange[] = [];
  for (const key of keys) {
    const was = Object.hasOwn(before, key) ? before[key] : undefined;
    const is = Object.hasOwn(after, key) ? after[key] : undefined;
    if (was === is) continue;
    changes.push({ key, ...(was === undefined ? {} : { before: was }), ...(is === undefined ? {} : { after: is }) });
  }
  return changes;
}

/** The entries of `items` left over once each entry of `other` has cancelled one equal entry. */
function unmatched<T>(items: readonly T[], other: readonly T[], identity: (item: T) => string): T[] {
  const counts = new Map<string, number>();
  for (const item of other) counts.set(identity(item), (counts.get(identity(item)) ?? 0) + 1);
  return items.filter((item) => {
    const count = counts.get(identity(item)) ?? 0;
    counts.set(identity(item), count - 1);
    return count <= 0;
  });
}

/** The first of `items` of each identity that `other` has none of. */
function missing<T>(items: readonly T[], other: readonly T[], identity: (item: T) => string): T[] {
  const seen = new Set(other.map(identity));
  return items.filter((item) => {
    const id = identity(item);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** How Kubernetes reads a list: as a set (repeats mean nothing) or as a multiset (each repeat counts). */
type Reading = 'set' | 'multiset';

/** How a list's entries are read: each one's identity, each one as written, and the list as a set or a multiset. */
interface ListReading<T> {
  readonly identity: (item: T) => string;
  readonly written: (item: T) => string;
  readonly reading: Reading;
}

function entryChanges<T>(before: readonly T[], after: readonly T[], list: ListReading<T>): EntryChanges<T> {
  const { identity, written, reading } = list;
  const removed = unmatched(before, after, identity);
  const added = unmatched(after, before, identity);
  const lost = reading === 'set' ? missing(removed, after, identity) : removed;
  const gained = reading === 'set' ? missing(added, before, identity) : added;
  const reordered =
    lost.length === 0 && gained.length === 0 && before.map(written).join('\n') !== after.map(written).join('\n');
  return { removed, added, lost, gained, reordered };
}

/**
 * A spread constraint without what the API server merges into it: with matchLabelKeys, the API server adds an In
 * requirement per key (with the Pod's own label value) to labelSelector at creation, which the template never has.
 */
function spreadIdentity(constraint: unknown): string {
  if (!isJsonObject(constraint) || !Array.isArray(constraint.matchLabelKeys) || !isJsonObject(constraint.labelSelector))
    return canonicalJson(constraint);
  const keys = new Set(constraint.matchLabelKeys.filter((key): key is string => typeof key === 'string'));
  const { matchExpressions, ...selector } = constraint.labelSelector;
  const kept = Array.isArray(matchExpressions)
    ? matchExpressions.filter(
        (item) => !(isJsonObject(item) && item.operator === 'In' && typeof item.key === 'string' && keys.has(item.key)),
      )
    : [];
  const labelSelector = kept.length === 0 ? selector : { ...selector, matchExpressions: kept };
  const normalized: Record<string, unknown> = { ...constraint, labelSelector };
  if (Object.keys(labelSelector).length === 0) delete normalized.labelSelector;
  return canonicalJson(normalized);
}

/** A term as written: requirements and values in their order, duplicates kept; null lists read as empty. */
function writtenTerm(source: NodeSelectorTerm | null | undefined): string {
  const requirements = (list: NodeSelectorTerm['matchExpressions'] | null) =>
    (list ?? []).map((item) => [item.key ?? '', item.operator ?? '', item.values ?? []]);
  return JSON.stringify([requirements(source?.matchExpressions ?? null), requirements(source?.matchFields ?? null)]);
}

function requirementsOf(source: Term): readonly Requirement[] {
  return source.fields.length === 0 ? source.expressions : [...source.expressions, ...source.fields];
}

function sharedCount(left: Term, right: Term): number {
  let shared = 0;
  for (const id of left.ids) if (right.ids.has(id)) shared += 1;
  return shared;
}

/**
 * Pairs each term before with at most one term after. Identical terms pair first. Then, greedily, the pair sharing
 * the most requirements, ties broken by the fewest requirements changed, then by the terms' identities (not their
 * positions, so the pairing does not depend on the order of either list); a term sharing no requirement with any
 * unpaired term stays unpaired: removed, or added.
 */
function pairTerms(before: readonly Term[], after: readonly Term[]): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  const pairedBefore = new Set<number>();
  const pairedAfter = new Set<number>();
  const waiting = new Map<string, number[]>();
  before.forEach((item, index) => {
    const queue = waiting.get(item.id);
    if (queue === undefined) waiting.set(item.id, [index]);
    else queue.push(index);
  });
  after.forEach((item, index) => {
    const match = waiting.get(item.id)?.shift();
    if (match === undefined) return;
    pairs.push([match, index]);
    pairedBefore.add(match);
    pairedAfter.add(index);
  });
  const candidates: Array<{
    readonly left: number;
    readonly right: number;
    readonly shared: number;
    readonly changed: number;
  }> = [];
  before.forEach((left, i) => {
    if (pairedBefore.has(i)) return;
    after.forEach((right, j) => {
      if (pairedAfter.has(j)) return;
      const shared = sharedCount(left, right);
      if (shared > 0)
        candidates.push({ left: i, right: j, shared, changed: left.ids.size + right.ids.size - 2 * shared });
    });
  });
  candidates.sort(
    (a, b) =>
      b.shared - a.shared ||
      a.changed - b.changed ||
      compareCodeUnits(before[a.left]!.id, before[b.left]!.id) ||
      compareCodeUnits(after[a.right]!.id, after[b.right]!.id) ||
      a.left - b.left ||
      a.right - b.right,
  );
  for (const { left, right } of candidates) {
    if (pairedBefore.has(left) || pairedAfter.has(right)) continue;
    pairs.push([left, right]);
    pairedBefore.add(left);
    pairedAfter.add(right);
  }
  return pairs;
}

/** True when the required terms differ as an OR of requirement sets: some term only one side has. */
function termsChanged(required: Pick<RequiredChanges, 'lost' | 'gained'>): boolean {
  return required.lost.length > 0 || required.gained.length > 0;
}

/** True when some term was removed, added or changed as written: repeated terms are, even where the OR is the same. */
function termsRewritten(required: Pick<RequiredChanges, 'pairs' | 'removed' | 'added'>): boolean {
  return (
    required.removed.length > 0 ||
    required.added.length > 0 ||
    required.pairs.some((pair) => pair.removed.length > 0 || pair.added.length > 0)
  );
}

function requiredChanges(before: readonly NodeSelectorTerm[], after: readonly NodeSelectorTerm[]): RequiredChanges {
  const left = before.map(termFromKubernetes);
  const right = after.map(termFromKubernetes);
  const pairs = pairTerms(left, right)
    .sort(([, a], [, b]) => a - b)
    .map(([i, j]): TermPair => ({
      before: { position: i, term: left[i]! },
      after: { position: j, term: right[j]! },
      removed: requirementsOf(left[i]!).filter((requirement) => !right[j]!.ids.has(requirement.id)),
      added: requirementsOf(right[j]!).filter((requirement) => !left[i]!.ids.has(requirement.id)),
    }));
  const pairedBefore = new Set(pairs.map((pair) => pair.before.position));
  const pairedAfter = new Set(pairs.map((pair) => pair.after.position));
  const removed = left.flatMap((term, position) => (pairedBefore.has(position) ? [] : [{ position, term }]));
  const added = right.flatMap((term, position) => (pairedAfter.has(position) ? [] : [{ position, term }]));
  const lost = missing(left, right, (term) => term.id);
  const gained = missing(right, left, (term) => term.id);
  const reordered =
    !termsChanged({ lost, gained }) && before.map(writtenTerm).join('\n') !== after.map(writtenTerm).join('\n');
  return { pairs, removed, added, lost, gained, reordered };
}

function requiredTerms(affinity: NodeAffinity | null | undefined): readonly NodeSelectorTerm[] {
  return affinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
}

function preferences(
  affinity: NodeAffinity | null | undefined,
): Array<{ readonly preference: Preference; readonly written: string }> {
  return (affinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map((item: PreferredSchedulingTerm) => ({
    preference: preferenceFromKubernetes(item),
    written: `${item.weight ?? 0} ${writtenTerm(item.preference)}`,
  }));
}

/** The changes from one Pod's scheduling fields to another's. Pure; the diff of a Pod with itself is empty. */
function diffScheduling(before: SchedulingFields, after: SchedulingFields): SchedulingDiff {
  const preferred = entryChanges(preferences(before.nodeAffinity), preferences(after.nodeAffinity), {
    identity: (item) => item.preference.id,
    written: (item) => item.written,
    reading: 'multiset',
  });
  return {
    annotations: keyChanges(before.annotations ?? {}, after.annotations ?? {}),
    nodeSelector: keyChanges(before.nodeSelector ?? {}, after.nodeSelector ?? {}),
    tolerations: entryChanges(before.tolerations ?? [], after.tolerations ?? [], {
      identity: tolerationIdentity,
      written: tolerationIdentity,
      reading: 'set',
    }),
    required: requiredChanges(requiredTerms(before.nodeAffinity), requiredTerms(after.nodeAffinity)),
    preferred: {
      removed: preferred.removed.map((item) => item.preference),
      added: preferred.added.map((item) => item.preference),
      lost: preferred.lost.map((item) => item.preference),
      gained: preferred.gained.map((item) => item.preference),
      reordered: preferred.reordered,
    },
    topologySpreadConstraints: entryChanges(
      before.topologySpreadConstraints ?? [],
      after.topologySpreadConstraints ?? [],
      { identity: spreadIdentity, written: canonicalJson, reading: 'set' },
    ),
  };
}

/**
 * True when no field changed as Kubernetes reads it (a reordering or a repeat alone is no change).
 * @internal Exported for tests: tested on its own: the law tying it to sameScheduling.
 */
function isEmptySchedulingDiff(diff: SchedulingDiff): boolean {
  return (
    diff.annotations.length === 0 &&
    diff.nodeSelector.length === 0 &&
    [diff.tolerations, diff.preferred, diff.topologySpreadConstraints].every(
      (field) => field.lost.length === 0 && field.gained.length === 0,
    ) &&
    !termsChanged(diff.required)
  );
}

export {
  diffScheduling,
  isEmptySchedulingDiff,
  requiredTerms,
  spreadIdentity,
  termsChanged,
  termsRewritten,
  tolerationIdentity,
};
export type { SchedulingFields, KeyChange, EntryChanges, PlacedTerm, TermPair, RequiredChanges, SchedulingDiff };
