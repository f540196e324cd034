/**
 * The hand-written checks of the contract, in one module: what a structural schema cannot say. Each is named by the
 * declaration (lib/api/schema.ts, `x-check` and `x-key-check`) at the node it checks, beside the CEL rule that makes
 * the API server enforce the same, where the CRD does: label-key syntax of map keys and prefix lengths (it does not:
 * no schema keyword constrains map keys, and the CRD carries no CEL rule for them), reserved keys, operators and their
 * values, the no-sign Gt/Lt rule in required terms, tolerations, "exactly one of", and a selector that selects
 * something; then, on the normalized rule, "must remove or add something" and the rule budget (measured by
 * lib/api/budget.ts).
 */
import {
  isDns1123Label,
  isDns1123Subdomain,
  isInt64,
  labelValueProblem,
  qualifiedNameProblem,
  type IssueSink,
  type JsonObject,
} from '../values/index.ts';
import { budgetIssues, ruleCost } from './budget.ts';
import type { MutationAdd, MutationRemove } from './schema.ts';
import { PRODUCT_ANNOTATION_PREFIX, RESERVED_KEYS, type NormalizedRule } from './types.ts';

type Check = (value: never, path: string, issues: IssueSink) => void;

function labelKeyProblem(key: string, reservedAllowed: boolean): string | undefined {
  const problem = qualifiedNameProblem(key);
  if (problem !== undefined) return `"${key}" is not a valid label key: ${problem}`;
  if (!reservedAllowed && RESERVED_KEYS.has(key)) {
    return `"${key}" is reserved for the product's managed capacity placement and cannot be used in rules`;
  }
  return undefined;
}

function report(issues: IssueSink, path: string, problem: string | undefined): void {
  if (problem !== undefined) issues.add(path, problem);
}

/** The strings of a list (the list itself when they all are; the structure check reports any other item). */
function strings(value: unknown): readonly string[] {
  if (!Array.isArray(value)) return [];
  const list: readonly unknown[] = value;
  for (const item of list)
    if (typeof item !== 'string') return list.filter((entry): entry is string => typeof entry === 'string');
  return list as readonly string[];
}

/** The reason a label value is invalid, as the label-value check gives it; undefined for a valid one. */
function labelValueReason(value: string): string | undefined {
  const problem = labelValueProblem(value);
  return problem === undefined ? undefined : `is not a valid label value: ${problem}`;
}

/** In/NotIn need values, Exists/DoesNotExist none (node and label requirements alike); true when the count is right. */
function operatorTakesValues(operator: unknown, values: readonly string[], path: string, issues: IssueSink): boolean {
  if ((operator === 'In' || operator === 'NotIn') && values.length === 0) {
    issues.add(`${path}.values`, `operator ${operator} needs at least one value`);
    return false;
  }
  if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) {
    issues.add(`${path}.values`, `operator ${operator} takes no values`);
    return false;
  }
  return true;
}

function nodeRequirement(requirement: JsonObject, path: string, issues: IssueSink, required: boolean): void {
  const { operator } = requirement;
  const values = strings(requirement.values);
  if (!operatorTakesValues(operator, values, path, issues)) return;
  if (operator === 'In' || operator === 'NotIn') {
    for (let index = 0; index < values.length; index += 1) {
      // The path is built only for an issue: a snapshot's 10,000 rules are validated again on every cold start.
      const reason = labelValueReason(values[index]!);
      if (reason !== undefined) issues.add(`${path}.values[${index}]`, reason);
    }
    return;
  }
  if (operator !== 'Gt' && operator !== 'Lt') return;
  if (values.length !== 1) {
    issues.add(`${path}.values`, `operator ${operator} needs exactly one value`);
    return;
  }
  const [value] = values as [string];
  if (!isInt64(value) || value.length > 63) {
    issues.add(
      `${path}.values[0]`,
      `operator ${operator} needs a 64-bit integer value of at most 63 characters (got ${JSON.stringify(value)})`,
    );
  } else if (required && labelValueProblem(value) !== undefined) {
    // The API server validates every value of a required term as a label value: a signed operand would make the Pod fail creation.
    issues.add(
      `${path}.values[0]`,
      `a required term's ${operator} value must be a label value, so it cannot carry a sign (got ${JSON.stringify(value)})`,
    );
  }
}

/** A kind name: a letter, then letters and digits. */
const KIND_NAME = /^[A-Za-z][A-Za-z0-9]*$/;

/** The workloadSelector fields that restrict which Pods a rule selects. */
const SELECTOR_DIMENSIONS = [
  'namespaces',
  'kinds',
  'names',
  'labelSelector',
  'nodeAffinityMatch',
  'nodeSelectorMatch',
  'tolerationsMatch',
];

