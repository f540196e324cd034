import { truncateInput } from '../json/index.ts';
import type { AuditedMatch } from '../engine/index.ts';
import type { AdmissionVerdict } from './review.ts';

/** The fields of one admission log line: identifies the Pod and the decision, never carries its body. */
interface AdmissionSummary {
  readonly uid: string;
  readonly namespace: string;
  readonly pod: string;
  readonly workloadKind?: string;
  readonly workloadName?: string;
  readonly decision: string;
  /** The applied rules (enforced customer rules and managed steps), in order. */
  readonly rules: readonly string[];
  /** The audited rules that matched and what enforcing each would change; absent when none matched. */
  readonly audited?: readonly AuditedMatch[];
  readonly patchOperations: number;
  readonly warnings: number;
  readonly denial?: string;
  readonly skipReason?: string;
  /** What became of the stamp the Pod arrived with (`checked`: rebuilt from it; `refused`: reviewed as new); absent without one. */
  readonly stamp?: 'checked' | 'refused';
  /** Where the changed Pod fits after the review (fits, nowhere, or unknown without capacity); absent when it was not judged. */
  readonly fit?: string;
  /** True when the review turned a Pod that fit into one that fits nowhere. */
  readonly unschedulable?: true;
  /** The rules and managed steps held back because they would have left the Pod fitting nowhere. */
  readonly held?: readonly string[];
}

/** Summarises a verdict for the structured admission log; client strings are cut to a bounded prefix. Pure. */
export function summarizeVerdict(verdict: AdmissionVerdict): AdmissionSummary {
  const { request, outcome } = verdict;
  const workload = outcome?.workload;
  return {
    uid: truncateInput(request.uid),
    namespace: truncateInput(workload?.namespace ?? request.namespace ?? ''),
    // The request's name first: a Pod rebuilt from its stamp may have lost its generated name (engine stamp.ts).
    pod: truncateInput(request.name || outcome?.facts.displayName || ''),
    ...(workload === undefined
      ? {}
      : { workloadKind: truncateInput(workload.kind), workloadName: truncateInput(workload.name) }),
    decision: verdict.decision,
    rules: outcome?.applied ?? [],
    ...(outcome === undefined || outcome.audited.length === 0 ? {} : { audited: outcome.audited }),
    patchOperations: outcome?.patch.length ?? 0,
    warnings: outcome?.warnings.length ?? 0,
    ...(outcome?.denial === undefined ? {} : { denial: outcome.denial.message }),
    ...(verdict.skipReason === undefined ? {} : { skipReason: verdict.skipReason }),
    ...(outcome?.stamp === undefined || outcome.stamp === 'none' ? {} : { stamp: outcome.stamp }),
    // The kind only: a verdict's counts and words are computed when read, and the hot path reads them only to warn.
    ...(outcome?.fit === undefined ? {} : { fit: outcome.fit.afterKind }),
    ...(outcome?.fit?.stranded === true ? { unschedulable: true as const } : {}),
    ...(outcome?.held === undefined ? {} : { held: outcome.held.map((step) => step.name) }),
  };
}
