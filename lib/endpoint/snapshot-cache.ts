/** The admission-side cache: one cluster's compiled snapshot (and placement policies) in module scope, refreshed on demand. */
import type { RuleSnapshot } from '../api/index.ts';
import { ConfigurationError, StoreError } from '../errors/index.ts';
import type { PlacementPolicy } from '../placement/index.ts';
import { createRefreshingValue, type ServedValue } from '../refresh/index.ts';
import type { PlacementStore, PlacementVersion, SnapshotStore } from '../store/index.ts';

/** What the cache serves: the compiled value and the provenance of the snapshot it came from. */
interface CachedSnapshot<T> {
  readonly value: T;
  readonly version: number;
  readonly contentHash: string;
  readonly syncedAt: string;
  /** Version of the placement set compiled into the value (0 when none is set); present when the cache reads placements. */
  readonly placementVersion?: number;
  /** Seconds since the snapshot was last confirmed current by a successful read of the pointer. */
  readonly ageSeconds: number;
  /** True while the last refresh failed and the last good value is served. */
  readonly stale: boolean;
  /** The failure of the last refresh, while stale. */
  readonly refreshError?: StoreError;
}

/** Counters of a snapshot cache since it was created. */
interface SnapshotCacheStats {
  /** Successful refreshes, including the first load. */
  readonly refreshes: number;
  /** Refreshes that found a new pointer or placement version and loaded and compiled what changed. */
  readonly reloads: number;
  readonly refreshFailures: number;
  readonly consecutiveFailures: number;
}

/** A module-scope cache of one cluster's compiled snapshot. */
interface SnapshotCache<T> {
  /** The current value, refreshed when older than refreshSeconds; rejects with StoreError when no usable value exists. */
  get(): Promise<CachedSnapshot<T>>;
  /** Reads the pointer now, whatever its age (a local publish that the next request must see); resolves once read. */
  refreshNow(): Promise<void>;
  stats(): SnapshotCacheStats;
}

/** Options of a snapshot cache; maxStaleSeconds must be at least refreshSeconds. */
interface SnapshotCacheOptions<T> {
  readonly store: Pick<SnapshotStore, 'readPointer' | 'readSnapshot'>;
  /** Placement policies refreshed on the same schedule as the snapshot; without it compile always gets none. */
  readonly placements?: Pick<PlacementStore, 'readPlacementVersion' | 'readPlacements'>;
  readonly clusterId: string;
  readonly refreshSeconds: number;
  readonly maxStaleSeconds: number;
  /**
   * Longest a get waits for a refresh, in milliseconds from its start; past it the last good value is served stale
   * (a cold get rejects) while the read goes on. Without it a get waits until the read ends.
   */
  readonly deadlineMs?: number;
  /** Turns a snapshot and the placement policies into what the caller serves; a throw counts as a failed refresh. */
  readonly compile: (snapshot: RuleSnapshot, placements: readonly PlacementPolicy[]) => T;
  /** Epoch milliseconds. */
  readonly clock?: () => number;
  /** A draw from [0, 1) for the jitter of the backoff. */
  readonly random?: () => number;
  /** Called once per failed refresh while the last good value is still served (for logs and metrics). */
  readonly onRefreshFailure?: (error: StoreError) => void;
}

/** What the steps of one cache share: its options, its clock and limits, and the count of reloads. */
interface CacheContext<T> {
  readonly options: SnapshotCacheOptions<T>;
  readonly clock: () => number;
  readonly maxStaleMs: number;
  reloads: number;
}

/** The placement set a value was compiled with; version 0 and no hash when none is set. */
interface LoadedPlacements {
  readonly version: number;
  readonly contentHash: string | undefined;
  readonly policies: readonly PlacementPolicy[];
}

interface Loaded<T> {
  readonly value: T;
  /** Kept so that a change of the placements alone recompiles without reading the snapshot again. */
  readonly snapshot: RuleSnapshot;
  readonly placements: LoadedPlacements;
}

const NO_PLACEMENTS: LoadedPlacements = { version: 0, contentHash: undefined, policies: [] };

function samePlacements(current: PlacementVersion | undefined, loaded: LoadedPlacements): boolean {
  return current === undefined
    ? loaded.version === 0
    : current.version === loaded.version && current.contentHash === loaded.contentHash;
}

function secondsOption(value: number, option: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new ConfigurationError(`snapshot cache option ${option} is ${value}; expected a positive number of seconds`);
  }
  return value;
}

function asStoreError(error: unknown, clusterId: string): StoreError {
  if (error instanceof StoreError) return error;
  return new StoreError(`reading the rule snapshot of cluster "${clusterId}" failed: ${String(error)}`, {
    cause: error,
    context: { clusterId },
  });
}

// A failed refresh is retried after 0.5–1 s, then after twice as long each time, up to half to all of the refresh
// interval: a blip costs a cold container about a second of 500s, and a store that stays down costs a container at
// most two reads per refresh interval.
const FIRST_RETRY_MS = 1_000;

/**
 * A cache that loads the snapshot (and the placement policies, when given a placement store) on first use, then
 * re-reads only the pointer and the placement version once the value is older than refreshSeconds: one GetItem,
 * or two in parallel with placements, when nothing changed. Whatever changed is read again and the value
 * recompiled. Concurrent gets share one refresh, waiting for it at most deadlineMs. On a failed refresh (of either,
 * or one past the deadline) it serves the last good value marked stale until maxStaleSeconds since the last
 * successful refresh, then rejects; a cold get rejects. Failed refreshes back off (refresh's Backoff) from 1 s to
 * refreshSeconds, before and after the first good one. No placements set means none.
 */
