/**
 * The item layout of the rules table, described here once: every store builds its keys and attribute names from
 * this module, and docs/design.md's table layout links to RULES_TABLE_LAYOUT.
 */

/** Partition key attribute (S): `cluster#<clusterId>`, so that one table serves several clusters. */
const PARTITION_KEY = 'pk';
/** Sort key attribute (S): one of the sort keys of RULES_TABLE_LAYOUT. */
const SORT_KEY = 'sk';
/** TTL attribute (N, epoch seconds) set on superseded snapshot parts; the table's TimeToLiveSpecification names it. */
const EXPIRES_AT_ATTRIBUTE = 'expiresAt';

/**
 * The items under one cluster's partition key (`pk` = `cluster#<clusterId>`, `sk` as below), their attributes and
 * the store that owns each. No transactions are used; each kind's consistency is described on it. Only the sort keys
 * are values: the attributes are documented here, not shipped, since every byte of the admission bundle is load time.
 * @internal Exported for tests: the tests read the table's items by their layout.
 */
const RULES_TABLE_LAYOUT = {
  /**
   * The current snapshot (snapshots.ts, snapshot-pointer.ts): version (N), publishId (S, 16 hex digits, random per
   * publish), partCount (N), contentHash (S, `sha256:<hex>` of the canonical JSON, object keys sorted, of
   * { rules, invalid }), publishedAt (S, ISO-8601), listStartedAt (N, epoch ms when the list behind the snapshot
   * started; absent when published without one). Written last, with a condition that only moves the version forward
   * and, given a list start, never back to a list that started before the current one's (a pointer without
   * listStartedAt is replaceable, and so is one whose list start lies more than MAX_CLOCK_SKEW_MS ahead of the
   * table's clock).
   */
  pointer: { sortKey: 'pointer' },
  /**
   * One part of a snapshot (snapshot-parts.ts), sk `snapshot#<version, 10 digits>#<publishId>#<part, 5 digits>`:
   * version (N), publishId (S), part (N, from 0), partCount (N), contentHash (S), partDigest (S, sha256 of body),
   * body (B, a slice, 256 KiB by default, of the gzipped canonical JSON of { rules, invalid, resourceVersion,
   * syncedAt }), expiresAt (N, epoch seconds, the table's TTL) once superseded. Publishing writes the parts first,
   * then switches the pointer; readers read the pointer, then Query the parts it names with ConsistentRead, so they
   * see the old or the new snapshot, never a mix. After a switch every part of the previous version (any publishId,
   * so also parts of crashed or losing publishers) gets expiresAt = now + retention; nothing is deleted, so a reader
   * of the old pointer finishes.
   */
  part: { sortKeyPrefix: 'snapshot#' },
  /**
   * The sync record (sync-records.ts): lastAttemptAt (S, ISO-8601), lastStatus (S, published, unchanged or failed),
   * lastSuccessAt (S), lastVersion (N), lastError (S, at most 1,000 characters, removed by the next success),
   * lastReportAt (S, when the sync last computed the migration report). Staleness can be seen and alarmed on.
   */
  sync: { sortKey: 'sync' },
  /**
   * The sync lease (lease.ts), the one sync that may list and publish the cluster now: holderId (S, 16 hex digits,
   * random per acquisition), owner (S, `lambda:<request id>`, `cli:<host>:<pid>`), acquiredAt, renewedAt and
   * releasedAt (S, ISO-8601; releasedAt once released), leaseExpiresAt (N, epoch ms by the holder's clock; 0 once
   * released), acquisitions (N). Every write is one conditional UpdateItem: taking it requires it to be free (no
   * expiry, an expiry before the taker's now, or one further ahead than a holder within MAX_CLOCK_SKEW_MS of the
   * taker's clock can have set); renewing and releasing require the same holderId, not yet released.
   * leaseExpiresAt is not the TTL attribute: the item is never deleted.
   */
  lease: { sortKey: 'lease#sync' },
  /**
   * Every placement policy of the cluster in one item (placements.ts): version (N, from 1, moving on every change),
   * contentHash (S, `sha256:<hex>` of policies), policies (S, canonical JSON array sorted by workload: namespace,
   * kind, name), updatedAt (S, ISO-8601). A reader sees one whole set; every change is one PutItem conditioned on the
   * version read, retried a bounded number of times; the JSON is bounded to 350,000 bytes (the 400 KB item limit).
   */
  placements: { sortKey: 'placement#set' },
  /**
   * The cluster binding (cluster-binding.ts), the one cluster the cluster id stands for: clusterUid (S, the
   * metadata.uid of that cluster's kube-system namespace), boundAt (S, ISO-8601), boundBy (S, the sync that bound it,
   * `lambda:<request id>` or `cli:<host>:<pid>`), previousUid (S, the uid before the last re-bind). Written by the
   * first publish of the cluster id (one conditional UpdateItem, attribute_not_exists(clusterUid)) and by a re-bind
   * (conditional on the clusterUid it names); every publish reads it first (GetItem, ConsistentRead) and refuses a
   * cluster whose uid differs. Never deleted.
   */
  binding: { sortKey: 'binding' },
  /**
   * One Diversity counter (diversity-counters.ts), sk `diversity#<namespace>/<kind>/<name>#<revision>` (the Pod's
   * pod-template-hash or rollouts-pod-template-hash, empty when it has none): n (N), the number of Diversity Pods of
   * that workload and revision admitted so far. The admission Lambda takes each number with one UpdateItem
   * (`ADD n 1`, ReturnValues UPDATED_NEW); nothing else writes it. One small item per revision, never deleted: a TTL
   * would start a long-idle revision over at 0 beside its live Pods.
   */
  diversityCounters: { sortKeyPrefix: 'diversity#' },
} as const;

