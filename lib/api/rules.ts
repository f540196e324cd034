/**
 * The named rules of the contract that both enforcement points apply: each has its one message here. The schema
 * (lib/api/schema.ts) names the rules of each node (`x-cel`, `x-forbidden`); the CRD generator (lib/api/crd.ts)
 * attaches each as a CEL rule with this message (its expression in lib/api/crd-rules.ts), and the validator's checks
 * (lib/api/checks.ts, lib/api/budget.ts) report the same message, followed by what they got where it helps
 * (`ruleReason`). test/infra/crd-rules.test.ts fails when the two differ.
 */
import { PRODUCT_ANNOTATION_PREFIX, RESERVED_KEYS, RULE_BUDGET } from './constants.ts';

const RESERVED_NAMES = [...RESERVED_KEYS].join(', ');
const VALUE_SYNTAX = "empty, or at most 63 alphanumerics, '-', '_' or '.' that starts and ends with an alphanumeric";
const REQUIRED_FIELD = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED_FIELD = 'preferredDuringSchedulingIgnoredDuringExecution';
// One reason at each kind of node the CRD checks reserved keys at: a node requirement, a map of node labels, one key.
const RESERVED_KEY = `a key reserved for the product's managed capacity placement (${RESERVED_NAMES}) cannot be used in rules; to send Pods to Spot or on-demand capacity, declare a PodPlacement (docs/placement.md)`;

/** The message of each named rule. */
export const RULES = {
  'reserved-requirement-key': RESERVED_KEY,
  'reserved-map-key': RESERVED_KEY,
  'reserved-key': RESERVED_KEY,
  'in-needs-values': 'operators In and NotIn need at least one value',
  'in-values-are-label-values': `values of In and NotIn must each be a label value: ${VALUE_SYNTAX}`,
  'exists-takes-no-values': 'operators Exists and DoesNotExist take no values',
  'gt-lt-one-value': 'operators Gt and Lt need exactly one value',
  'gt-lt-int64':
    'the value of Gt and Lt must be a 64-bit integer: an optional sign and decimal digits, from -9223372036854775808 to 9223372036854775807',
  'required-gt-lt-unsigned':
    "the value of Gt and Lt in a required term must be unsigned decimal digits: the API server validates every value of a Pod's required node affinity as a label value, so a sign would make every matching Pod fail creation (preferred terms accept a sign)",
  'no-match-fields': 'matchFields is not supported in rules; use matchExpressions on node labels',
  'node-affinity-not-empty': `set ${REQUIRED_FIELD}, ${PREFERRED_FIELD}, or both`,
  'toleration-empty-key-exists': 'a toleration with an empty key must use operator Exists',
  'toleration-exists-no-value': 'a toleration with operator Exists takes no value',
  'toleration-seconds-no-execute': 'tolerationSeconds is only valid with effect NoExecute',
  'label-selector-not-empty': 'set matchLabels or matchExpressions: an empty label selector would select every Pod',
  'selector-sets-dimension':
    'sets no dimension: to select every Pod say all: true (an empty selector, for example one whose only field was misspelt and pruned, is invalid)',
  'selector-all-alone': 'all: true selects every Pod and takes no other dimension',
  'remove-node-affinity-one-of':
    'set exactly one of keys (a non-empty list of label keys) or all: true; all: false counts as absent',
  'product-annotation': `annotations under ${PRODUCT_ANNOTATION_PREFIX} are managed by the product and cannot be set by rules`,
  'removes-or-adds': 'mutationRemove and mutationAdd are both absent or empty; a rule must remove or add something',
  'budget-requirements': `the rule holds more than ${RULE_BUDGET.maxRequirements} requirements (node affinity and label selector), above the per-rule budget`,
  'budget-values': `the rule holds more than ${RULE_BUDGET.maxValues} requirement values, above the per-rule budget`,
  'diversity-fields': 'spotPercent and minOnDemand are only used with mode Diversity',
} as const;

/** The name of a rule of RULES. */
export type RuleName = keyof typeof RULES;

/** The validator's reason for a broken rule: its message, then what was got when that helps to find it. */
export function ruleReason(name: RuleName, got?: string): string {
  return got === undefined ? RULES[name] : `${RULES[name]} (got ${got})`;
}
