import { disjointUnion, isEmptyTerm, term, type Preference, type Requirement, type Term } from './requirements.ts';

/**
 * Canonicalizes an OR of terms, the one canonical form of every path that changes required terms (an AND, a key
 * removal): empty terms are dropped while another term exists (an empty term selects no node, so under OR it adds
 * nothing), identical terms collapse to the first, and a term whose requirement set strictly contains another
 * term's set is dropped (it is redundant under OR). Order of the survivors is kept, so the result is deterministic.
 * Pure.
 */
function canonicalizeTerms(terms: readonly Term[]): readonly Term[] {
  const distinct: Term[] = [];
  const seen = new Set<string>();
  for (const candidate of dropEmptyTerms(terms)) {
    if (seen.has(candidate.id)) continue;
    seen.add(candidate.id);
    distinct.push(candidate);
  }
  if (distinct.length < 2) return distinct;
  const redundant = strictSupersets(distinct);
  return redundant.size === 0 ? distinct : distinct.filter((_, index) => !redundant.has(index));
}

/**
 * Indexes of terms that strictly contain another term of the list. Each term is filed under its
 * rarest requirement; a subset of a term must share that requirement, so a term is only tested
 * against the terms filed under one of its own requirements. A requirement common to every term
 * (a 64 x 64 product shares the Pod's) then costs nothing, where a plain inverted index cost n².
 */
function strictSupersets(terms: readonly Term[]): Set<number> {
  const redundant = new Set<number>();
  const sizes = terms.map((candidate) => candidate.ids.size);
  if (sizes.every((size) => size === sizes[0])) return redundant;
  const frequency = new Map<string, number>();
  for (const candidate of terms) for (const id of candidate.ids) frequency.set(id, (frequency.get(id) ?? 0) + 1);
  const filed = new Map<string, number[]>();
  terms.forEach((candidate, index) => {
    let rarest = '';
    let rarestCount = Infinity;
    for (const id of candidate.ids) {
      const count = frequency.get(id)!;
      if (count < rarestCount) {
        rarest = id;
        rarestCount = count;
      }
    }
    const list = filed.get(rarest);
    if (list === undefined) filed.set(rarest, [index]);
    else list.push(index);
  });
  terms.forEach((candidate, index) => {
    for (const id of candidate.ids) {
      for (const other of filed.get(id) ?? []) {
        if (sizes[other]! < sizes[index]! && termContains(candidate, terms[other]!)) {
          redundant.add(index);
          return;
        }
      }
    }
  });
  return redundant;
}

/** Number of terms the Cartesian product of two ORs holds before canonicalization. */
function productSize(current: readonly Term[], added: readonly Term[]): number {
  return current.length * added.length;
}

/**
 * Logical AND of two ORs of terms: every current term combined with every added term
 * (requirements concatenated, current first), then canonicalized. Pure; callers bound the size
 * with `productSize` first.
 */
function andTerms(current: readonly Term[], added: readonly Term[]): readonly Term[] {
  const product: Term[] = [];
  for (const left of current) {
    for (const right of added) product.push(combineTerms(left, right));
  }
  return canonicalizeTerms(product);
}

/**
 * AND of two terms: the current term's requirements, then the added term's. A requirement on both
 * sides collapses to one at the added position (keeping the current spelling of its values), so
 * applying the same addition again yields the same order.
 */
function combineTerms(left: Term, right: Term): Term {
  let overlaps = false;
  for (const id of right.ids) {
    if (left.ids.has(id)) {
      overlaps = true;
      break;
    }
  }
  // Disjoint terms (the common case, measured to dominate a 64 x 64 product) need no collapsing.
  if (!overlaps) return disjointUnion(left, right);
  const shared = new Map<string, Requirement>();
  for (const requirement of [...left.expressions, ...left.fields])
    if (right.ids.has(requirement.id)) shared.set(requirement.id, requirement);
  const keep = (requirement: Requirement) => !shared.has(requirement.id);
  const spell = (requirement: Requirement) => shared.get(requirement.id) ?? requirement;
  return term(
    [...left.expressions.filter(keep), ...right.expressions.map(spell)],
    [...left.fields.filter(keep), ...right.fields.map(spell)],
  );
}

/** The term without label requirements on `keys`; field requirements are not label keys and stay. Pure. */
function withoutKeys(source: Term, keys: ReadonlySet<string>): Term {
  if (!source.expressions.some((requirement) => keys.has(requirement.key))) return source;
  return term(
    source.expressions.filter((requirement) => !keys.has(requirement.key)),
    source.fields,
  );
}

/**
 * True when the selector term matches the Pod term: every requirement of the selector term has a
 * requirement in the Pod term with the same key, operator and set of values (the Pod term may hold more).
 */
function termContains(podTerm: Term, selectorTerm: Term): boolean {
  if (selectorTerm.ids.size > podTerm.ids.size) return false;
  for (const id of selectorTerm.ids) if (!podTerm.ids.has(id)) return false;
  return true;
}

/** True when some selector term matches some Pod term (terms are ORed on both sides). */
function requiredMatches(podTerms: readonly Term[], selectorTerms: readonly Term[]): boolean {
  return selectorTerms.some((selectorTerm) => podTerms.some((podTerm) => termContains(podTerm, selectorTerm)));
}

/** True when every configured preference has a Pod preference of the same weight whose term it matches. */
function preferredMatches(podPreferences: readonly Preference[], selectorPreferences: readonly Preference[]): boolean {
  return selectorPreferences.every((wanted) =>
    podPreferences.some((present) => present.weight === wanted.weight && termContains(present.term, wanted.term)),
  );
}

/** Appends preferences, dropping any identical (weight and requirement set) to one already present. Pure. */
function appendPreferences(current: readonly Preference[], added: readonly Preference[]): readonly Preference[] {
  const seen = new Set(current.map((item) => item.id));
  const result = [...current];
  for (const item of added) {
    if (seen.has(item.id)) continue;
    seen.add(item.id);
    result.push(item);
  }
  return result;
}

/** Drops empty terms when other terms exist: an empty term matches no node, so under OR it adds nothing. */
function dropEmptyTerms(terms: readonly Term[]): readonly Term[] {
  const nonEmpty = terms.filter((candidate) => !isEmptyTerm(candidate));
  // A selector of only empty terms matches no node; keep it so, rather than turn it into "no selector".
  return nonEmpty.length === terms.length || nonEmpty.length === 0 ? terms : nonEmpty;
}

export {
  canonicalizeTerms,
  productSize,
  andTerms,
  withoutKeys,
  requiredMatches,
  preferredMatches,
  appendPreferences,
  dropEmptyTerms,
};
