import { labelValueProblem, qualifiedNameProblem } from '../syntax/index.ts';
import type { Requirement, Term } from './requirements.ts';

/** A node as the scheduler sees it for node affinity: its name (matchFields) and its labels. */
export interface NodeView {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

const INTEGER = /^[+-]?\d+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

// The scheduler parses Gt/Lt operands and label values with strconv.ParseInt(s, 10, 64); anything else never matches.
function parseInt64(value: string | undefined): bigint | undefined {
  if (value === undefined || !INTEGER.test(value)) return undefined;
  const parsed = BigInt(value);
  return parsed < INT64_MIN || parsed > INT64_MAX ? undefined : parsed;
}

const parsed = new WeakMap<Requirement, boolean>();

/**
 * True when kube-scheduler can parse the label requirement (k8s.io/apimachinery pkg/labels/selector.go,
 * NewRequirement): the key a label key; values for In and NotIn, none for Exists and DoesNotExist, one int64 for Gt
 * and Lt; every value a label value. A term with a requirement it cannot parse selects no node
 * (k8s.io/component-helpers scheduling/corev1/nodeaffinity/nodeaffinity.go). The API server refuses such a Pod; a Pod
 * read from a file may still hold one.
 */
function requirementParses(requirement: Requirement): boolean {
  let parses = parsed.get(requirement);
  if (parses === undefined) {
    parses = parse(requirement);
    parsed.set(requirement, parses);
  }
  return parses;
}

function parse({ key, operator, values }: Requirement): boolean {
  if (qualifiedNameProblem(key) !== undefined) return false;
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) return false;
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) return false;
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1 || parseInt64(values[0]) === undefined) return false;
      break;
    default:
      return false;
  }
  return values.every((value) => labelValueProblem(value) === undefined);
}

/** Kubernetes semantics of one label requirement on a node's value of its key (undefined when the node lacks it). */
function expressionMatches(requirement: Requirement, value: string | undefined): boolean {
  return requirementParses(requirement) && requirementMatches(requirement, value);
}

/**
 * Kubernetes semantics of one matchFields requirement on a node: In or NotIn of exactly one value, else it cannot
 * parse; a node's only field is metadata.name, any other key reads as "" (nodeSelectorRequirementsAsFieldSelector).
 */
function fieldMatches(requirement: Requirement, nodeName: string): boolean {
  if ((requirement.operator !== 'In' && requirement.operator !== 'NotIn') || requirement.values.length !== 1)
    return false;
  const value = requirement.key === 'metadata.name' ? nodeName : '';
  return (requirement.values[0] === value) === (requirement.operator === 'In');
}

function requirementMatches(requirement: Requirement, value: string | undefined): boolean {
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && requirement.values.includes(value);
    case 'NotIn':
      return value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const label = parseInt64(value);
      const bound = requirement.values.length === 1 ? parseInt64(requirement.values[0]) : undefined;
      if (label === undefined || bound === undefined) return false;
      return requirement.operator === 'Gt' ? label > bound : label < bound;
    }
    default:
      return false;
  }
}

/**
 * Kubernetes semantics of one term on one node: all requirements ANDed; an empty term selects no node.
 * @internal Exported for tests: the reference semantics the algebra's property tests compare against.
 */
function termMatchesNode(candidate: Term, node: NodeView): boolean {
  if (candidate.ids.size === 0) return false;
  return (
    candidate.expressions.every((requirement) => expressionMatches(requirement, node.labels[requirement.key])) &&
    candidate.fields.every((requirement) => fieldMatches(requirement, node.name))
  );
}

/** A test of one node, such as a required selector compiled by selectorMatcher. */
export type NodeTest = (node: NodeView) => boolean;

// One requirement as a test of a node, its operands read once.
function requirementTest(requirement: Requirement, field: boolean): NodeTest {
  if (field) return (node) => fieldMatches(requirement, node.name);
  if (!requirementParses(requirement)) return () => false;
  const { key, operator } = requirement;
  switch (operator) {
    case 'In':
    case 'NotIn': {
      const values = new Set(requirement.values);
      return operator === 'In'
        ? (node) => node.labels[key] !== undefined && values.has(node.labels[key])
        : (node) => node.labels[key] === undefined || !values.has(node.labels[key]);
    }
    case 'Exists':
      return (node) => node.labels[key] !== undefined;
    case 'DoesNotExist':
      return (node) => node.labels[key] === undefined;
    default:
      return (node) => requirementMatches(requirement, node.labels[key]);
  }
}

/**
 * selectorMatchesNode as a test to run on many nodes: each requirement parsed and its values put in a set once, so
 * judging a Pod against 50 Node shapes reads its terms once rather than 50 times.
 */
