/**
 * A value read from a dependency and kept: one read at a time, shared by every caller; the last good value served when
 * a read fails or passes its deadline; failed reads backed off (bounded, jittered) whether or not a good read ever
 * happened. The webhook token (lib/endpoint), the rule cache (lib/store) and the cluster access (lib/cluster) are
 * each one of these with their own schedule and errors.
 */
import { ConfigurationError } from '../errors/index.ts';

/**
 * The waits after consecutive failed reads: after the n-th, a draw from [cap / 2, cap] where
 * cap = min(maxMs, initialMs × 2^(n−1)). The lower half bounds how often a dead dependency is called; the draw spreads
 * the retries of many containers.
 */
interface Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
}

/** What a refreshing value reads, how often, and how long its callers wait. */
interface RefreshingValueOptions<T> {
  /** One read; `previous` is the last good value, so a read can fetch only what changed. */
  readonly read: (previous: T | undefined) => Promise<T>;
  /** How long a good value is served before the next read; Infinity keeps it until `invalidate`. */
  readonly refreshMs: number;
  readonly backoff: Backoff;
  /**
   * Longest a caller waits for a read, counted from the read's start. Past it the read counts as failed (with
   * `timeoutError`): callers get the last good value, or the timeout when there is none, and the read goes on in the
   * background, its value kept if it ends well. Without it callers wait until the read ends.
   */
  readonly deadlineMs?: number;
  /** What a read past its deadline fails with. */
  readonly timeoutError?: (deadlineMs: number) => unknown;
  /** Called once per failed read (a late one at its deadline); `kept` says a good value is still served. */
  readonly onFailure?: (failure: unknown, kept: boolean) => void;
  /** Epoch milliseconds; drives the schedule and the backoff (the deadline runs on real timers). */
  readonly clock?: () => number;
  /** A draw from [0, 1) for the backoff's jitter. */
  readonly random?: () => number;
}

/** A value as served: when the read that gave it started, and the failure of a later read when that one failed. */
interface ServedValue<T> {
  readonly value: T;
  /** Epoch milliseconds at the start of the read that gave the value. */
  readonly readAt: number;
  /** Set when the latest read failed (or passed its deadline): the value is stale. */
  readonly failure?: unknown;
}

/** Counts since creation. */
interface RefreshStats {
  readonly reads: number;
  readonly successes: number;
  readonly failures: number;
  readonly consecutiveFailures: number;
}

/** A value kept fresh on demand. */
interface RefreshingValue<T> {
  /**
   * The value, read first when due (refreshMs after the last good read; after a failure once its backoff passed; or
   * when `dueAfterMs` have passed since the last read began). Rejects with the latest failure when no good value exists.
   */
  get(options?: { readonly dueAfterMs?: number }): Promise<ServedValue<T>>;
  /** Drops `value` if it is still the one served, so the next get reads afresh. */
  invalidate(value: T): void;
  stats(): RefreshStats;
}

interface Attempt {
  readonly startedAt: number;
  /** Past its deadline: counted as failed, no longer waited for. */
  late: boolean;
  /** Settles when the read ends or its deadline passes; never rejects. */
  waited: Promise<void>;
}

function checkedMs(value: number, option: string, allowInfinity = false): number {
  if (Number.isNaN(value) || value <= 0 || (!allowInfinity && !Number.isFinite(value))) {
    throw new ConfigurationError(
      `refreshing value option ${option} is ${value}; expected a positive number of milliseconds`,
    );
  }
  return value;
}

/** The wait after the n-th consecutive failure (n ≥ 1), for a draw in [0, 1). */
function backoffDelay(backoff: Backoff, failures: number, draw: number): number {
  const cap = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));
  return cap / 2 + (cap / 2) * draw;
}

/** A value read by `options.read` on demand; see RefreshingValueOptions for the schedule, deadline and backoff. */
function createRefreshingValue<T>(options: RefreshingValueOptions<T>): RefreshingValue<T> {
  const refreshMs = checkedMs(options.refreshMs, 'refreshMs', true);
  const backoff = {
    initialMs: checkedMs(options.backoff.initialMs, 'backoff.initialMs'),
    maxMs: checkedMs(options.backoff.maxMs, 'backoff.maxMs'),
  };
  if (backoff.maxMs < backoff.initialMs) {
    throw new ConfigurationError(
      `refreshing value option backoff.maxMs (${backoff.maxMs}) is below backoff.initialMs (${backoff.initialMs})`,
    );
  }
  const deadlineMs = options.deadlineMs === undefined ? undefined : checkedMs(options.deadlineMs, 'deadlineMs');
  const timeoutError = options.timeoutError ?? ((ms: number) => new Error(`no answer within ${ms} ms`));
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;

  let good: { readonly value: T; readonly readAt: number } | undefined;
  let failed = false;
  let failure: unknown;
  let retryAt = -Infinity;
  let lastStartedAt = -Infinity;
  let current: Attempt | undefined;
  const counts = { reads: 0, successes: 0, failures: 0, consecutiveFailures: 0 };

  function recordFailure(error: unknown): void {
    counts.failures += 1;
    counts.consecutiveFailures += 1;
    failed = true;
    failure = error;
    retryAt = clock() + backoffDelay(backoff, counts.consecutiveFailures, random());
    options.onFailure?.(error, good !== undefined);
  }

  function start(now: number): Attempt {
    counts.reads += 1;
    lastStartedAt = now;
    const attempt: Attempt = { startedAt: now, late: false, waited: Promise.resolve() };
    current = attempt;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const previous = good?.value;
    // An async wrapper turns a read that throws at once into a failed read.
    const reading = (async () => options.read(previous))();
    const ended = reading.then(
      (value) => {
        clearTimeout(timer);
        // A read given up for a newer one must not overwrite what the newer one finds.
        if (current !== attempt) return;
        current = undefined;
        good = { value, readAt: attempt.startedAt };
        failed = false;
        failure = undefined;
        retryAt = -Infinity;
        counts.successes += 1;
        counts.consecutiveFailures = 0;
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (current !== attempt) return;
        current = undefined;
        // A late read was counted as failed at its deadline.
        if (!attempt.late) recordFailure(error);
      },
    );
    if (deadlineMs === undefined) {
      attempt.waited = ended;
    } else {
      const passed = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          if (current === attempt) {
            attempt.late = true;
            recordFailure(timeoutError(deadlineMs));
          }
          resolve();
        }, deadlineMs);
      });
      attempt.waited = Promise.race([ended, passed]);
    }
    return attempt;
  }

  function due(now: number, dueAfterMs: number | undefined): boolean {
    if (now < retryAt) return false;
    if (good === undefined || failed) return true;
    if (dueAfterMs !== undefined && now - lastStartedAt >= dueAfterMs) return true;
    return now - good.readAt >= refreshMs;
  }

  function served(): ServedValue<T> {
    if (good === undefined) throw failure;
    return failed ? { value: good.value, readAt: good.readAt, failure } : { value: good.value, readAt: good.readAt };
  }

  return {
    async get(getOptions = {}) {
      const now = clock();
      if (current === undefined) {
        if (due(now, getOptions.dueAfterMs)) start(now);
      } else if (current.late && now >= retryAt) {
        // The late read is given up: its backoff passed without an answer, so it does not hold the next read.
        start(now);
      }
      if (current !== undefined) await current.waited;
      return served();
    },
    invalidate(value) {
      if (good !== undefined && good.value === value) good = undefined;
    },
    stats: () => ({ ...counts }),
  };
}

export { createRefreshingValue };
export type { Backoff, RefreshingValue, RefreshingValueOptions, RefreshStats, ServedValue };
