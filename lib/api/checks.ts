/**
 * The hand-written checks of the contract, in one module: what a structural schema cannot say. Each is named by the
 * declaration (lib/api/schema.ts, `x-check` and `x-key-check`) at the node it checks, beside the named rules (`x-cel`)
 * the CRD makes the API server enforce, where it does: label-key syntax of map keys and prefix lengths (it does not:
 * no schema keyword constrains map keys, and the CRD carries no CEL rule for them), reserved keys, operators and their
 * values, the no-sign Gt/Lt rule in required terms, tolerations, "exactly one of", and a selector that selects
 * something; then, on the normalized rule, "must remove or add something" and the rule budget (measured by
 * lib/api/budget.ts). A check that enforces a named rule of lib/api/rules.ts reports that rule's one message, as the CRD's
 * CEL rule does.
 */
import { type IssueSink, type JsonObject } from '../json/index.ts';
import {
  isDns1123Label,
  isDns1123Subdomain,
  isInt64,
  labelValueProblem,
  qualifiedNameProblem,
} from '../syntax/index.ts';
import { budgetIssues, ruleCost } from './budget.ts';
import { PRODUCT_ANNOTATION_PREFIX, RESERVED_KEYS } from './constants.ts';
import { ruleReason } from './rules.ts';
import { SELECTOR_DIMENSIONS, type MutationAdd, type MutationRemove } from './schema.ts';
import type { NormalizedRule } from './types.ts';

type Check = (value: never, path: string, issues: IssueSink) => void;

function labelKeyProblem(key: string, reservedAllowed: boolean): string | undefined {
  const problem = qualifiedNameProblem(key);
  if (problem !== undefined) return `"${key}" is not a valid label key: ${problem}`;
  if (!reservedAllowed && RESERVED_KEYS.has(key)) return ruleReason('reserved-key', JSON.stringify(key));
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
    issues.add(`${path}.values`, ruleReason('in-needs-values'));
    return false;
  }
  if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) {
    issues.add(`${path}.values`, ruleReason('exists-takes-no-values', JSON.stringify(values)));
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
      const value = values[index]!;
      if (labelValueProblem(value) !== undefined)
        issues.add(`${path}.values[${index}]`, ruleReason('in-values-are-label-values', JSON.stringify(value)));
    }
    return;
  }
  if (operator !== 'Gt' && operator !== 'Lt') return;
  if (values.length !== 1) {
    issues.add(`${path}.values`, ruleReason('gt-lt-one-value', JSON.stringify(values)));
    return;
  }
  const [value] = values as [string];
  if (!isInt64(value) || value.length > 63)
    issues.add(`${path}.values[0]`, ruleReason('gt-lt-int64', JSON.stringify(value)));
  if (required && (value.startsWith('-') || value.startsWith('+'))) {
    // The API server validates every value of a required term as a label value: a signed operand would make the Pod fail creation.
    issues.add(`${path}.values[0]`, ruleReason('required-gt-lt-unsigned', JSON.stringify(value)));
  }
}

/** A kind name: a letter, then letters and digits. */
const KIND_NAME = /^[A-Za-z][A-Za-z0-9]*$/;

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
    if (
      affinity.requiredDuringSchedulingIgnoredDuringExecution === undefined &&
      affinity.preferredDuringSchedulingIgnoredDuringExecution === undefined
    )
      issues.add(path, ruleReason('node-affinity-not-empty'));
  },
  toleration: (toleration: JsonObject, path: string, issues: IssueSink) => {
    const { key, operator, value, effect, tolerationSeconds } = toleration;
    // As in Kubernetes, an absent operator means Equal.
    const effective = operator === undefined || operator === '' ? 'Equal' : operator;
    if (effective === 'Exists' && typeof value === 'string' && value !== '')
      issues.add(`${path}.value`, ruleReason('toleration-exists-no-value'));
    if ((key === undefined || key === '') && effective !== 'Exists')
      issues.add(`${path}.operator`, ruleReason('toleration-empty-key-exists'));
    if (tolerationSeconds !== undefined && effect !== 'NoExecute')
      issues.add(`${path}.tolerationSeconds`, ruleReason('toleration-seconds-no-execute'));
  },
  'label-selector': (selector: JsonObject, path: string, issues: IssueSink) => {
    // A label selector left with nothing (its only content misspelt or pruned) would select every Pod.
    if (selector.matchLabels === undefined && selector.matchExpressions === undefined) {
      issues.add(path, ruleReason('label-selector-not-empty'));
    }
  },
  'workload-selector': (selector: JsonObject, path: string, issues: IssueSink) => {
    const setsDimension = SELECTOR_DIMENSIONS.some((dimension) => selector[dimension] !== undefined);
    // all: false counts as absent, as mutationRemove.nodeAffinity.all does.
    if (selector.all === true && setsDimension) {
      const dimensions = SELECTOR_DIMENSIONS.filter((dimension) => selector[dimension] !== undefined);
      issues.add(`${path}.all`, ruleReason('selector-all-alone', dimensions.join(', ')));
    }
    if (selector.all !== true && !setsDimension) {
      issues.add(path, ruleReason('selector-sets-dimension'));
    }
  },
  'placement-mode-fields': (spec: JsonObject, path: string, issues: IssueSink) => {
    if (spec.mode === 'Diversity') return;
    for (const field of ['spotPercent', 'minOnDemand'])
      if (spec[field] !== undefined) issues.add(`${path}.${field}`, ruleReason('diversity-fields'));
  },
  'remove-node-affinity': (removal: JsonObject, path: string, issues: IssueSink) => {
    // all: false counts as absent.
    if ((removal.all === true) === (removal.keys !== undefined)) {
      issues.add(path, ruleReason('remove-node-affinity-one-of'));
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
    if (key.startsWith(PRODUCT_ANNOTATION_PREFIX)) issues.add(path, ruleReason('product-annotation'));
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
  issues.add('spec', ruleReason('removes-or-adds'));
  return false;
}

/** The per-rule budget, on the normalized rule: exactly what a snapshot stores and admission compiles. */
export function checkRuleBudget(rule: NormalizedRule, issues: IssueSink): void {
  for (const { field, reason } of budgetIssues(ruleCost(rule))) issues.add(field, reason);
}
