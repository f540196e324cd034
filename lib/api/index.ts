import { applySnapshotBudget, budgetIssues, byApplicationOrder, ruleCost, type RuleCost } from './budget.ts';
import {
  APPLIED_ANNOTATION,
  LIMITS,
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  RESERVED_KEYS,
  RULE_BUDGET,
  SNAPSHOT_BUDGET,
  type InvalidRule,
  type NormalizedRule,
  type PodMutation,
  type RuleIssue,
  type RuleSnapshot,
  type RuleVerdict,
} from './types.ts';
import { PodMutationSpecSchema, PodMutationStatusSchema, type MutationAdd, type MutationRemove, type NodeAffinityRemoval, type PodMutationSpec, type PodMutationStatusShape, type WorkloadSelector } from './schema.ts';
import { describeIssues, ruleToResource, validatePodMutation } from './validate.ts';

export {
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  APPLIED_ANNOTATION,
  RESERVED_KEYS,
  LIMITS,
  RULE_BUDGET,
  SNAPSHOT_BUDGET,
  validatePodMutation,
  PodMutationSpecSchema,
  PodMutationStatusSchema,
  ruleCost,
  budgetIssues,
  applySnapshotBudget,
  byApplicationOrder,
  describeIssues,
  ruleToResource,
};
export type {
  WorkloadSelector,
  NodeAffinityRemoval,
  MutationRemove,
  MutationAdd,
  PodMutationSpec,
  PodMutation,
  NormalizedRule,
  RuleIssue,
  InvalidRule,
  RuleVerdict,
  RuleSnapshot,
  RuleCost,
  PodMutationStatusShape,
};
