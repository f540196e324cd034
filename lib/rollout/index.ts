/**
 * `podmutation rollout`: the report's pending workloads restarted in waves. Pure planning (waves, the
 * action per kind and strategy, disruption-budget matches and a wave's share of them, completion read from status) and
 * an orchestrator over the narrow RolloutTarget of lib/cluster.
 */
import { coveringBudgets, createWaveBudgets, parseLabelSelector, selects } from './budgets.ts';
import { planRollout, type PlannedWorkload, type RolloutPlan } from './plan.ts';
import { planRecords, rfc3339, runRollout } from './run.ts';
import { readPodReadiness, readProgress, readWorkloadShape } from './status.ts';
import type { RolloutRecord, WorkloadRecord } from './types.ts';

export {
  coveringBudgets,
  createWaveBudgets,
  parseLabelSelector,
  selects,
  planRollout,
  planRecords,
  rfc3339,
  runRollout,
  readPodReadiness,
  readProgress,
  readWorkloadShape,
};
export type { PlannedWorkload, RolloutPlan, RolloutRecord, WorkloadRecord };
