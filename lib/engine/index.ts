import { describeMismatch, matchingRules, matchRule, type MatchDimension } from './match.ts';
import { podFacts, type PodFacts } from './pod.ts';
import {
  andRequiredAffinity,
  mutatePod,
  type AuditedMatch,
  type Decision,
  type ManagedStep,
  type MutationContext,
  type MutationOptions,
  type MutationOutcome,
  type RuleEvaluation,
  type StepOwner,
  type StepResult,
} from './mutate.ts';
import {
  compileRuleSet,
  compileSnapshotRules,
  type AffinitySelector,
  type CompiledRule,
  type RuleSet,
} from './compile.ts';
import type { SchedulingState } from './state.ts';
import { MAX_ANNOTATION_BYTES, STAMP_ANNOTATION, type StampDigest, type StampVerdict } from './stamp.ts';
import type { Workload, WorkloadEvidence } from './workload.ts';
import type { Affinity, OwnerReference, ObjectMeta, PodSpec, Pod } from './kubernetes.ts';

export {
  compileRuleSet,
  compileSnapshotRules,
  mutatePod,
  andRequiredAffinity,
  matchRule,
  matchingRules,
  describeMismatch,
  podFacts,
  STAMP_ANNOTATION,
  MAX_ANNOTATION_BYTES,
};
export type {
  AffinitySelector,
  AuditedMatch,
  CompiledRule,
  RuleSet,
  Decision,
  ManagedStep,
  MutationContext,
  MutationOutcome,
  RuleEvaluation,
  StepResult,
  StepOwner,
  MatchDimension,
  MutationOptions,
  PodFacts,
  SchedulingState,
  StampDigest,
  StampVerdict,
  Workload,
  WorkloadEvidence,
  Affinity,
  OwnerReference,
  ObjectMeta,
  PodSpec,
  Pod,
};