const POINTER_SORT_KEY = RULES_TABLE_LAYOUT.pointer.sortKey;
const SYNC_SORT_KEY = RULES_TABLE_LAYOUT.sync.sortKey;
const LEASE_SORT_KEY = RULES_TABLE_LAYOUT.lease.sortKey;
const PLACEMENT_SORT_KEY = RULES_TABLE_LAYOUT.placements.sortKey;
const BINDING_SORT_KEY = RULES_TABLE_LAYOUT.binding.sortKey;

/** The sort key of the Diversity counter of a workload and revision (diversityCounterKey). */
function diversityCounterSortKey(key: string): string {
  return `${RULES_TABLE_LAYOUT.diversityCounters.sortKeyPrefix}${key}`;
}

/** Zero-padding keeps the parts of one snapshot sorted by version and part index. */
const VERSION_DIGITS = 10;
const PART_DIGITS = 5;
const MAX_VERSION = 10 ** VERSION_DIGITS - 1;
const MAX_PARTS = 10 ** PART_DIGITS - 1;

/** The partition key of a cluster. */
function clusterPartition(clusterId: string): string {
  return `cluster#${clusterId}`;
}

/** The sort key prefix of every part of one snapshot version, whatever its publish. */
function versionPrefix(version: number): string {
  return `${RULES_TABLE_LAYOUT.part.sortKeyPrefix}${String(version).padStart(VERSION_DIGITS, '0')}#`;
}

/** The sort key prefix of the parts of one publish. */
function partsPrefix(version: number, publishId: string): string {
  return `${versionPrefix(version)}${publishId}#`;
}

/** The sort key of one part. */
function partSortKey(version: number, publishId: string, part: number): string {
  return `${partsPrefix(version, publishId)}${String(part).padStart(PART_DIGITS, '0')}`;
}

export {
  RULES_TABLE_LAYOUT,
  PARTITION_KEY,
  SORT_KEY,
  EXPIRES_AT_ATTRIBUTE,
  POINTER_SORT_KEY,
  SYNC_SORT_KEY,
  LEASE_SORT_KEY,
  PLACEMENT_SORT_KEY,
  BINDING_SORT_KEY,
  MAX_VERSION,
  MAX_PARTS,
  clusterPartition,
  diversityCounterSortKey,
  versionPrefix,
  partsPrefix,
  partSortKey,
};
