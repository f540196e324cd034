/**
 * The engine's entry: one incoming Pod read through the Pod boundary, its stamp read, the rule pass (mutate.ts), and
 * the Pod it sends stamped (stamp.ts). Without stamps the rule pass's Pod is sent as it is.
 */
import { LimitExceededError } from '../errors/index.ts';
import { MIRROR_ANNOTATION } from './binding.ts';
import type { RuleSet } from './compile.ts';
import type { MutationContext } from './context.ts';
import {
  denied,
  mutatePod,
  passOutcome,
  type MutationOutcome,
  type OutcomeBase,
  type RulePassOptions,
} from './mutate.ts';
import { podFacts, type PodFacts } from './pod.ts';
import { readStamp, stampedContext, writeStamp, type StampDigest } from './stamp.ts';

/** The Pod to review, any JSON value, with the request's namespace and context, and the rules to review it under. */
interface PodReview {
  readonly pod: unknown;
  readonly namespace: string;
  readonly ruleSet: RuleSet;
  readonly context: MutationContext;
}

/** The rule pass's options, and where the Pod came from and how it is answered. */
export interface MutationOptions extends RulePassOptions {
  /**
   * Why admission lets the request through unchanged (an AdmissionReview that is no Pod CREATE): the Pod is then
   * skipped with this reason, as the webhook answers it, so that explain and test give the webhook's answer.
   */
  readonly passThrough?: string;
  /** Where the Pod sits in its input, for the field paths of errors (default "request.object"). */
  readonly source?: string;
  /** The namespace when neither the request nor the Pod names one (default ""). */
  readonly fallbackNamespace?: string;
  /**
   * Stamps every Pod the review changes and reads the stamp a Pod arrives with (lib/engine/stamp.ts): admission, and
   * the CLI that shows it. Without it stamps are neither written nor read, and a stamp is an annotation like another.
   */
  readonly stamps?: StampDigest;
}

/**
 * Why the engine leaves a Pod alone, or undefined when it does not: a DaemonSet's Pod; a mirror Pod (the API server
 * refuses the mirror annotation without spec.nodeName: pkg/apis/core/validation ValidatePodSpecificAnnotations); a Pod
 * bound when it is created, whose node affinity no scheduler reads and whose Node's kubelet refuses it when the Node
 * fails it (pkg/kubelet/lifecycle/predicate.go generalFilter).
 */
function skipReason(facts: PodFacts): string | undefined {
  if (facts.daemonSetOwned) return 'DaemonSet-owned Pods are not mutated';
  if (facts.mirror)
    return `mirror Pods (annotation ${MIRROR_ANNOTATION}) are not mutated: the kubelet runs them from a static manifest`;
  if (facts.nodeName !== '')
    return (
      'Pods created bound to a Node (spec.nodeName set) are not mutated: no scheduler reads their node affinity, ' +
      'and the kubelet refuses one whose Node fails it'
    );
  return undefined;
}

/** The outcome for a Pod the engine never mutates, and why. */
function skippedOutcome(incoming: PodFacts, reason: string): MutationOutcome {
  return {
    workload: incoming.workload,
    facts: incoming,
    pod: incoming.pod,
    patch: [],
    warnings: [],
    decision: 'skipped',
    applied: [],
    audited: [],
    evaluations: [],
    skipReason: reason,
  };
}

/**
 * Reviews one incoming Pod: reads it through the Pod boundary (podFacts), runs the rule pass (mutatePod) and returns
 * the Pod it sends with the patch to it. With stamps, a Pod whose stamp checks is first put back as it arrived at the
 * review that stamped it, and the result is stamped. Pure: the incoming Pod is never edited. Throws only
 * MalformedInputError, for a Pod the boundary rejects.
 */
export function reviewPod(review: PodReview, options: MutationOptions = {}): MutationOutcome {
  const read = (candidate: unknown): PodFacts =>
    podFacts(candidate, review.namespace, options.source, options.fallbackNamespace);
  const incoming = read(review.pod);
  const skipped =
    options.passThrough === undefined
      ? skipReason(incoming)
      : `the webhook allows it unchanged: ${options.passThrough}`;
  if (skipped !== undefined) return skippedOutcome(incoming, skipped);
  // A Pod the webhook stamped is reviewed as its author sent it, with the draw of its first review.
  const reading = options.stamps === undefined ? undefined : readStamp(incoming, options.stamps, read);
  const context = reading === undefined ? review.context : stampedContext(review.context, reading);
  const base: OutcomeBase = {
    // The Pod's own: a Pod rebuilt from its stamp may have lost its generated name (stamp.ts preImage).
    workload: incoming.workload,
    facts: reading?.facts ?? incoming,
    pod: incoming.pod,
    patch: [],
    warnings: [],
    ...(reading === undefined ? {} : { stamp: reading.verdict }),
  };
  const pass = mutatePod(base.facts, review.ruleSet, context, options);
  if ('ended' in pass) return { ...base, ...pass.ended };
  const sent =
    reading === undefined
      ? pass.pod
      : writeStamp(pass, { incoming: incoming.pod, reading, digest: options.stamps!, context });
  if (sent instanceof LimitExceededError) return { ...base, ...denied(pass.audited, pass.evaluations, sent) };
  return passOutcome(base, pass, sent);
}
