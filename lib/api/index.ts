import { applySnapshotBudget, byApplicationOrder, listedInvalidRules, ruleCost } from './budget.ts';
import {
  APPLIED_ANNOTATION,
  AUDITED_ANNOTATION,
  ROLLOUT_ANNOTATION,
  ENFORCEMENT_ANNOTATION,
  DEFAULT_ENFORCEMENT,
  ENFORCEMENTS,
  isEnforcement,
  IF_UNSCHEDULABLE_ANNOTATION,
  IF_UNSCHEDULABLE,
  LIMITS,
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  RESERVED_KEYS,
  RULE_BUDGET,
  SNAPSHOT_BUDGET,
  type Enforcement,
  type IfUnschedulable,
} from './constants.ts';
import type { InvalidRule, NormalizedRule, RuleSnapshot, RuleVerdict } from './types.ts';
import { PodMutationSpecSchema, type PodMutationSpec } from './schema.ts';
import { describeIssues, ruleToResource, ruleWarnings, validatePodMutation } from './validate.ts';
import { validateStructure } from './structure.ts';
import { additionsStrand } from './contradictions.ts';

export {
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  APPLIED_ANNOTATION,
  AUDITED_ANNOTATION,
  ROLLOUT_ANNOTATION,
  ENFORCEMENT_ANNOTATION,
  DEFAULT_ENFORCEMENT,
  ENFORCEMENTS,
  isEnforcement,
  IF_UNSCHEDULABLE_ANNOTATION,
  IF_UNSCHEDULABLE,
  RESERVED_KEYS,
  LIMITS,
  RULE_BUDGET,
  SNAPSHOT_BUDGET,
  validatePodMutation,
  ruleWarnings,
  additionsStrand,
  PodMutationSpecSchema,
  ruleCost,
  applySnapshotBudget,
  listedInvalidRules,
  byApplicationOrder,
  describeIssues,
  ruleToResource,
  validateStructure,
};
export type { Enforcement, IfUnschedulable, PodMutationSpec, NormalizedRule, InvalidRule, RuleVerdict, RuleSnapshot };
