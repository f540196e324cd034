/** The report's JSON shape (`podmutation report -o json`): stable, documented in docs/operations.md. */
import type { Enforcement } from '../api/index.ts';
import type { VerdictKind } from '../capacity/index.ts';

/** What a rollout would do to one running Pod. */
type Verdict = 'unaffected' | 'current' | 'pending' | 'denied';

/** One rule: the Pods it matches as a rollout would create them, and of those the current and pending ones (0 for an audited rule). */
interface ReportRule {
  readonly name: string;
  readonly enforcement: Enforcement;
  readonly matched: number;
  readonly current: number;
  readonly pending: number;
  /**
   * Of the Pods it matched (enforced rules only), those a rollout would create fitting nowhere while they fit (or were
   * not judged) before the rules: the engine's MutationOutcome.fit.stranded. Without capacity, only the Pods the rules
   * turned into a contradiction of their own.
   */
  readonly unschedulable: number;
}

/**
 * Where a workload's Pods, as a rollout would create them, can run: of its Pods the rules changed, the worst verdict
 * (nowhere, then unknown, then fits), with the one-line reason of the first Pod that had it.
 */
interface ReportFit {
  /** fits: some Node or NodePool takes them; nowhere: none does, or they contradict themselves; unknown: no capacity. */
  readonly kind: VerdictKind;
  /** The verdict's line ("fits NodePool general; 3 Nodes", "fits nowhere: …"), at most 240 characters. */
  readonly reason: string;
}

/** A Pod the report saw, by name and uid: a deletion is preconditioned on that uid, so a Pod recreated since is never deleted. */
interface ReportPod {
  readonly name: string;
  readonly uid: string;
}

/** One workload that some rule matches: its Pods by verdict, the rules, and one line saying what a rollout would change. */
interface ReportWorkload {
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly pods: number;
  readonly current: number;
  readonly pending: number;
  readonly denied: number;
  /** Matched rules in application order, then the managed steps that applied. */
  readonly rules: readonly string[];
  /** "" when a rollout changes nothing; else the change (or denial) of a few Pods, bounded in length. */
  readonly change: string;
  /** Only when the rules change some of its Pods: where they would fit once a rollout recreates them. */
  readonly fit?: ReportFit;
  /**
   * Only for a StatefulSet whose update strategy keeps `kubectl rollout restart` from recreating its pending Pods
   * (OnDelete, or a RollingUpdate partition above 0), and none held: those Pods with the uids the report read, highest
   * ordinal first. Each, deleted, is recreated by the StatefulSet at the revision it runs, through the webhook.
   */
  readonly deletePods?: readonly ReportPod[];
  /**
   * Only for such a StatefulSet whose pending Pods must not be deleted: why (a Pod would come back at another revision
   * than it runs, such as a staged template; or that cannot be told). No rollout touches it.
   */
  readonly held?: string;
}

/** Every Pod read, by verdict (DaemonSet Pods are unaffected). */
interface ReportTotals {
  readonly pods: number;
  readonly unaffected: number;
  readonly current: number;
  readonly pending: number;
  readonly denied: number;
}

/** What a rollout of every workload would change: rules in application order, workloads by namespace, kind, name. */
interface MigrationReport {
  readonly rules: readonly ReportRule[];
  readonly workloads: readonly ReportWorkload[];
  readonly totals: ReportTotals;
}

export type { MigrationReport, ReportPod, ReportRule, ReportWorkload, Verdict };