function selectorMatcher(terms: readonly Term[] | undefined): NodeTest {
  if (terms === undefined) return () => true;
  const tests = terms
    .filter((candidate) => candidate.ids.size > 0)
    .map((candidate) => [
      ...candidate.expressions.map((requirement) => requirementTest(requirement, false)),
      ...candidate.fields.map((requirement) => requirementTest(requirement, true)),
    ]);
  return (node) => tests.some((term) => term.every((test) => test(node)));
}

/**
 * Kubernetes semantics of a required selector: undefined selects every node, otherwise terms are ORed.
 * @internal Exported for tests: the reference semantics the algebra's property tests compare against.
 */
function selectorMatchesNode(terms: readonly Term[] | undefined, node: NodeView): boolean {
  return terms === undefined || terms.some((candidate) => termMatchesNode(candidate, node));
}

interface KeyConstraint {
  mustExist: boolean;
  mustNotExist: boolean;
  allowed: Set<string> | undefined;
  excluded: Set<string>;
  above: bigint | undefined;
  below: bigint | undefined;
  unparsable: boolean;
}

/**
 * True when some node could satisfy every label requirement of the term (field requirements are
 * assumed satisfiable). Detects disjoint In sets, In against DoesNotExist, Exists against
 * DoesNotExist, In values all excluded by NotIn or outside Gt/Lt, and empty integer ranges.
 */
function termCanMatchSomeNode(candidate: Term): boolean {
  return candidate.ids.size > 0 && conflictingKey(candidate) === undefined;
}

/**
 * The first label key (in the term's order) whose requirements in the term cannot hold together on any node, as
 * termCanMatchSomeNode decides it, or undefined when every key's can; field requirements are not read.
 */
function conflictingKey(candidate: Term): string | undefined {
  const constraints = new Map<string, KeyConstraint>();
  for (const requirement of candidate.expressions) {
    let constraint = constraints.get(requirement.key);
    if (constraint === undefined) {
      constraint = {
        mustExist: false,
        mustNotExist: false,
        allowed: undefined,
        excluded: new Set(),
        above: undefined,
        below: undefined,
        unparsable: false,
      };
      constraints.set(requirement.key, constraint);
    }
    narrow(constraint, requirement);
  }
  for (const [key, constraint] of constraints) if (!satisfiable(constraint)) return key;
  return undefined;
}

function narrow(constraint: KeyConstraint, requirement: Requirement): void {
  if (!requirementParses(requirement)) {
    constraint.unparsable = true;
    return;
  }
  switch (requirement.operator) {
    case 'In': {
      constraint.mustExist = true;
      const values = new Set(requirement.values);
      constraint.allowed =
        constraint.allowed === undefined
          ? values
          : new Set([...constraint.allowed].filter((value) => values.has(value)));
      break;
    }
    case 'NotIn':
      for (const value of requirement.values) constraint.excluded.add(value);
      break;
    case 'Exists':
      constraint.mustExist = true;
      break;
    case 'DoesNotExist':
      constraint.mustNotExist = true;
      break;
    case 'Gt':
    case 'Lt': {
      constraint.mustExist = true;
      const bound = requirement.values.length === 1 ? parseInt64(requirement.values[0]) : undefined;
      if (bound === undefined) constraint.unparsable = true;
      else if (requirement.operator === 'Gt')
        constraint.above = constraint.above === undefined || bound > constraint.above ? bound : constraint.above;
      else constraint.below = constraint.below === undefined || bound < constraint.below ? bound : constraint.below;
      break;
    }
    default:
      constraint.unparsable = true;
  }
}

function withinRange(constraint: KeyConstraint, value: string): boolean {
  if (constraint.above === undefined && constraint.below === undefined) return true;
  const parsed = parseInt64(value);
  if (parsed === undefined) return false;
  return (
    (constraint.above === undefined || parsed > constraint.above) &&
    (constraint.below === undefined || parsed < constraint.below)
  );
}

function satisfiable(constraint: KeyConstraint): boolean {
  if (constraint.unparsable) return false;
  if (constraint.mustExist && constraint.mustNotExist) return false;
  if (constraint.allowed !== undefined) {
    return [...constraint.allowed].some((value) => !constraint.excluded.has(value) && withinRange(constraint, value));
  }
  const low = constraint.above ?? INT64_MIN - 1n;
  const high = constraint.below ?? INT64_MAX + 1n;
  // A label value such as "007" or "+7" also parses as 7, so NotIn can never exclude a whole non-empty range.
  return constraint.above === undefined && constraint.below === undefined ? true : high - low > 1n;
}

export {
  requirementParses,
  expressionMatches,
  fieldMatches,
  termMatchesNode,
  selectorMatchesNode,
  selectorMatcher,
  termCanMatchSomeNode,
  conflictingKey,
};
