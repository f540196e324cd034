import type { RuleSnapshot } from '../api/index.ts';
import type { StoreError } from '../errors/index.ts';
import type { PlacementPolicy } from '../placement/index.ts';

/** What a publisher hands the store: a RuleSnapshot without the hash and version the store assigns. */
type SnapshotContent = Omit<RuleSnapshot, 'contentHash' | 'version'>;

/** The pointer item: which published snapshot is current for a cluster. */
interface SnapshotPointer {
  readonly version: number;
  /** Random id of the publish that wrote the parts; concurrent publishers of one version never share parts. */
  readonly publishId: string;
  readonly partCount: number;
  readonly contentHash: string;
  /** Epoch milliseconds when the list behind this snapshot started; absent for pointers written without one (before the lease, or by rule files). */
  readonly listStartedAt?: number;
}

/** How a publish is ordered against the current snapshot. */
interface PublishOptions {
  /**
   * Epoch milliseconds when the list behind the content started, by the lister's clock. A publish of other content
   * whose list started before the current snapshot's is refused (StoreError, context.reason `superseded`); one of the
   * same content moves the current snapshot's list start forward. Without it the publish is ordered by version alone.
   * A list start more than MAX_CLOCK_SKEW_MS (120 s) ahead of the table's clock, or the publisher's, is refused
   * (context.reason `clockAhead`); a current list start that far ahead is not ordered by, and is replaced.
   */
  readonly listStartedAt?: number;
}

/** Result of `publish`: the current version and hash, and whether this call made them current. */
interface PublishOutcome {
  readonly published: boolean;
  readonly version: number;
  readonly contentHash: string;
  /** Parts of superseded snapshots newly given a TTL (0 when unchanged). */
  readonly supersededParts: number;
  /** Set when marking superseded parts failed; the publish itself succeeded and those parts stay until a later sweep. */
  readonly cleanupError?: StoreError;
  /** Set when the pointer this publish replaced, or confirmed, carried a list start a clock running ahead had written. */
  readonly untrustedListStart?: UntrustedListStart;
}

/** A list start more than MAX_CLOCK_SKEW_MS ahead of the table's clock: no longer ordered by, and replaced. */
interface UntrustedListStart {
  /** ISO-8601. */
  readonly listStartedAt: string;
  /** How far it lay ahead of the table's clock (of the publisher's, when DynamoDB sent no Date header). */
  readonly aheadMs: number;
}

/** How one sync ended. `error` is a message for operators and must hold no secrets. */
type SyncOutcome =
  | { readonly status: 'published' | 'unchanged'; readonly version: number }
  | { readonly status: 'failed'; readonly error: string };

/** One sync attempt: when it ran (ISO-8601) and how it ended. */
interface SyncRecord {
  readonly at: string;
  readonly outcome: SyncOutcome;
}

/** The sync item: the last attempt and the last success, so staleness can be seen and alarmed on. */
interface SyncStatus {
  readonly lastAttemptAt: string;
  readonly lastStatus: SyncOutcome['status'];
  readonly lastSuccessAt?: string;
  readonly lastVersion?: number;
  /** Message of the last attempt when it failed; cleared by the next success. */
  readonly lastError?: string;
  /** When the sync last computed the migration report (reportIntervalMinutes); absent while it never did. */
  readonly lastReportAt?: string;
}

/** The rule store of one table; every operation is scoped to a cluster id. */
interface SnapshotStore {
  /** Publishes content as the next version unless its hash equals the current one; atomic for readers. */
  publish(clusterId: string, content: SnapshotContent, options?: PublishOptions): Promise<PublishOutcome>;
  /** The current pointer in exactly one eventually consistent GetItem; undefined when nothing was published. */
  readPointer(clusterId: string): Promise<SnapshotPointer | undefined>;
  /** Reads and verifies the snapshot a pointer names; any missing, extra or corrupted part is a StoreError. */
  readSnapshot(clusterId: string, pointer: SnapshotPointer): Promise<RuleSnapshot>;
  /** readPointer then readSnapshot; undefined when nothing was published. */
  read(clusterId: string): Promise<RuleSnapshot | undefined>;
}

/** The cluster's sync lease as stored: who holds it or last held it, and until when (by the holder's clock). */
interface SyncLeaseState {
  /** Random id of one acquisition; only it renews or releases the lease. */
  readonly holderId: string;
  /** Who took it, for people: `lambda:<request id>`, `cli:<host>:<pid>`. */
  readonly owner: string;
  /** ISO-8601 time of the acquisition. */
  readonly acquiredAt: string;
  /** ISO-8601 time after which another sync may take the lease; the epoch (1970) once released. */
  readonly expiresAt: string;
  /** ISO-8601 time of the release, when the holder released it. */
  readonly releasedAt?: string;
  /** How many times the lease was acquired, this holder included. */
  readonly acquisitions: number;
}

/** A lease this process holds: what renew and release need. */
interface HeldSyncLease {
  readonly clusterId: string;
  readonly holderId: string;
  readonly owner: string;
  /** ISO-8601 time the lease runs out unless renewed, by this holder's clock. */
  readonly expiresAt: string;
}

