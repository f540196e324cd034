import { describeMismatch, matchingRules } from './match.ts';
import { podFacts, type PodFacts } from './pod.ts';
import {
  andRequiredAffinity,
  warn,
  type AuditedMatch,
  type Decision,
  type ManagedStep,
  type MutationOutcome,
  type StepResult,
} from './mutate.ts';
import { reviewPod, type MutationOptions } from './review-pod.ts';
import type { MutationContext } from './context.ts';
import { compileRuleSet, compileSnapshotRules, type CompiledRule, type RuleSet } from './compile.ts';
import type { SchedulingState } from './state.ts';
import type { CapacityJudge } from './fit.ts';
import { arrivalFromStamp, STAMP_ANNOTATION, type StampDigest } from './stamp.ts';
import type { Workload } from './workload.ts';
import { asRecreated } from './binding.ts';
import type { OwnerReference, Pod } from './pod-shape.ts';

export {
  compileRuleSet,
  compileSnapshotRules,
  reviewPod,
  andRequiredAffinity,
  warn,
  matchingRules,
  describeMismatch,
  podFacts,
  arrivalFromStamp,
  STAMP_ANNOTATION,
  asRecreated,
};
export type {
  AuditedMatch,
  CapacityJudge,
  CompiledRule,
  RuleSet,
  Decision,
  ManagedStep,
  MutationContext,
  MutationOutcome,
  StepResult,
  MutationOptions,
  PodFacts,
  SchedulingState,
  StampDigest,
  Workload,
  OwnerReference,
  Pod,
};
