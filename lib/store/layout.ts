/** Key layout of the rules table; see the doc comment of store.ts for the full item layout. */

/** Partition key attribute (S): `cluster#<clusterId>`. */
const PARTITION_KEY = 'pk';
/** Sort key attribute (S): `pointer`, `sync`, `lease#sync`, `snapshot#...`, `placement#set`. */
const SORT_KEY = 'sk';
/** TTL attribute (N, epoch seconds) set on superseded snapshot parts; the table's TimeToLiveSpecification names it. */
const EXPIRES_AT_ATTRIBUTE = 'expiresAt';

const POINTER_SORT_KEY = 'pointer';
const SYNC_SORT_KEY = 'sync';
/** The one sync lease of a cluster: which sync may list and publish now (lease.ts). */
const LEASE_SORT_KEY = 'lease#sync';
/** The one item holding every placement policy of a cluster. */
const PLACEMENT_SORT_KEY = 'placement#set';

/** Zero-padding keeps the parts of one snapshot sorted by version and part index. */
const VERSION_DIGITS = 10;
const PART_DIGITS = 5;
const MAX_VERSION = 10 ** VERSION_DIGITS - 1;
const MAX_PARTS = 10 ** PART_DIGITS - 1;

function clusterPartition(clusterId: string): string {
  return `cluster#${clusterId}`;
}

function versionPrefix(version: number): string {
  return `snapshot#${String(version).padStart(VERSION_DIGITS, '0')}#`;
}

function partsPrefix(version: number, publishId: string): string {
  return `${versionPrefix(version)}${publishId}#`;
}

function partSortKey(version: number, publishId: string, part: number): string {
  return `${partsPrefix(version, publishId)}${String(part).padStart(PART_DIGITS, '0')}`;
}

export {
  PARTITION_KEY,
  SORT_KEY,
  EXPIRES_AT_ATTRIBUTE,
  POINTER_SORT_KEY,
  SYNC_SORT_KEY,
  LEASE_SORT_KEY,
  PLACEMENT_SORT_KEY,
  MAX_VERSION,
  MAX_PARTS,
  clusterPartition,
  versionPrefix,
  partsPrefix,
  partSortKey,
};
