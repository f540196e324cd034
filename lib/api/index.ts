import { isInt64, labelValueProblem, qualifiedNameProblem } from './syntax.ts';
import {
  APPLIED_ANNOTATION,
  LIMITS,
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  RESERVED_KEYS,
  type InvalidRule,
  type MutationAdd,
  type MutationRemove,
  type NodeAffinityRemoval,
  type NormalizedRule,
  type PodMutation,
  type PodMutationSpec,
  type RuleIssue,
  type RuleSnapshot,
  type RuleVerdict,
  type WorkloadSelector,
} from './types.ts';
import { describeIssues, ruleToResource, validatePodMutation } from './validate.ts';

export {
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  APPLIED_ANNOTATION,
  RESERVED_KEYS,
  LIMITS,
  validatePodMutation,
  describeIssues,
  ruleToResource,
  qualifiedNameProblem,
  labelValueProblem,
  isInt64,
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
};
