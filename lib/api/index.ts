export {
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  APPLIED_ANNOTATION,
  RESERVED_KEYS,
  LIMITS,
} from './types.ts';
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
} from './types.ts';
export { validatePodMutation, describeIssues } from './validate.ts';
export { qualifiedNameProblem, labelValueProblem, isInt64 } from './syntax.ts';
