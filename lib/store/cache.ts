/** The admission-side cache: one cluster's compiled snapshot in module scope, refreshed on demand. */
import type { RuleSnapshot } from '../api/index.ts';
import { ConfigurationError, StoreError } from '../errors/index.ts';
import type { CachedSnapshot, SnapshotCache, SnapshotCacheStats, SnapshotPointer, SnapshotStore } from './types.ts';

/** Options of a snapshot cache; maxStaleSeconds must be at least refreshSeconds. */
interface SnapshotCacheOptions<T> {
  readonly store: Pick<SnapshotStore, 'readPointer' | 'readSnapshot'>;
  readonly clusterId: string;
  readonly refreshSeconds: number;
  readonly maxStaleSeconds: number;
  /** Turns a snapshot into what the caller serves; a throw counts as a failed refresh. */
  readonly compile: (snapshot: RuleSnapshot) => T;
  /** Epoch milliseconds. */
  readonly clock?: () => number;
  /** Called once per failed refresh while the last good value is still served (for logs and metrics). */
  readonly onRefreshFailure?: (error: StoreError) => void;
}

interface Loaded<T> {
  readonly value: T;
  readonly version: number;
  readonly contentHash: string;
  readonly syncedAt: string;
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
 * A cache that loads the snapshot on first use, then re-reads only the pointer once the value is older than
 * refreshSeconds (one GetItem when unchanged). Concurrent gets share one refresh. On a failed refresh it serves
 * the last good value marked stale until maxStaleSeconds since the last successful refresh, then rejects.
 */
function createSnapshotCache<T>(options: SnapshotCacheOptions<T>): SnapshotCache<T> {
  const { store, clusterId, compile, onRefreshFailure } = options;
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

  async function load(pointer: SnapshotPointer): Promise<Loaded<T>> {
    const snapshot = await store.readSnapshot(clusterId, pointer);
    let value: T;
    try {
      value = compile(snapshot);
    } catch (error) {
      throw new StoreError(
        `compiling snapshot version ${snapshot.version} of cluster "${clusterId}" failed: ${(error as Error).message}`,
        { cause: error, context: { clusterId, version: snapshot.version } },
      );
    }
    return { value, version: snapshot.version, contentHash: snapshot.contentHash, syncedAt: snapshot.syncedAt };
  }

  async function refresh(): Promise<void> {
    const startedAt = clock();
    attemptedAt = startedAt;
    try {
      const pointer = await store.readPointer(clusterId);
      if (pointer === undefined) {
        throw new StoreError(`no rule snapshot has been published for cluster "${clusterId}"`, {
          context: { clusterId },
        });
      }
      // Any change reloads, not only a higher version: a recreated table restarts its versions at 1.
      if (loaded === undefined || pointer.version !== loaded.version || pointer.contentHash !== loaded.contentHash) {
        loaded = await load(pointer);
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
        { cause: lastFailure, context: { clusterId, version: current.version, ageSeconds: ageMs / 1000 } },
      );
    }
    return {
      value: current.value,
      version: current.version,
      contentHash: current.contentHash,
      syncedAt: current.syncedAt,
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
