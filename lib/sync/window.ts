/** The sync cadence inside one scheduled invocation, and the Lambda handler logic around it. */
import { setTimeout as delay } from 'node:timers/promises';
import { ConfigurationError } from '../errors/index.ts';
import { isJsonObject } from '../json/index.ts';
import type { SyncReport } from './sync.ts';

/** What runSyncWindow needs; clock and sleep are injected so a test runs a whole window instantly. */
interface SyncWindowOptions {
  readonly syncOnce: () => Promise<SyncReport>;
  readonly intervalSeconds: number;
  /** Epoch milliseconds by which the last sync must have finished. */
  readonly deadline: number;
  /** Epoch milliseconds. */
  readonly clock: () => number;
  readonly sleep: (milliseconds: number) => Promise<void>;
}

/** The part of the Lambda context the handler reads. */
interface SyncInvocationContext {
  getRemainingTimeInMillis(): number;
  /** The invocation's request id; the sync names its lease holder after it (`lambda:<request id>`). */
  readonly awsRequestId?: string;
}

/** What createSyncHandler needs. */
interface SyncHandlerOptions {
  /** One sync of this invocation; each sync of a window takes and releases the sync lease on its own. */
  readonly syncOnce: (context: SyncInvocationContext) => Promise<SyncReport>;
  readonly intervalSeconds: number;
  /** Epoch milliseconds (default Date.now). */
  readonly clock?: () => number;
  /** Default: a timer. */
  readonly sleep?: (milliseconds: number) => Promise<void>;
  /** Time kept free before the function's timeout (default 5 000 ms). */
  readonly safetyMarginMs?: number;
  /** Longest window of one scheduled invocation (default 60 000 ms, the schedule's rate(1 minute)). */
  readonly windowMs?: number;
}

/** A scheduled invocation answers every sync of its window; a manual one its single sync. */
type SyncInvocationResult = SyncReport | readonly SyncReport[];

/** The sync Lambda's handler: event and context in, reports out; never rejects. */
type SyncHandler = (event: unknown, context: SyncInvocationContext) => Promise<SyncInvocationResult>;

const DEFAULT_SAFETY_MARGIN_MS = 5_000;
// EventBridge schedules fire at most once a minute; a window longer than that would run into the next invocation.
const DEFAULT_WINDOW_MS = 60_000;

/**
 * Syncs at once, then every intervalSeconds measured from the start of the previous sync (a fixed cadence), as long
 * as the next sync can start and, taking as long as the slowest one so far, finish before the deadline.
 * Returns the reports in order; the first sync always runs.
 * @internal Exported for tests: tested on its own, without a Lambda context.
 */
async function runSyncWindow(options: SyncWindowOptions): Promise<readonly SyncReport[]> {
  const { clock, sleep, deadline } = options;
  if (!Number.isFinite(options.intervalSeconds) || options.intervalSeconds <= 0) {
    throw new ConfigurationError(
      `sync interval is ${options.intervalSeconds} s; expected a positive number of seconds`,
    );
  }
  const intervalMs = options.intervalSeconds * 1000;
  const reports: SyncReport[] = [];
  let startedAt = clock();
  let longestMs = 0;
  for (;;) {
    reports.push(await options.syncOnce());
    longestMs = Math.max(longestMs, clock() - startedAt);
    const nextStart = Math.max(startedAt + intervalMs, clock());
    if (nextStart + longestMs >= deadline) return reports;
    const waitMs = nextStart - clock();
    if (waitMs > 0) await sleep(waitMs);
    startedAt = clock();
  }
}

/**
 * The sync Lambda's logic: an EventBridge event ("source": "aws.events") runs a window that ends one window
 * (or the function's remaining time less the margin, if sooner) from now; any other event syncs once.
 * Failed syncs are reported, not thrown, so asynchronous invocations are never retried into an overlap.
 */
function createSyncHandler(options: SyncHandlerOptions): SyncHandler {
  const clock = options.clock ?? Date.now;
  const sleep = options.sleep ?? ((milliseconds: number) => delay(milliseconds));
  const safetyMarginMs = options.safetyMarginMs ?? DEFAULT_SAFETY_MARGIN_MS;
  const windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
  return async (event, context) => {
    if (!isScheduledEvent(event)) return options.syncOnce(context);
    const now = clock();
    const deadline = now + Math.min(windowMs, context.getRemainingTimeInMillis() - safetyMarginMs);
    return runSyncWindow({
      syncOnce: () => options.syncOnce(context),
      intervalSeconds: options.intervalSeconds,
      deadline,
      clock,
      sleep,
    });
  };
}

function isScheduledEvent(event: unknown): boolean {
  return isJsonObject(event) && event['source'] === 'aws.events';
}

export { runSyncWindow, createSyncHandler };
