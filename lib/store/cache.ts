/** The admission-side cache: one cluster's compiled snapshot (and placement policies) in module scope, refreshed on demand. */
import type { RuleSnapshot } from '../api/index.ts';
import { ConfigurationError, StoreError } from '../errors/index.ts';
import type { PlacementPolicy } from '../placement/index.ts';
import type {
  CachedSnapshot,
  PlacementStore,
  PlacementVersion,
  SnapshotCache,
  SnapshotCacheStats,
  SnapshotStore,
} from './types.ts';

/** Options of a snapshot cache; maxStaleSeconds must be at least refreshSeconds. */
interface SnapshotCacheOptions<T> {
  readonly store: Pick<SnapshotStore, 'readPointer' | 'readSnapshot'>;
  /** Placement policies refreshed on the same schedule as the snapshot; without it compile always gets none. */
  readonly placements?: Pick<PlacementStore, 'readPlacementVersion' | 'readPlacements'>;
  readonly clusterId: string;
  readonly refreshSeconds: number;
  readonly maxStaleSeconds: number;
  /** Turns a snapshot and the placement policies into what the caller serves; a throw counts as a failed refresh. */
  readonly compile: (snapshot: RuleSnapshot, placements: readonly PlacementPolicy[]) => T;
  /** Epoch milliseconds. */
  readonly clock?: () => number;
  /** Called once per failed refresh while the last good value is still served (for logs and metrics). */
  readonly onRefreshFailure?: (error: StoreError) => void;
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
  return current === undefined ? loaded.version === 0 : current.version === loaded.version && current.contentHash === loaded.contentHash;
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

/**
 * A cache that loads the snapshot (and the placement policies, when given a placement store) on first use, then
 * re-reads only the pointer and the placement version once the value is older than refreshSeconds: one GetItem,
 * or two in parallel with placements, when nothing changed. Whatever changed is read again and the value
 * recompiled. Concurrent gets share one refresh. On a failed refresh (of either) it serves the last good value
 * marked stale until maxStaleSeconds since the last successful refresh, then rejects. No placements set means none.
 */
function createSnapshotCache<T>(options: SnapshotCacheOptions<T>): SnapshotCache<T> {
  const { store, placements, clusterId, compile, onRefreshFailure } = options;
  const clock = options.clock ?? Date.now;
  const refreshMs = secondsOption(options.refreshSeconds, 'refreshSeconds') * 1000;
  const maxStaleMs = secondsOption(options.maxStaleSeconds, 'maxStaleSeconds') * 1000;
  if (maxStaleMs < refreshMs) {
    throw new ConfigurationError(
      `snapshot cache option maxStaleSeconds (${options.maxStaleSeconds}) is below refreshSeconds (${options.refreshSeconds}); expected at least refreshSeconds`,
    );
  }

  let loaded: Loaded<T> | undefined;
  let confirmedAt = 0;
  let attemptedAt = 0;
  let lastFailure: StoreError | undefined;
  let inFlight: Promise<void> | undefined;
  let refreshes = 0;
  let reloads = 0;
  let refreshFailures = 0;
  let consecutiveFailures = 0;

  /** The set behind a version just read; none set needs no second read. */
  async function readPlacementSet(current: PlacementVersion | undefined): Promise<LoadedPlacements> {
    if (current === undefined) return NO_PLACEMENTS;
    const set = await placements?.readPlacements(clusterId);
    return set === undefined ? NO_PLACEMENTS : { version: set.version, contentHash: set.contentHash, policies: set.policies };
  }

  function compiled(snapshot: RuleSnapshot, placementSet: LoadedPlacements): Loaded<T> {
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

  async function refresh(): Promise<void> {
    const startedAt = clock();
    attemptedAt = startedAt;
    try {
      const [pointer, placementVersion] = await Promise.all([
        store.readPointer(clusterId),
        placements?.readPlacementVersion(clusterId),
      ]);
      if (pointer === undefined) {
        throw new StoreError(`no rule snapshot has been published for cluster "${clusterId}"`, {
          context: { clusterId },
        });
      }
      // Any change reloads, not only a higher version: a recreated table restarts its versions at 1.
      const snapshotChanged =
        loaded === undefined || pointer.version !== loaded.snapshot.version || pointer.contentHash !== loaded.snapshot.contentHash;
      const placementsChanged = placements !== undefined && (loaded === undefined || !samePlacements(placementVersion, loaded.placements));
      if (snapshotChanged || placementsChanged) {
        const [snapshot, placementSet] = await Promise.all([
          snapshotChanged ? store.readSnapshot(clusterId, pointer) : loaded!.snapshot,
          placementsChanged ? readPlacementSet(placementVersion) : (loaded?.placements ?? NO_PLACEMENTS),
        ]);
        loaded = compiled(snapshot, placementSet);
        reloads += 1;
      }
      confirmedAt = startedAt;
      lastFailure = undefined;
      consecutiveFailures = 0;
      refreshes += 1;
    } catch (error) {
      const failure = asStoreError(error, clusterId);
      refreshFailures += 1;
      consecutiveFailures += 1;
      if (loaded === undefined) throw failure;
      lastFailure = failure;
      onRefreshFailure?.(failure);
    }
  }

  function serve(current: Loaded<T>): CachedSnapshot<T> {
    const ageMs = clock() - confirmedAt;
    if (ageMs > maxStaleMs) {
      const reason = lastFailure === undefined ? '' : `; last refresh failed: ${lastFailure.message}`;
      throw new StoreError(
        `rules of cluster "${clusterId}" were last confirmed ${Math.round(ageMs / 1000)} s ago, above the maximum staleness of ${maxStaleMs / 1000} s${reason}`,
        { cause: lastFailure, context: { clusterId, version: current.snapshot.version, ageSeconds: ageMs / 1000 } },
      );
    }
    return {
      value: current.value,
      version: current.snapshot.version,
      contentHash: current.snapshot.contentHash,
      syncedAt: current.snapshot.syncedAt,
      ...(placements === undefined ? {} : { placementVersion: current.placements.version }),
      ageSeconds: ageMs / 1000,
      stale: lastFailure !== undefined,
      ...(lastFailure === undefined ? {} : { refreshError: lastFailure }),
    };
  }

  async function get(): Promise<CachedSnapshot<T>> {
    if (inFlight === undefined && (loaded === undefined || clock() - attemptedAt >= refreshMs)) {
      inFlight = refresh().finally(() => {
        inFlight = undefined;
      });
    }
    // Gets arriving during a refresh wait for it rather than serve the value it is replacing.
    if (inFlight !== undefined) await inFlight;
    // A successful refresh (ours or a shared one) always leaves a loaded value.
    return serve(loaded!);
  }

  function stats(): SnapshotCacheStats {
    return { refreshes, reloads, refreshFailures, consecutiveFailures };
  }

  return { get, stats };
}

export { createSnapshotCache };
export type { SnapshotCacheOptions };
