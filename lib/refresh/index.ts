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
 * @internal Exported for tests: the tests set a backoff without jitter.
 */
interface Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
}

/**
 * What a refreshing value reads, how often, and how long its callers wait.
 * @internal Exported for tests: the tests type the options they vary.
 */
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

interface Settings<T> {
  readonly read: (previous: T | undefined) => Promise<T>;
  readonly refreshMs: number;
  readonly backoff: Backoff;
  readonly deadlineMs: number | undefined;
  readonly timeoutError: (deadlineMs: number) => unknown;
  readonly onFailure: ((failure: unknown, kept: boolean) => void) | undefined;
  readonly clock: () => number;
  readonly random: () => number;
}

/** The options checked, with their defaults. */
function settingsOf<T>(options: RefreshingValueOptions<T>): Settings<T> {
  const backoff = {
    initialMs: checkedMs(options.backoff.initialMs, 'backoff.initialMs'),
    maxMs: checkedMs(options.backoff.maxMs, 'backoff.maxMs'),
  };
  if (backoff.maxMs < backoff.initialMs) {
    throw new ConfigurationError(
      `refreshing value option backoff.maxMs (${backoff.maxMs}) is below backoff.initialMs (${backoff.initialMs})`,
    );
  }
  return {
    read: options.read,
    refreshMs: checkedMs(options.refreshMs, 'refreshMs', true),
    backoff,
    deadlineMs: options.deadlineMs === undefined ? undefined : checkedMs(options.deadlineMs, 'deadlineMs'),
    timeoutError: options.timeoutError ?? ((ms: number) => new Error(`no answer within ${ms} ms`)),
    onFailure: options.onFailure,
    clock: options.clock ?? Date.now,
    random: options.random ?? Math.random,
  };
}

/** The state of one refreshing value and the steps of its reads. */
class Refresher<T> implements RefreshingValue<T> {
  private good: { readonly value: T; readonly readAt: number } | undefined;
  private failed = false;
  private failure: unknown;
  private retryAt = -Infinity;
  private lastStartedAt = -Infinity;
  private current: Attempt | undefined;
  private readonly counts = { reads: 0, successes: 0, failures: 0, consecutiveFailures: 0 };

  constructor(private readonly settings: Settings<T>) {}

  async get(getOptions: { readonly dueAfterMs?: number } = {}): Promise<ServedValue<T>> {
    const now = this.settings.clock();
    if (this.current === undefined) {
      if (this.due(now, getOptions.dueAfterMs)) this.start(now);
    } else if (this.current.late && now >= this.retryAt) {
      // The late read is given up: its backoff passed without an answer, so it does not hold the next read.
      this.start(now);
    }
    if (this.current !== undefined) await this.current.waited;
    return this.served();
  }

  invalidate(value: T): void {
    if (this.good !== undefined && this.good.value === value) this.good = undefined;
  }

  stats(): RefreshStats {
    return { ...this.counts };
  }

  private recordFailure(error: unknown): void {
    this.counts.failures += 1;
    this.counts.consecutiveFailures += 1;
    this.failed = true;
    this.failure = error;
    this.retryAt =
      this.settings.clock() +
      backoffDelay(this.settings.backoff, this.counts.consecutiveFailures, this.settings.random());
    this.settings.onFailure?.(error, this.good !== undefined);
  }

  private recordSuccess(attempt: Attempt, value: T): void {
    this.current = undefined;
    this.good = { value, readAt: attempt.startedAt };
    this.failed = false;
    this.failure = undefined;
    this.retryAt = -Infinity;
    this.counts.successes += 1;
    this.counts.consecutiveFailures = 0;
  }

  private start(now: number): Attempt {
    this.counts.reads += 1;
    this.lastStartedAt = now;
    const attempt: Attempt = { startedAt: now, late: false, waited: Promise.resolve() };
    this.current = attempt;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const previous = this.good?.value;
    // An async wrapper turns a read that throws at once into a failed read.
    const reading = (async () => this.settings.read(previous))();
    const ended = reading.then(
      (value) => {
        clearTimeout(timer);
        // A read given up for a newer one must not overwrite what the newer one finds.
        if (this.current === attempt) this.recordSuccess(attempt, value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (this.current !== attempt) return;
        this.current = undefined;
        // A late read was counted as failed at its deadline.
        if (!attempt.late) this.recordFailure(error);
      },
    );
    const { deadlineMs } = this.settings;
    if (deadlineMs === undefined) {
      attempt.waited = ended;
    } else {
      const passed = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          if (this.current === attempt) {
            attempt.late = true;
            this.recordFailure(this.settings.timeoutError(deadlineMs));
          }
          resolve();
        }, deadlineMs);
      });
      attempt.waited = Promise.race([ended, passed]);
    }
    return attempt;
  }

  private due(now: number, dueAfterMs: number | undefined): boolean {
    if (now < this.retryAt) return false;
    if (this.good === undefined || this.failed) return true;
    if (dueAfterMs !== undefined && now - this.lastStartedAt >= dueAfterMs) return true;
    return now - this.good.readAt >= this.settings.refreshMs;
  }

  private served(): ServedValue<T> {
    const { good, failure } = this;
    if (good === undefined) throw failure;
    return this.failed
      ? { value: good.value, readAt: good.readAt, failure }
      : { value: good.value, readAt: good.readAt };
  }
}

/** A value read by `options.read` on demand; see RefreshingValueOptions for the schedule, deadline and backoff. */
function createRefreshingValue<T>(options: RefreshingValueOptions<T>): RefreshingValue<T> {
  return new Refresher(settingsOf(options));
}

export { createRefreshingValue };
export type { Backoff, RefreshingValueOptions, ServedValue };
