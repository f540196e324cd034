/**
 * `podmutation rollout`: the report's pending workloads restarted in waves. Pure planning (waves, the
 * action per kind and strategy, disruption-budget matches, completion read from status) and an orchestrator over the
 * narrow RolloutTarget of lib/cluster.
 */
import { blockingBudgets, parseLabelSelector, selects, type Selector } from './budgets.ts';
import { planRollout, type LeftAlone, type PlannedWorkload, type RolloutPlan } from './plan.ts';
import {
  planRecords,
  rfc3339,
  runRollout,
  RESTARTED_AT_ANNOTATION,
  type RolloutOutcome,
  type RolloutRunOptions,
} from './run.ts';
import { readPodReadiness, readProgress, readWorkloadShape, type Progress, type WorkloadShape } from './status.ts';
import type { RolloutMethod, RolloutRecord, RolloutState, VerdictRecord, WorkloadRecord } from './types.ts';

export {
  blockingBudgets,
  parseLabelSelector,
  selects,
  planRollout,
  planRecords,
  rfc3339,
  runRollout,
  readPodReadiness,
  readProgress,
  readWorkloadShape,
  RESTARTED_AT_ANNOTATION,
};
export type {
  Selector,
  LeftAlone,
  PlannedWorkload,
  RolloutPlan,
  RolloutOutcome,
  RolloutRunOptions,
  Progress,
  WorkloadShape,
  RolloutMethod,
  RolloutRecord,
  RolloutState,
  VerdictRecord,
  WorkloadRecord,
};