/** The named checks of values and objects. */
export const CHECKS = {
  'label-key': (key: string, path: string, issues: IssueSink) => report(issues, path, labelKeyProblem(key, false)),
  'label-key-reserved-allowed': (key: string, path: string, issues: IssueSink) =>
    report(issues, path, labelKeyProblem(key, true)),
  'label-value': (value: string, path: string, issues: IssueSink) => report(issues, path, labelValueReason(value)),
  namespace: (value: string, path: string, issues: IssueSink) => {
    if (!isDns1123Label(value)) issues.add(path, `"${value}" is not a valid namespace name (DNS-1123 label)`);
  },
  kind: (value: string, path: string, issues: IssueSink) => {
    if (value.length > 63 || !KIND_NAME.test(value))
      issues.add(path, `"${value}" is not a valid kind name (a letter, then letters and digits, at most 63)`);
  },
  'workload-name': (value: string, path: string, issues: IssueSink) => {
    if (!isDns1123Subdomain(value)) issues.add(path, `"${value}" is not a valid workload name (DNS-1123 subdomain)`);
  },
  'toleration-key': (key: string, path: string, issues: IssueSink) => {
    const problem = key === '' ? undefined : qualifiedNameProblem(key);
    if (problem !== undefined) issues.add(path, `"${key}" is not a valid label key: ${problem}`);
  },
  'node-requirement-required': (requirement: JsonObject, path: string, issues: IssueSink) =>
    nodeRequirement(requirement, path, issues, true),
  'node-requirement-preferred': (requirement: JsonObject, path: string, issues: IssueSink) =>
    nodeRequirement(requirement, path, issues, false),
  'label-requirement': (requirement: JsonObject, path: string, issues: IssueSink) => {
    operatorTakesValues(requirement.operator, strings(requirement.values), path, issues);
  },
  'node-affinity': (affinity: JsonObject, path: string, issues: IssueSink) => {
    const required = 'requiredDuringSchedulingIgnoredDuringExecution';
    const preferred = 'preferredDuringSchedulingIgnoredDuringExecution';
    if (affinity[required] === undefined && affinity[preferred] === undefined)
      issues.add(path, `must set ${required} or ${preferred}`);
  },
  toleration: (toleration: JsonObject, path: string, issues: IssueSink) => {
    const { key, operator, value, effect, tolerationSeconds } = toleration;
    // As in Kubernetes, an absent operator means Equal.
    const effective = operator === undefined || operator === '' ? 'Equal' : operator;
    if (effective === 'Exists' && typeof value === 'string' && value !== '')
      issues.add(`${path}.value`, 'operator Exists takes no value');
    if ((key === undefined || key === '') && effective !== 'Exists')
      issues.add(`${path}.operator`, 'an empty key requires operator Exists');
    if (tolerationSeconds !== undefined && effect !== 'NoExecute')
      issues.add(`${path}.tolerationSeconds`, 'is only valid with effect NoExecute');
  },
  'label-selector': (selector: JsonObject, path: string, issues: IssueSink) => {
    // A label selector left with nothing (its only content misspelt or pruned) would select every Pod.
    if (selector.matchLabels === undefined && selector.matchExpressions === undefined) {
      issues.add(path, 'must set matchLabels or matchExpressions: an empty label selector would select every Pod');
    }
  },
  'workload-selector': (selector: JsonObject, path: string, issues: IssueSink) => {
    const setsDimension = SELECTOR_DIMENSIONS.some((dimension) => selector[dimension] !== undefined);
    // all: false counts as absent, as mutationRemove.nodeAffinity.all does.
    if (selector.all === true && setsDimension) {
      const dimensions = SELECTOR_DIMENSIONS.filter((dimension) => selector[dimension] !== undefined);
      issues.add(
        `${path}.all`,
        `all: true selects every Pod and takes no other dimension (got ${dimensions.join(', ')})`,
      );
    }
    if (selector.all !== true && !setsDimension) {
      issues.add(
        path,
        'sets no dimension; to select every Pod say all: true (an empty selector, for example one whose only field was misspelt and pruned, selects nothing here)',
      );
    }
  },
  'remove-node-affinity': (removal: JsonObject, path: string, issues: IssueSink) => {
    // all: false counts as absent.
    if ((removal.all === true) === (removal.keys !== undefined)) {
      issues.add(path, 'exactly one of keys (a non-empty list of label keys) or all: true must be set');
    }
  },
} satisfies Record<string, Check>;

/** The named checks of map keys. */
export const KEY_CHECKS = {
  'label-key': (key: string, path: string, issues: IssueSink) => report(issues, path, labelKeyProblem(key, false)),
  'label-key-reserved-allowed': (key: string, path: string, issues: IssueSink) =>
    report(issues, path, labelKeyProblem(key, true)),
  'annotation-key': (key: string, path: string, issues: IssueSink) => {
    const problem = qualifiedNameProblem(key);
    if (problem !== undefined) issues.add(path, `"${key}" is not a valid annotation key: ${problem}`);
    if (key.startsWith(PRODUCT_ANNOTATION_PREFIX))
      issues.add(path, `annotations under ${PRODUCT_ANNOTATION_PREFIX} are managed by the product`);
  },
} satisfies Record<string, (key: string, path: string, issues: IssueSink) => void>;

function removesSomething(remove: MutationRemove): boolean {
  return (
    remove.nodeAffinity !== undefined ||
    (remove.nodeSelector?.keys.length ?? 0) > 0 ||
    (remove.tolerations?.keys.length ?? 0) > 0
  );
}

function addsSomething(add: MutationAdd): boolean {
  return (
    Object.keys(add.annotations ?? {}).length > 0 ||
    Object.keys(add.nodeSelector ?? {}).length > 0 ||
    (add.tolerations?.length ?? 0) > 0 ||
    add.nodeAffinity !== undefined
  );
}

/** "A rule must remove or add something", on the normalized spec; false (with the issue added) when it does neither. */
export function checkRemovesOrAdds(remove: MutationRemove, add: MutationAdd, issues: IssueSink): boolean {
  if (removesSomething(remove) || addsSomething(add)) return true;
  issues.add('spec', 'mutationRemove and mutationAdd are both absent or empty; a rule must remove or add something');
  return false;
}

/** The per-rule budget, on the normalized rule: exactly what a snapshot stores and admission compiles. */
export function checkRuleBudget(rule: NormalizedRule, issues: IssueSink): void {
  for (const { field, reason } of budgetIssues(ruleCost(rule))) issues.add(field, reason);
}
