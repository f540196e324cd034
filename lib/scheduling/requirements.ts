import type { NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm } from './core-shapes.ts';

/**
 * One requirement on a node label (or, for matchFields, a node field). Immutable. `id` is its identity:
 * key, operator and the SET of values, so order and duplicates of values never matter.
 */
export interface Requirement {
  readonly key: string;
  /**
   * Kept verbatim, not narrowed to Kubernetes' six operators: a Pod's term is compared by identity, and
   * semantics.ts reads an operator it does not know as matching no node, as the scheduler would refuse it.
   */
  readonly operator: string;
  /** The values as written (order kept for output; identity ignores it). */
  readonly values: readonly string[];
  readonly id: string;
}

/**
 * A node selector term: its label requirements and its field requirements, all ANDed. Immutable.
 * `ids` is the set of requirement identities; `id` names the term as a set (terms with equal ids are equal).
 */
export interface Term {
  readonly expressions: readonly Requirement[];
  readonly fields: readonly Requirement[];
  readonly ids: ReadonlySet<string>;
  readonly id: string;
}

/** A weighted preferred term; identity is the weight plus the term's requirement set. */
export interface Preference {
  readonly weight: number;
  readonly term: Term;
  readonly id: string;
}

const SEPARATOR = '\u0000';
const TERM_SEPARATOR = '\u0001';
const FIELD_MARK = 'f';
const EXPRESSION_MARK = 'e';

function requirementId(mark: string, key: string, operator: string, values: readonly string[]): string {
  const set = values.length <= 1 ? values : [...new Set(values)].sort();
  return mark + SEPARATOR + key + SEPARATOR + operator + SEPARATOR + set.join(SEPARATOR);
}

/** Builds a label requirement. Pure. */
function labelRequirement(key: string, operator: string, values: readonly string[] = []): Requirement {
  return { key, operator, values, id: requirementId(EXPRESSION_MARK, key, operator, values) };
}

function fieldRequirement(key: string, operator: string, values: readonly string[] = []): Requirement {
  return { key, operator, values, id: requirementId(FIELD_MARK, key, operator, values) };
}

/** Builds a term; identical requirements collapse to the first of them. Pure. */
function term(expressions: readonly Requirement[], fields: readonly Requirement[] = []): Term {
  const ids = new Set<string>();
  const keptExpressions = collapse(expressions, ids);
  const keptFields = collapse(fields, ids);
  return { expressions: keptExpressions, fields: keptFields, ids, id: [...ids].sort().join(TERM_SEPARATOR) };
}

/** AND of two terms that share no requirement: their lists concatenated, left first. */
function disjointUnion(left: Term, right: Term): Term {
  const ids = new Set(left.ids);
  for (const id of right.ids) ids.add(id);
  return {
    expressions: right.expressions.length === 0 ? left.expressions : left.expressions.concat(right.expressions),
    fields: right.fields.length === 0 ? left.fields : left.fields.concat(right.fields),
    ids,
    id: [...ids].sort().join(TERM_SEPARATOR),
  };
}

function collapse(requirements: readonly Requirement[], seen: Set<string>): readonly Requirement[] {
  let kept: Requirement[] | undefined;
  requirements.forEach((requirement, index) => {
    if (seen.has(requirement.id)) {
      kept ??= requirements.slice(0, index);
      return;
    }
    seen.add(requirement.id);
    kept?.push(requirement);
  });
  return kept ?? requirements;
}

/** True when the term has no requirement at all: Kubernetes' "nil or empty term selects no objects". */
function isEmptyTerm(candidate: Term): boolean {
  return candidate.ids.size === 0;
}

/** Builds a preference. Pure. */
function preference(weight: number, preferenceTerm: Term): Preference {
  return { weight, term: preferenceTerm, id: `${weight}${TERM_SEPARATOR}${preferenceTerm.id}` };
}

/**
 * Converts a Kubernetes NodeSelectorTerm into a term (normalising, at the edge). The shape must have been checked
 * (rule validator, Pod boundary); absent or null fields are Go's zero values: empty lists and strings.
 */
function termFromKubernetes(source: NodeSelectorTerm | null | undefined): Term {
  const expressions = (source?.matchExpressions ?? []).map((item) =>
    labelRequirement(item.key ?? '', item.operator ?? '', item.values ?? []),
  );
  const fields = (source?.matchFields ?? []).map((item) =>
    fieldRequirement(item.key ?? '', item.operator ?? '', item.values ?? []),
  );
  return term(expressions, fields);
}

/** Converts a checked Kubernetes PreferredSchedulingTerm into a preference; an absent weight is Go's zero, 0. */
function preferenceFromKubernetes(source: PreferredSchedulingTerm): Preference {
  return preference(source.weight ?? 0, termFromKubernetes(source.preference));
}

function requirementToKubernetes(requirement: Requirement): NodeSelectorRequirement {
  return requirement.values.length === 0
    ? { key: requirement.key, operator: requirement.operator }
    : { key: requirement.key, operator: requirement.operator, values: requirement.values };
}

/** Converts a term back into the Kubernetes shape; empty lists are omitted. */
function termToKubernetes(source: Term): NodeSelectorTerm {
  const result: { matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] } = {};
  if (source.expressions.length > 0) result.matchExpressions = source.expressions.map(requirementToKubernetes);
  if (source.fields.length > 0) result.matchFields = source.fields.map(requirementToKubernetes);
  return result;
}

/** Converts a preference back into the Kubernetes shape. */
function preferenceToKubernetes(source: Preference): PreferredSchedulingTerm {
  return { weight: source.weight, preference: termToKubernetes(source.term) };
}

/** Number of requirements (label and field) in a term, as the limits count them. */
function requirementCount(source: Term): number {
  return source.expressions.length + source.fields.length;
}

export {
  labelRequirement,
  disjointUnion,
  term,
  isEmptyTerm,
  preference,
  termFromKubernetes,
  preferenceFromKubernetes,
  termToKubernetes,
  preferenceToKubernetes,
  requirementCount,
};
