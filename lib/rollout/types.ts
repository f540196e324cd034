/** The record `podmutation rollout` prints per step (`-o json`, a JSON object a line); see docs/operations.md. */

/**
 * What happened to one workload: listed (plan), left alone (current, by-hand, denied, held, unschedulable), or its restart's
 * progress; `pod-skipped` names a Pod of it not deleted because it is not the one the report read.
 */
type RolloutState =
  | 'planned'
  | 'current'
  | 'by-hand'
  | 'denied'
  | 'held'
  | 'unschedulable'
  | 'started'
  | 'pod-skipped'
  | 'done'
  | 'failed'
  | 'skipped'
  | 'not-started';

/** How a planned workload is rolled out: its controller asked to restart, or its pending Pods evicted one at a time. */
type RolloutMethod = 'restart' | 'evict-pods';

/** One workload's step. */
interface WorkloadRecord {
  readonly type: 'workload';
  /** The run's id, also in the annotation stamped on each restarted workload. */
  readonly rollout: string;
  /** RFC 3339 time of the step. */
  readonly at: string;
  /** 1-based wave; 0 for a workload in no wave (current, by hand, denied). */
  readonly wave: number;
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly state: RolloutState;
  /**
   * The report's change for planned and left-alone workloads (a held one's: why it is held; an unschedulable one's:
   * where its recreated Pods would fit, nowhere, and why); why for failed, skipped, held, pod-skipped and not-started
   * ones; "" otherwise.
   */
  readonly reason: string;
}

/** The last record: the report read again after the last wave, and the exit code. */
interface VerdictRecord {
  readonly type: 'verdict';
  readonly rollout: string;
  readonly at: string;
  readonly pending: number;
  readonly denied: number;
  readonly failed: number;
  readonly skipped: number;
  /** Workloads not restarted because their recreated Pods would fit nowhere (0 with --allow-unschedulable). */
  readonly unschedulable: number;
  readonly exit: 0 | 1;
}

/** Every record of a run, in order: workload records, then one verdict (none for a dry run). */
type RolloutRecord = WorkloadRecord | VerdictRecord;

export type { RolloutMethod, RolloutRecord, RolloutState, WorkloadRecord };
