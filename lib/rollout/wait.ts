/** What a run's steps share: its options and clock, how a step is recorded, and the waits on a deadline and on budgets. */
import type { RolloutTarget } from '../cluster/index.ts';
import { coveringBudgets, type Allowance, type Shortfall } from './budgets.ts';
import type { PlannedWorkload } from './plan.ts';
import type { RolloutState } from './types.ts';

/** How a run proceeds; the clock and sleep are injectable for tests. */
interface RolloutRunOptions {
  /** The run's id, stamped on each restarted workload. */
  readonly id: string;
  /** How long one workload may take, from its disruption-budget wait to its completion. */
  readonly timeoutMs: number;
  /** Pause between waves. */
  readonly pauseMs: number;
  /** Start the next wave even after a failure. */
  readonly continueOnFailure: boolean;
  /** Interval between status reads; default 1000 ms. */
  readonly pollMs?: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** One run's options with their defaults, and how it records a step. */
interface Run {
  readonly target: RolloutTarget;
  readonly options: RolloutRunOptions;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly pollMs: number;
  readonly record: (wave: number, workload: PlannedWorkload, state: RolloutState, reason?: string) => void;
}

/** How a workload ended: done, failed, or skipped (a budget that allowed no disruption, or a hold found on the way). */
type Result = 'done' | 'failed' | 'skipped';

/** A duration as the flags write it: `5m`, `90s`. */
function describeDuration(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`;
}

/** The first value `read` gives, polled until the deadline; undefined when the deadline passed without one. */
async function untilDeadline<T>(
  run: Run,
  deadline: number,
  read: () => Promise<T | undefined>,
): Promise<T | undefined> {
  for (;;) {
    const value = await read();
    if (value !== undefined || run.now() >= deadline) return value;
    await run.sleep(Math.min(run.pollMs, Math.max(0, deadline - run.now())));
  }
}

/** The Pods a budget may cover: a namespace's Pods with these labels. */
interface CoveredPods {
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** One workload's turn in a run: the workload, its wave (1-based) and the deadline of its wait. */
interface Turn {
  readonly workload: PlannedWorkload;
  readonly wave: number;
  readonly deadline: number;
}

/**
 * Reads the namespace's budgets that cover Pods with `labels` until `admit` finds none short (it runs right after
 * each read, with no wait in between, so that what it takes is taken on that reading), or the deadline passes; the
 * budgets still short then, empty once admitted.
 */
async function untilBudgetsAllow(
  run: Run,
  { namespace, labels }: CoveredPods,
  deadline: number,
  admit: (allowances: readonly Allowance[]) => Shortfall[],
): Promise<Shortfall[]> {
  let short: Shortfall[] = [];
  await untilDeadline(run, deadline, async () => {
    const budgets = await run.target.listPodDisruptionBudgets(namespace);
    short = admit(coveringBudgets(budgets, labels, `poddisruptionbudgets in ${namespace}`));
    return short.length === 0 ? true : undefined;
  });
  return short;
}

/** Why a workload was skipped: the budgets that allowed no (further) disruption for the whole wait. */
function describeShortfall(namespace: string, short: readonly Shortfall[], waitedMs: number): string {
  const waited = describeDuration(waitedMs);
  if (short.every(({ taken }) => taken === 0))
    return `PodDisruptionBudget ${short.map(({ name }) => `${namespace}/${name}`).join(', ')} allowed 0 disruptions for ${waited}`;
  const each = short.map(
    ({ name, allowed, taken }) =>
      `${namespace}/${name} allowed ${allowed} disruption${allowed === 1 ? '' : 's'}, ${taken} taken by this wave's workloads under way`,
  );
  return `PodDisruptionBudget ${each.join('; ')}, for ${waited}`;
}

export { describeDuration, describeShortfall, untilBudgetsAllow, untilDeadline };
export type { Result, Run, RolloutRunOptions, Turn };
