/**
 * A Diversity Pod's number in its workload's sequence (lib/placement/sequence.ts), taken from the rules table's counter
 * before the review: the engine is pure and synchronous, so what it needs from a store is read first.
 */
import { passThroughReason, type AdmissionRequest } from '../admission/index.ts';
import { podFacts, STAMP_ANNOTATION, type MutationContext } from '../engine/index.ts';
import { MalformedInputError, StoreError } from '../errors/index.ts';
import { diversityCounterKey, type PlacementStep } from '../placement/index.ts';
import type { DiversityCounterStore } from '../store/index.ts';

/**
 * The longest a review waits for its counter. The function's 3 s timeout leaves 0.5 s past the token's and the rules'
 * deadlines (functions/admission/index.ts); an UpdateItem within a region takes single-digit milliseconds (DynamoDB's
 * docs: "Performance at any scale"), so 150 ms ends only a call that has gone wrong, well inside that half second.
 */
const SEQUENCE_DEADLINE_MS = 150;

/**
 * What the review's managed steps get (`context`: the sequence number, or why there is none, and the split is then
 * drawn at random), and the counter's error for the log line.
 */
interface SequenceContext {
  readonly context: Pick<MutationContext, 'sequence' | 'sequenceUnavailable'>;
  readonly failure?: unknown;
}

const NONE: SequenceContext = { context: {} };

/** What reads a sequence number: the placement step of the rules served, the counters, the deadline. */
interface SequenceSource {
  readonly placement: PlacementStep | undefined;
  readonly counters: Pick<DiversityCounterStore, 'next'> | undefined;
  readonly deadlineMs: number;
}

/** The counter's next number, or a StoreError (context `deadlineMs`) once the deadline passed, the call aborted. */
async function withinDeadline(
  source: SequenceSource,
  key: string,
  counters: Pick<DiversityCounterStore, 'next'>,
): Promise<number> {
  const { deadlineMs } = source;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(
        new StoreError(`the Diversity counter "${key}" did not answer within ${deadlineMs} ms`, {
          context: { counter: key, deadlineMs },
        }),
      );
    }, deadlineMs);
  });
  try {
    return await Promise.race([counters.next(key, controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The sequence context of a request: empty unless it creates a Pod placed by Diversity that is numbered by a counter
 * (a StatefulSet Pod is numbered by its ordinal, a stamped Pod by its stamp); else the counter's next number, or why
 * it could not be had: a dry run (which must not count a Pod: sideEffects NoneOnDryRun), no counter, a failed call,
 * or the deadline. Never rejects.
 */
async function diversitySequence(source: SequenceSource, request: AdmissionRequest): Promise<SequenceContext> {
  const { placement, counters } = source;
  if (placement === undefined || passThroughReason(request) !== undefined) return NONE;
  let facts: ReturnType<typeof podFacts>;
  try {
    facts = podFacts(request.object, request.namespace ?? '');
  } catch (error) {
    // The review itself reports a Pod the boundary refuses.
    if (error instanceof MalformedInputError) return NONE;
    throw error;
  }
  const key = diversityCounterKey(facts, placement.choose(facts));
  // A stamped Pod is reviewed with the number its stamp recorded (lib/engine/stamp.ts); a new one would skip one.
  if (key === undefined || Object.hasOwn(facts.annotations, STAMP_ANNOTATION)) return NONE;
  if (request.dryRun === true)
    return { context: { sequenceUnavailable: 'the request is a dry run, which takes no number' } };
  if (counters === undefined) return { context: { sequenceUnavailable: 'this webhook keeps no counter of Pods' } };
  try {
    return { context: { sequence: await withinDeadline(source, key, counters) } };
  } catch (failure) {
    // The warning goes to whoever created the Pod: it says what happened, the log line says which table and why.
    const late = failure instanceof StoreError && failure.context.deadlineMs !== undefined;
    const what = late ? `did not answer within ${source.deadlineMs} ms` : 'failed';
    return { context: { sequenceUnavailable: `the counter of the workload's Pods ${what}` }, failure };
  }
}

export { diversitySequence, SEQUENCE_DEADLINE_MS };
export type { SequenceContext };