/** Result of `acquire`: the lease, or the state of the lease another sync holds. */
type SyncLeaseAcquisition =
  | {
      readonly acquired: true;
      readonly lease: HeldSyncLease;
      /** The lease taken over because its expiry lay too far ahead to be honoured: its holder's clock ran ahead. */
      readonly untrusted?: { readonly owner: string; readonly expiresAt: string; readonly aheadMs: number };
    }
  | { readonly acquired: false; readonly holder: SyncLeaseState };

/** The sync lease of each cluster in one table: one sync at a time lists and publishes a cluster. */
interface SyncLeaseStore {
  /**
   * Takes the lease when it was never taken, was released, expired by this writer's clock, or expires further ahead
   * than the lease's length plus MAX_CLOCK_SKEW_MS (a holder's clock ran ahead); else names the holder.
   */
  acquire(clusterId: string, owner: string): Promise<SyncLeaseAcquisition>;
  /** Extends a held lease by the lease duration from now; StoreError (context.reason `leaseLost`) when another sync took it. */
  renew(lease: HeldSyncLease): Promise<HeldSyncLease>;
  /** Frees a held lease at once; false (and nothing written) when it was no longer this holder's. */
  release(lease: HeldSyncLease): Promise<boolean>;
  /** The lease item from a consistent read; undefined when the cluster's lease was never taken. */
  read(clusterId: string): Promise<SyncLeaseState | undefined>;
}

/** The sync records of one table, beside the snapshots; every operation is scoped to a cluster id. */
interface SyncRecordStore {
  /** Records one sync attempt in the cluster's sync item. */
  recordSync(clusterId: string, record: SyncRecord): Promise<void>;
  /** The cluster's sync item; undefined before the first recorded sync. */
  readSyncStatus(clusterId: string): Promise<SyncStatus | undefined>;
  /** Records when the sync computed the migration report, so that the next one waits for the interval. */
  recordReport(clusterId: string, at: string): Promise<void>;
  /** When the sync last computed the migration report; undefined before the first. */
  readReportTime(clusterId: string): Promise<string | undefined>;
}

/** Which placement set is current for a cluster: its version (from 1, moving on every change) and content hash. */
interface PlacementVersion {
  readonly version: number;
  readonly contentHash: string;
}

/** Every placement policy of a cluster, sorted by workload (namespace, kind, name), with its version. */
interface PlacementSet extends PlacementVersion {
  readonly policies: readonly PlacementPolicy[];
  /** ISO-8601 time of the write that made this version. */
  readonly updatedAt: string;
}

/** Result of a placement write: whether it changed the set, and the set's version after it (0 when none exists). */
interface PlacementWrite {
  readonly changed: boolean;
  readonly version: number;
}

/** The placement policies of one table; every operation is scoped to a cluster id. */
interface PlacementStore {
  /** Adds or replaces the policy of its workload; unchanged (no write) when the same policy is already set. */
  setPlacement(clusterId: string, policy: PlacementPolicy): Promise<PlacementWrite>;
  /** Removes the workload's policy; `changed` is false when it had none. */
  deletePlacement(clusterId: string, namespace: string, kind: string, name: string): Promise<PlacementWrite>;
  /** Replaces the whole set in one write (for publishing a file); duplicate workloads are malformed input. */
  replacePlacements(clusterId: string, policies: readonly PlacementPolicy[]): Promise<PlacementWrite>;
  /** The workload's policy from a consistent read; undefined when it has none. */
  getPlacement(clusterId: string, namespace: string, kind: string, name: string): Promise<PlacementPolicy | undefined>;
  /** Every policy of the cluster from a consistent read, sorted by workload; empty when none are set. */
  listPlacements(clusterId: string): Promise<readonly PlacementPolicy[]>;
  /** The current version in one eventually consistent GetItem projecting only the version; undefined when none was set. */
  readPlacementVersion(clusterId: string): Promise<PlacementVersion | undefined>;
  /** The whole set from a consistent read, each policy validated again; undefined when none was set. */
  readPlacements(clusterId: string): Promise<PlacementSet | undefined>;
}

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

/** Store settings read from the environment. */
interface StoreConfig {
  readonly tableName: string;
  readonly clusterId: string;
  readonly endpoint?: string;
  readonly refreshSeconds: number;
  readonly maxStaleSeconds: number;
}

export type {
  SnapshotContent,
  SnapshotPointer,
  PublishOptions,
  PublishOutcome,
  UntrustedListStart,
  SyncOutcome,
  SyncRecord,
  SyncStatus,
  SnapshotStore,
  SyncRecordStore,
  SyncLeaseState,
  HeldSyncLease,
  SyncLeaseAcquisition,
  SyncLeaseStore,
  PlacementVersion,
  PlacementSet,
  PlacementWrite,
  PlacementStore,
  CachedSnapshot,
  SnapshotCacheStats,
  SnapshotCache,
  StoreConfig,
};
