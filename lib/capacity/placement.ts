/**
 * Where a Pod asks to run: its nodeSelector, node affinity and tolerations, the fields kube-scheduler's NodeAffinity,
 * NodeUnschedulable and TaintToleration filters and Karpenter's provisioner read; and the one check that needs no
 * capacity at all, whether they can hold together on any node.
 */
import {
  conflictingKey,
  fieldMatches,
  isEmptyTerm,
  labelRequirement,
  requirementParses,
  selectorMatcher,
  type NodeTest,
  type NodeView,
  type Preference,
  type Requirement,
  type Term,
  type Toleration,
} from '../scheduling/index.ts';
import { HOSTNAME_LABEL } from './labels.ts';

/**
 * The Pod fields a placement is read from; the engine's PodFacts has this shape.
 * @internal Exported for tests: the test support types the Pod fields it judges; callers pass a Pod's fields inline.
 */
interface PlacementFields {
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly nodeAffinity: {
    /** Undefined when the Pod has no required node affinity (it then selects every node). */
    readonly required: readonly Term[] | undefined;
    readonly preferred: readonly Preference[];
  };
  readonly tolerations: readonly Toleration[];
}

/**
 * Why one required term (with the nodeSelector) cannot hold on any node.
 * @internal Exported for tests: the tests assert the conflict a contradiction names.
 */
interface TermConflict {
  /** 0-based index of the term in nodeSelectorTerms. */
  readonly term: number;
  /** What cannot hold together, in words: "example.com/pool In [merged] and nodeSelector example.com/pool=legacy". */
  readonly reason: string;
}

/** A Pod whose nodeSelector and every required term cannot hold together on any node: one conflict per term. */
interface Contradiction {
  readonly terms: readonly TermConflict[];
}

/** A requirement as messages write it: "key In [a, b]", "key Exists", "metadata.name In [node-1]". */
function requirementText(requirement: Requirement): string {
  return requirement.values.length === 0 &&
    (requirement.operator === 'Exists' || requirement.operator === 'DoesNotExist')
    ? `${requirement.key} ${requirement.operator}`
    : `${requirement.key} ${requirement.operator} [${requirement.values.join(', ')}]`;
}

// A field requirement parses only as In or NotIn of exactly one value, and a Node's one field is metadata.name (any other
// key reads as ""): component-helpers scheduling/corev1/nodeaffinity/nodeaffinity.go, nodeSelectorRequirementsAsFieldSelector.
function fieldConflict(fields: readonly Requirement[]): string | undefined {
  let name: string | undefined;
  const excluded = new Set<string>();
  for (const field of fields) {
    if ((field.operator !== 'In' && field.operator !== 'NotIn') || field.values.length !== 1)
      return `${requirementText(field)} never matches (matchFields takes In or NotIn of exactly one value)`;
    const value = field.values[0]!;
    if (field.key !== 'metadata.name') {
      if (!fieldMatches(field, ''))
        return `${requirementText(field)} never matches (a Node's only field is metadata.name)`;
    } else if (field.operator === 'NotIn') excluded.add(value);
    else if (name !== undefined && name !== value)
      return `metadata.name In [${name}] and metadata.name In [${value}] select different Nodes`;
    else name = value;
  }
  if (name === '') return 'metadata.name In [] never matches (every Node has a name)';
  if (name !== undefined && excluded.has(name))
    return `metadata.name In [${name}] and metadata.name NotIn [${name}] exclude each other`;
  return undefined;
}

// The common term, found without building the per-key constraints: one requirement per key, none on a nodeSelector key,
// each an In, NotIn, Exists or DoesNotExist that kube-scheduler parses. Such a term holds on some node.
function plainlySatisfiable(term: Term, nodeSelector: Readonly<Record<string, string>>): boolean {
  const keys = new Set<string>();
  for (const requirement of term.expressions) {
    const { key, operator } = requirement;
    if (keys.has(key) || Object.hasOwn(nodeSelector, key)) return false;
    if (operator !== 'In' && operator !== 'NotIn' && operator !== 'Exists' && operator !== 'DoesNotExist') return false;
    if (!requirementParses(requirement)) return false;
    keys.add(key);
  }
  return true;
}