function createSnapshotCache<T>(options: SnapshotCacheOptions<T>): SnapshotCache<T> {
  const { clusterId } = options;
  const clock = options.clock ?? Date.now;
  const refreshMs = secondsOption(options.refreshSeconds, 'refreshSeconds') * 1000;
  const maxStaleMs = secondsOption(options.maxStaleSeconds, 'maxStaleSeconds') * 1000;
  if (maxStaleMs < refreshMs) {
    throw new ConfigurationError(
      `snapshot cache option maxStaleSeconds (${options.maxStaleSeconds}) is below refreshSeconds (${options.refreshSeconds}); expected at least refreshSeconds`,
    );
  }
  const context: CacheContext<T> = { options, clock, maxStaleMs, reloads: 0 };
  const value = createRefreshingValue<Loaded<T>>({
    read: (loaded) => read(context, loaded),
    refreshMs,
    backoff: { initialMs: Math.min(FIRST_RETRY_MS, refreshMs), maxMs: refreshMs },
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    timeoutError: (deadlineMs) =>
      new StoreError(`reading the rule snapshot of cluster "${clusterId}" gave no answer within ${deadlineMs} ms`, {
        context: { clusterId, deadlineMs },
      }),
    onFailure: (failure, kept) => {
      if (kept) options.onRefreshFailure?.(failure as StoreError);
    },
    clock,
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  // Gets arriving during a refresh wait for it (up to the deadline) rather than serve the value it is replacing.
  return {
    get: async () => serve(context, await value.get()),
    refreshNow: async () => {
      await value.get({ dueAfterMs: 0 });
    },
    stats: () => {
      const counts = value.stats();
      return {
        refreshes: counts.successes,
        reloads: context.reloads,
        refreshFailures: counts.failures,
        consecutiveFailures: counts.consecutiveFailures,
      };
    },
  };
}

/** The set behind a version just read; none set needs no second read. */
async function readPlacementSet<T>(
  context: CacheContext<T>,
  current: PlacementVersion | undefined,
): Promise<LoadedPlacements> {
  if (current === undefined) return NO_PLACEMENTS;
  const set = await context.options.placements?.readPlacements();
  return set === undefined
    ? NO_PLACEMENTS
    : { version: set.version, contentHash: set.contentHash, policies: set.policies };
}

function compiled<T>(context: CacheContext<T>, snapshot: RuleSnapshot, placementSet: LoadedPlacements): Loaded<T> {
  const { compile, placements, clusterId } = context.options;
  try {
    return { value: compile(snapshot, placementSet.policies), snapshot, placements: placementSet };
  } catch (error) {
    const withPlacements = placements === undefined ? '' : ` with placement version ${placementSet.version}`;
    throw new StoreError(
      `compiling snapshot version ${snapshot.version}${withPlacements} of cluster "${clusterId}" failed: ${(error as Error).message}`,
      { cause: error, context: { clusterId, version: snapshot.version, placementVersion: placementSet.version } },
    );
  }
}

/** One refresh: the pointer (and placement version), then whatever changed since `loaded`. */
async function read<T>(context: CacheContext<T>, loaded: Loaded<T> | undefined): Promise<Loaded<T>> {
  const { store, placements, clusterId } = context.options;
  try {
    const [pointer, placementVersion] = await Promise.all([store.readPointer(), placements?.readPlacementVersion()]);
    if (pointer === undefined) {
      throw new StoreError(`no rule snapshot has been published for cluster "${clusterId}"`, {
        context: { clusterId },
      });
    }
    // Any change reloads, not only a higher version: a recreated table restarts its versions at 1.
    const snapshotChanged =
      loaded === undefined ||
      pointer.version !== loaded.snapshot.version ||
      pointer.contentHash !== loaded.snapshot.contentHash;
    const placementsChanged =
      placements !== undefined && (loaded === undefined || !samePlacements(placementVersion, loaded.placements));
    if (!snapshotChanged && !placementsChanged) return loaded;
    const [snapshot, placementSet] = await Promise.all([
      snapshotChanged ? store.readSnapshot(pointer) : loaded.snapshot,
      placementsChanged ? readPlacementSet(context, placementVersion) : (loaded?.placements ?? NO_PLACEMENTS),
    ]);
    const next = compiled(context, snapshot, placementSet);
    context.reloads += 1;
    return next;
  } catch (error) {
    throw asStoreError(error, clusterId);
  }
}

/** The value served from what the refresh holds; a StoreError once it was last confirmed beyond maxStaleSeconds. */
function serve<T>(context: CacheContext<T>, current: ServedValue<Loaded<T>>): CachedSnapshot<T> {
  const { clusterId, placements } = context.options;
  const { maxStaleMs } = context;
  const { snapshot } = current.value;
  const lastFailure = current.failure as StoreError | undefined;
  const ageMs = context.clock() - current.readAt;
  if (ageMs > maxStaleMs) {
    const reason = lastFailure === undefined ? '' : `; last refresh failed: ${lastFailure.message}`;
    throw new StoreError(
      `rules of cluster "${clusterId}" were last confirmed ${Math.round(ageMs / 1000)} s ago, above the maximum staleness of ${maxStaleMs / 1000} s${reason}`,
      { cause: lastFailure, context: { clusterId, version: snapshot.version, ageSeconds: ageMs / 1000 } },
    );
  }
  return {
    value: current.value.value,
    version: snapshot.version,
    contentHash: snapshot.contentHash,
    syncedAt: snapshot.syncedAt,
    ...(placements === undefined ? {} : { placementVersion: current.value.placements.version }),
    ageSeconds: ageMs / 1000,
    stale: lastFailure !== undefined,
    ...(lastFailure === undefined ? {} : { refreshError: lastFailure }),
  };
}

export { createSnapshotCache };
export type { CachedSnapshot, SnapshotCache };
