/**
 * The CEL expression of each named rule of lib/api/rules.ts, as the CRD carries it. Build-time only, beside the CRD
 * generator (lib/api/crd.ts): the functions validate with lib/api/checks.ts and never carry this text.
 */
import { PRODUCT_ANNOTATION_PREFIX, RESERVED_KEYS, RULE_BUDGET } from './constants.ts';
import type { RuleName } from './rules.ts';
import { SELECTOR_DIMENSIONS } from './schema.ts';

const RESERVED_CEL_LIST = `[${[...RESERVED_KEYS].map((key) => `'${key}'`).join(', ')}]`;
const REQUIRED_FIELD = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED_FIELD = 'preferredDuringSchedulingIgnoredDuringExecution';
const ANY_DIMENSION = SELECTOR_DIMENSIONS.map((dimension) => `has(self.${dimension})`).join(' || ');

/** CEL of one budget count over the rule's node affinities and label selector requirements. */
function budgetRule(per: (list: string) => string): string {
  const ofAffinity = (affinity: string) =>
    `(has(${affinity}.${REQUIRED_FIELD}) ? ${affinity}.${REQUIRED_FIELD}.nodeSelectorTerms.map(t, ${per('t.matchExpressions')}).sum() : 0) + ` +
    `(has(${affinity}.${PREFERRED_FIELD}) ? ${affinity}.${PREFERRED_FIELD}.map(p, ${per('p.preference.matchExpressions')}).sum() : 0)`;
  return [
    `(has(self.workloadSelector) && has(self.workloadSelector.nodeAffinityMatch) ? ${ofAffinity('self.workloadSelector.nodeAffinityMatch')} : 0)`,
    `(has(self.workloadSelector) && has(self.workloadSelector.labelSelector) && has(self.workloadSelector.labelSelector.matchExpressions) ? ${per('self.workloadSelector.labelSelector.matchExpressions')} : 0)`,
    `(has(self.mutationAdd) && has(self.mutationAdd.nodeAffinity) ? ${ofAffinity('self.mutationAdd.nodeAffinity')} : 0)`,
  ].join(' + ');
}

const REMOVES_OR_ADDS =
  '(has(self.mutationRemove) && (has(self.mutationRemove.nodeAffinity) || has(self.mutationRemove.nodeSelector) || has(self.mutationRemove.tolerations))) || ' +
  '(has(self.mutationAdd) && ((has(self.mutationAdd.annotations) && size(self.mutationAdd.annotations) > 0) || (has(self.mutationAdd.nodeSelector) && size(self.mutationAdd.nodeSelector) > 0) || (has(self.mutationAdd.tolerations) && size(self.mutationAdd.tolerations) > 0) || has(self.mutationAdd.nodeAffinity)))';

/** The CEL expression of each named rule, with self bound to the node that names it. */
export const CEL_RULES: Readonly<Record<RuleName, string>> = {
  'reserved-requirement-key': `!(self.key in ${RESERVED_CEL_LIST})`,
  'reserved-map-key': `!${RESERVED_CEL_LIST}.exists(k, k in self)`,
  'reserved-key': `!(self in ${RESERVED_CEL_LIST})`,
  'in-needs-values': "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
  'in-values-are-label-values':
    "!(self.operator in ['In', 'NotIn']) || !has(self.values) || self.values.all(v, !v.startsWith('-') && !v.startsWith('+'))",
  'exists-takes-no-values':
    "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
  'gt-lt-one-value': "!(self.operator in ['Gt', 'Lt']) || (has(self.values) && size(self.values) == 1)",
  'gt-lt-int64':
    "!(self.operator in ['Gt', 'Lt']) || !has(self.values) || size(self.values) != 1 || (self.values[0].matches('^[+-]?[0-9]+$') && (!self.values[0].matches('^[+-]?0*[1-9][0-9]{18}') || (self.values[0].matches('^[+-]?0*[1-9][0-9]{18}$') && self.values[0].substring(size(self.values[0]) - 19) <= (self.values[0].startsWith('-') ? '9223372036854775808' : '9223372036854775807'))))",
  'required-gt-lt-unsigned':
    "!(self.operator in ['Gt', 'Lt']) || !has(self.values) || size(self.values) != 1 || !(self.values[0].startsWith('-') || self.values[0].startsWith('+'))",
  'no-match-fields': '!has(self.matchFields)',
  'node-affinity-not-empty': `has(self.${REQUIRED_FIELD}) || has(self.${PREFERRED_FIELD})`,
  'toleration-empty-key-exists':
    "(has(self.key) && self.key != '') || (has(self.operator) && self.operator == 'Exists')",
  'toleration-exists-no-value':
    "!(has(self.operator) && self.operator == 'Exists') || !has(self.value) || self.value == ''",
  'toleration-seconds-no-execute': "!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",
  'label-selector-not-empty': 'has(self.matchLabels) || has(self.matchExpressions)',
  'selector-sets-dimension': `(has(self.all) && self.all) || ${ANY_DIMENSION}`,
  'selector-all-alone': `!(has(self.all) && self.all) || !(${ANY_DIMENSION})`,
  'remove-node-affinity-one-of': 'has(self.keys) != (has(self.all) && self.all)',
  'product-annotation': `self.all(k, !k.startsWith('${PRODUCT_ANNOTATION_PREFIX}'))`,
  'removes-or-adds': REMOVES_OR_ADDS,
  'budget-requirements': `${budgetRule((list) => `size(${list})`)} <= ${RULE_BUDGET.maxRequirements}`,
  'diversity-fields': "self.mode == 'Diversity' || (!has(self.spotPercent) && !has(self.minOnDemand))",
  'budget-values': `${budgetRule((list) => `${list}.map(e, has(e.values) ? size(e.values) : 0).sum()`)} <= ${RULE_BUDGET.maxValues}`,
};
