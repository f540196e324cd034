/**
 * `podmutation rollout`: the report's pending workloads restarted in waves. Pure planning (waves, the
 * action per kind and strategy, disruption-budget matches, completion read from status) and an orchestrator over the
 * narrow RolloutTarget of lib/cluster.
 */
import { blockingBudgets, parseLabelSelector, selects } from './budgets.ts';
import { planRollout, type PlannedWorkload, type RolloutPlan } from './plan.ts';
import { planRecords, rfc3339, runRollout } from './run.ts';
import { readPodReadiness, readProgress, readWorkloadShape } from './status.ts';
import type { RolloutRecord, WorkloadRecord } from './types.ts';

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
};
export type { PlannedWorkload, RolloutPlan, RolloutRecord, WorkloadRecord };
