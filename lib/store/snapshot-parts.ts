/** The part items of snapshots (RULES_TABLE_LAYOUT.part): written, read back and verified, and expired. */
import {
  ConditionalCheckFailedException,
  PutItemCommand,
  UpdateItemCommand,
  paginateQuery,
} from '@aws-sdk/client-dynamodb';
import { StoreError } from '../errors/index.ts';
import { partDigestOf } from './codec.ts';
import {
  fieldsOf,
  integerField,
  itemKey,
  storeCall,
  stringField,
  toItem,
  type ClusterTable,
  type Item,
} from './items.ts';
import {
  EXPIRES_AT_ATTRIBUTE,
  PARTITION_KEY,
  SORT_KEY,
  clusterPartition,
  partSortKey,
  partsPrefix,
  versionPrefix,
} from './layout.ts';

/**
 * The pointer item: which published snapshot is current for a cluster.
 * @internal Exported for tests: the tests read the pointer to check what a sync published.
 */
interface SnapshotPointer {
  readonly version: number;
  /** Random id of the publish that wrote the parts; concurrent publishers of one version never share parts. */
  readonly publishId: string;
  readonly partCount: number;
  readonly contentHash: string;
  /** Epoch milliseconds when the list behind this snapshot started; absent for pointers written without one (before the lease, or by rule files). */
  readonly listStartedAt?: number;
}

/** A cluster's snapshots in one table, with the settings of its writes. */
interface SnapshotTable extends ClusterTable {
  /** Epoch milliseconds; drives expiresAt and publishedAt, and stands for the table's clock without a Date header. */
  readonly clock: () => number;
  readonly partBytes: number;
  readonly retentionSeconds: number;
}

const PART_WRITE_CONCURRENCY = 4;

/** The StoreError of a snapshot version that cannot be read. */
function unusable(table: SnapshotTable, version: number, problem: string, cause?: unknown): StoreError {
  const { tableName, clusterId } = table;
  return new StoreError(
    `snapshot version ${version} of cluster "${clusterId}" in table "${tableName}" is unusable: ${problem}`,
    { cause, context: { tableName, clusterId, version, problem } },
  );
}

/** Every item whose sort key starts with prefix; keysOnly projects the keys and the TTL attribute. */
async function queryParts(table: SnapshotTable, prefix: string, keysOnly: boolean): Promise<Item[]> {
  const { client, tableName, clusterId } = table;
  return storeCall(tableName, 'Query', clusterId, async () => {
    const items: Item[] = [];
    const pages = paginateQuery(
      { client },
      {
        TableName: tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: {
          '#pk': PARTITION_KEY,
          '#sk': SORT_KEY,
          ...(keysOnly ? { '#ttl': EXPIRES_AT_ATTRIBUTE } : {}),
        },
        ExpressionAttributeValues: toItem({ ':pk': clusterPartition(clusterId), ':prefix': prefix }),
        ...(keysOnly ? { ProjectionExpression: '#pk, #sk, #ttl' } : {}),
        // Parts were written before the pointer; a consistent read guarantees all of them are visible.
        ConsistentRead: true,
      },
    );
    for await (const page of pages) items.push(...(page.Items ?? []));
    return items;
  });
}

/** Runs one write per item, PART_WRITE_CONCURRENCY at a time. */
async function inBatches<T>(items: readonly T[], write: (item: T, index: number) => Promise<unknown>): Promise<void> {
  for (let start = 0; start < items.length; start += PART_WRITE_CONCURRENCY) {
    await Promise.all(
      items.slice(start, start + PART_WRITE_CONCURRENCY).map((item, offset) => write(item, start + offset)),
    );
  }
}

/** Gives the parts under these keys a TTL; parts already expiring keep their earlier time. */
async function expireParts(table: SnapshotTable, keys: readonly Item[]): Promise<number> {
  const { client, tableName, clusterId } = table;
  const expiresAt = Math.floor(table.clock() / 1000) + table.retentionSeconds;
  await inBatches(keys, (partKey) =>
    storeCall(tableName, 'UpdateItem', clusterId, () =>
      client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: partKey,
          UpdateExpression: 'SET #ttl = :expiresAt',
          // Never recreate a part that has already expired and been deleted.
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#ttl': EXPIRES_AT_ATTRIBUTE, '#pk': PARTITION_KEY },
          ExpressionAttributeValues: toItem({ ':expiresAt': expiresAt }),
        }),
      ),
    ).catch((error: unknown) => {
      if (!(error instanceof StoreError && error.cause instanceof ConditionalCheckFailedException)) throw error;
    }),
  );
  return keys.length;
}

