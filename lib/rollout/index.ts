/**
 * `podmutation rollout`: the report's pending workloads restarted in waves. Pure planning (waves, the
 * action per kind and strategy, disruption-budget matches and a wave's share of them, completion read from status) and
 * an orchestrator over the narrow RolloutTarget of lib/cluster.
 */
import { parseLabelSelector, selects } from './budgets.ts';
import { planRollout, type RolloutPlan } from './plan.ts';
import { planRecords, rfc3339, runRollout } from './run.ts';

import type { RolloutRecord } from './types.ts';

export { parseLabelSelector, selects, planRollout, planRecords, rfc3339, runRollout };
export type { RolloutPlan, RolloutRecord };