/** What a Placement is made of. */
type PlacementParts = Pick<Placement, 'nodeSelector' | 'required' | 'preferred' | 'tolerations' | 'readsNodeIdentity'>;

/** A Pod's placement constraints, read once and judged against any capacity. Immutable. */
class Placement {
  private contradictionMemo: Contradiction | undefined | null = null;
  private requiredTest: NodeTest | undefined;

  readonly nodeSelector: Readonly<Record<string, string>>;
  /** The required terms, ORed; undefined when the Pod has none. */
  readonly required: readonly Term[] | undefined;
  readonly preferred: readonly Preference[];
  readonly tolerations: readonly Toleration[];
  /** True when a requirement names a Node's own identity (its hostname label or metadata.name). */
  readonly readsNodeIdentity: boolean;

  private constructor(fields: PlacementParts) {
    this.nodeSelector = fields.nodeSelector;
    this.required = fields.required;
    this.preferred = fields.preferred;
    this.tolerations = fields.tolerations;
    this.readsNodeIdentity = fields.readsNodeIdentity;
  }

  /** The placement of a Pod's fields (the engine's PodFacts, or a Pod read through it). */
  static of(fields: PlacementFields): Placement {
    const required = fields.nodeAffinity.required;
    const readsNodeIdentity =
      Object.hasOwn(fields.nodeSelector, HOSTNAME_LABEL) ||
      (required ?? []).some(
        (term) => term.fields.length > 0 || term.expressions.some((requirement) => requirement.key === HOSTNAME_LABEL),
      );
    return new Placement({
      nodeSelector: fields.nodeSelector,
      required,
      preferred: fields.nodeAffinity.preferred,
      tolerations: fields.tolerations,
      readsNodeIdentity,
    });
  }

  /** True when the Node passes the nodeSelector and some required term (NodeAffinity), the terms read once. */
  selects(node: NodeView): boolean {
    for (const key in this.nodeSelector) if (node.labels[key] !== this.nodeSelector[key]) return false;
    this.requiredTest ??= selectorMatcher(this.required);
    return this.requiredTest(node);
  }

  /**
   * Why no node at all can satisfy the nodeSelector together with any required term, or undefined when some node
   * could. Judged on the requirements alone (kube-scheduler ANDs the nodeSelector with the ORed terms): an empty term
   * selects no node, a key whose requirements exclude each other (disjoint In sets, In or Exists with DoesNotExist, an
   * empty integer range, an unknown operator) makes its term impossible, and so do matchFields that cannot parse or
   * cannot both hold.
   */
  contradiction(): Contradiction | undefined {
    if (this.contradictionMemo === null) this.contradictionMemo = this.findContradiction();
    return this.contradictionMemo;
  }

  private findContradiction(): Contradiction | undefined {
    if (this.required === undefined) return undefined;
    const selector = Object.entries(this.nodeSelector);
    const terms: TermConflict[] = [];
    for (const [index, term] of this.required.entries()) {
      const reason = this.termConflict(term, selector);
      if (reason === undefined) return undefined;
      terms.push({ term: index, reason });
    }
    return { terms };
  }

  private termConflict(term: Term, selector: readonly (readonly [string, string])[]): string | undefined {
    if (isEmptyTerm(term)) return 'the term is empty, and an empty term selects no Node';
    const fields = term.fields.length === 0 ? undefined : fieldConflict(term.fields);
    if (fields !== undefined) return fields;
    if (plainlySatisfiable(term, this.nodeSelector)) return undefined;
    // kube-scheduler ANDs the nodeSelector with the term: as requirements, each pair is an In of its one value.
    const fromSelector = new Set(selector.map(([key, value]) => labelRequirement(key, 'In', [value])));
    const key = conflictingKey({ ...term, expressions: [...term.expressions, ...fromSelector] });
    if (key === undefined) return undefined;
    const parts = [...term.expressions, ...fromSelector]
      .filter((requirement) => requirement.key === key)
      .map((requirement) =>
        fromSelector.has(requirement) ? `nodeSelector ${key}=${requirement.values[0]}` : requirementText(requirement),
      );
    return parts.length === 1 ? `${parts[0]} matches no label value` : `${parts.join(' and ')} exclude each other`;
  }
}

export { Placement, requirementText };
export type { PlacementFields, Contradiction, TermConflict };
