import { describeMismatch, matchRule, tolerationPresent, type MatchDimension } from './match.ts';
import { podFacts, type PodFacts } from './pod.ts';
import {
  andRequiredAffinity,
  applyRule,
  mutatePod,
  warn,
  type Decision,
  type ManagedStep,
  type MutationContext,
  type MutationOptions,
  type MutationOutcome,
  type RuleEvaluation,
  type StepOwner,
  type StepResult,
} from './mutate.ts';
import { compileRuleSet, compileSnapshotRules, type AffinitySelector, type CompiledRule, type RuleSet } from './compile.ts';
import { currentNodeAffinity, INITIAL_STATE, podWithState, type SchedulingState } from './state.ts';
import { resolveWorkload, type Workload, type WorkloadEvidence } from './workload.ts';
import type { Affinity, OwnerReference, ObjectMeta, PodSpec, Pod } from './kubernetes.ts';

export {
  compileRuleSet,
  compileSnapshotRules,
  mutatePod,
  applyRule,
  andRequiredAffinity,
  warn,
  matchRule,
  describeMismatch,
  podFacts,
  resolveWorkload,
  currentNodeAffinity,
  podWithState,
  INITIAL_STATE,
  tolerationPresent,
};
export type {
  AffinitySelector,
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
  Workload,
  WorkloadEvidence,
  Affinity,
  OwnerReference,
  ObjectMeta,
  PodSpec,
  Pod,
};
