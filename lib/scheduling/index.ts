import {
  isEmptyTerm,
  labelRequirement,
  preference,
  preferenceFromKubernetes,
  preferenceToKubernetes,
  requirementCount,
  term,
  termFromKubernetes,
  termToKubernetes,
  type Preference,
  type Requirement,
  type Term,
} from './requirements.ts';
import {
  andTerms,
  appendPreferences,
  canonicalizeTerms,
  dropEmptyTerms,
  preferredMatches,
  productSize,
  requiredMatches,
  withoutKeys,
} from './selectors.ts';
import {
  conflictingKey,
  expressionMatches,
  fieldMatches,
  requirementParses,
  selectorMatcher,
  termCanMatchSomeNode,
  type NodeTest,
  type NodeView,
} from './semantics.ts';
import { diffScheduling, tolerationIdentity, type SchedulingFields } from './diff.ts';
import { sameScheduling, schedulingFieldsOf } from './fields.ts';
import { schedulingDiffLines, type DiffSign } from './diff-lines.ts';
import { schedulingDiffSummary } from './diff-summary.ts';
import { missingRequirementsText } from './diff-text.ts';
import { DEFAULT_TOLERATION_KEYS, DEFAULT_TOLERATION_SECONDS } from './core-shapes.ts';
import type {
  NodeSelectorTerm,
  PreferredSchedulingTerm,
  NodeAffinity,
  Toleration,
  LabelSelectorRequirement,
  LabelSelector,
} from './core-shapes.ts';

export {
  labelRequirement,
  term,
  isEmptyTerm,
  preference,
  termFromKubernetes,
  preferenceFromKubernetes,
  termToKubernetes,
  preferenceToKubernetes,
  requirementCount,
  canonicalizeTerms,
  productSize,
  andTerms,
  withoutKeys,
  requiredMatches,
  preferredMatches,
  missingRequirementsText,
  appendPreferences,
  dropEmptyTerms,
  termCanMatchSomeNode,
  conflictingKey,
  expressionMatches,
  fieldMatches,
  requirementParses,
  selectorMatcher,
  diffScheduling,
  tolerationIdentity,
  schedulingFieldsOf,
  sameScheduling,
  schedulingDiffLines,
  schedulingDiffSummary,
  DEFAULT_TOLERATION_KEYS,
  DEFAULT_TOLERATION_SECONDS,
};
export type {
  Term,
  Requirement,
  Preference,
  NodeView,
  NodeTest,
  NodeSelectorTerm,
  PreferredSchedulingTerm,
  NodeAffinity,
  Toleration,
  LabelSelectorRequirement,
  LabelSelector,
  SchedulingFields,
  DiffSign,
};