/** Marks every part of the superseded version (any publish id, so orphans of crashed publishers too). */
async function expireSuperseded(table: SnapshotTable, version: number): Promise<number> {
  const items = await queryParts(table, versionPrefix(version), true);
  const live = items.filter((item) => item[EXPIRES_AT_ATTRIBUTE] === undefined);
  return expireParts(
    table,
    live.map((item) => ({ [PARTITION_KEY]: item[PARTITION_KEY]!, [SORT_KEY]: item[SORT_KEY]! })),
  );
}

/** Writes the parts of the snapshot a pointer will name; their keys, for expiring them if the pointer loses. */
async function writeParts(
  table: SnapshotTable,
  pointer: SnapshotPointer,
  parts: readonly Uint8Array[],
): Promise<Item[]> {
  const { client, tableName, clusterId } = table;
  const keys = parts.map((_, part) => itemKey(clusterId, partSortKey(pointer.version, pointer.publishId, part)));
  const put = (body: Uint8Array, part: number) =>
    client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          ...keys[part],
          ...toItem({
            version: pointer.version,
            publishId: pointer.publishId,
            part,
            partCount: pointer.partCount,
            contentHash: pointer.contentHash,
            partDigest: partDigestOf(body),
            body,
          }),
        },
      }),
    );
  await inBatches(parts, (body, part) => storeCall(tableName, 'PutItem', clusterId, () => put(body, part)));
  return keys;
}

/** The body of a part if its attributes agree with the pointer, else what disagrees. */
function partBody(item: Item, pointer: SnapshotPointer, part: number): Uint8Array | string {
  const where = `part ${part} of ${pointer.partCount}`;
  const fields = fieldsOf(item);
  if (integerField(fields, 'version') !== pointer.version) return `${where} does not record version ${pointer.version}`;
  if (integerField(fields, 'partCount') !== pointer.partCount) {
    return `${where} does not record a part count of ${pointer.partCount}`;
  }
  if (stringField(fields, 'contentHash') !== pointer.contentHash)
    return `${where} does not record content hash ${pointer.contentHash}`;
  const { body } = fields;
  if (!(body instanceof Uint8Array)) return `${where} has no binary body`;
  if (stringField(fields, 'partDigest') !== partDigestOf(body))
    return `${where} is corrupted: its body does not match its digest`;
  return body;
}

/** The bodies of every part a pointer names, in order; any missing, extra or corrupted part is a StoreError. */
async function readParts(table: SnapshotTable, pointer: SnapshotPointer): Promise<Uint8Array[]> {
  const items = await queryParts(table, partsPrefix(pointer.version, pointer.publishId), false);
  const bodies: (Uint8Array | undefined)[] = Array.from({ length: pointer.partCount }, () => undefined);
  for (const item of items) {
    const part = integerField(fieldsOf(item), 'part');
    if (part === undefined || part < 0) {
      throw unusable(table, pointer.version, `item ${item[SORT_KEY]?.S} has no part index`);
    }
    if (part >= pointer.partCount) {
      throw unusable(table, pointer.version, `unexpected part ${part}; the pointer names ${pointer.partCount} parts`);
    }
    if (item[SORT_KEY]?.S !== partSortKey(pointer.version, pointer.publishId, part) || bodies[part] !== undefined) {
      throw unusable(table, pointer.version, `item ${item[SORT_KEY]?.S} claims to be part ${part}`);
    }
    const body = partBody(item, pointer, part);
    if (typeof body === 'string') throw unusable(table, pointer.version, body);
    bodies[part] = body;
  }
  const missing = bodies.findIndex((body) => body === undefined);
  if (missing !== -1) throw unusable(table, pointer.version, `part ${missing} of ${pointer.partCount} is missing`);
  return bodies as Uint8Array[];
}

export { unusable, writeParts, readParts, expireParts, expireSuperseded };
export type { SnapshotPointer, SnapshotTable };
