/**
 * The DynamoDB rule store. One table with string keys pk (HASH) and sk (RANGE); every pk is
 * `cluster#<clusterId>`, so one table serves several clusters. Items under one pk:
 *
 *   sk `pointer`  the current snapshot: version (N), publishId (S), partCount (N), contentHash (S),
 *                 publishedAt (S, ISO-8601), listStartedAt (N, epoch ms, when the list behind it started). Written
 *                 last, with a condition that only moves the version forward and, given a list start, never back
 *                 to a list that started before the current one's (a pointer without listStartedAt is replaceable).
 *   sk `snapshot#<version, 10 digits>#<publishId>#<part, 5 digits>`  one part of a snapshot: version (N),
 *                 publishId (S), part (N, from 0), partCount (N), contentHash (S), partDigest (S, sha256 of body),
 *                 body (B, a slice, 256 KiB by default, of the gzipped canonical JSON of
 *                 { rules, invalid, resourceVersion, syncedAt }), expiresAt (N, epoch seconds) once superseded.
 *   sk `sync`     the last sync (sync-records.ts).
 *   sk `lease#sync`  the sync lease: which sync may list and publish now (lease.ts).
 *   sk `placement#set`  every placement policy of the cluster: version (N), contentHash (S, sha256 of policies),
 *                 policies (S, canonical JSON array sorted by workload), updatedAt (S); see placements.ts.
 *
 * Publishing writes the parts first, then switches the pointer; readers read the pointer, then Query the parts
 * it names with ConsistentRead, so they see the old or the new snapshot, never a mix. No transactions are used.
 * contentHash is `sha256:<hex>` of the canonical JSON (object keys sorted) of { rules, invalid }.
 * After a switch, every part of the previous version (any publishId, so also parts of crashed or losing
 * publishers) gets expiresAt = now + retention; nothing is deleted, so a reader that read the old pointer finishes.
 */
import { randomBytes } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { RuleSnapshot } from '../api/index.ts';
import { ConfigurationError, MalformedInputError, StoreError } from '../errors/index.ts';
import { decodedContentHash, decodeContent, partDigestOf, serializeContent, type SerializedContent } from './codec.ts';
import {
  CONTENT_HASH_PATTERN,
  checkedClusterId,
  conditionalCall,
  fieldsOf,
  integerField,
  isoTime,
  itemKey,
  messageOf,
  storeCall,
  stringField,
  toItem,
  type Item,
} from './items.ts';
import {
  EXPIRES_AT_ATTRIBUTE,
  MAX_PARTS,
  MAX_VERSION,
  PARTITION_KEY,
  POINTER_SORT_KEY,
  SORT_KEY,
  clusterPartition,
  partSortKey,
  partsPrefix,
  versionPrefix,
} from './layout.ts';
import type {
  PublishOptions,
  PublishOutcome,
  SnapshotContent,
  SnapshotPointer,
  SnapshotStore,
} from './types.ts';

/** Options of a store over one table. */
interface SnapshotStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Epoch milliseconds; drives expiresAt and publishedAt. */
  readonly clock?: () => number;
  /** Bytes of gzipped content per part item (default 256 KiB, at most 350,000 to stay clear of the 400 KB item limit). */
  readonly partBytes?: number;
  /** How long superseded parts stay readable before their TTL (default 900 s). */
  readonly retentionSeconds?: number;
}

const DEFAULT_PART_BYTES = 256 * 1024;
// The rest of a part item (keys, hashes, numbers) stays under 1 KB, so 350,000 bytes of body is far from 400 KB.
const MAX_PART_BYTES = 350_000;
const MIN_PART_BYTES = 1_024;
const DEFAULT_RETENTION_SECONDS = 900;
const PART_WRITE_CONCURRENCY = 4;
const PUBLISH_ID_PATTERN = /^[0-9a-f]{16}$/;

function integerOption(value: number | undefined, option: string, fallback: number, minimum: number, maximum: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum || value > maximum) {
    throw new ConfigurationError(`snapshot store option ${option} is ${value}; expected an integer from ${minimum} to ${maximum}`);
  }
  return value;
}

/** The pointer in an item, or what is wrong with it. */
function parsePointer(item: Item): SnapshotPointer | string {
  const fields = fieldsOf(item);
  const version = integerField(fields, 'version');
  if (version === undefined || version < 1 || version > MAX_VERSION) {
    return `version must be a number attribute holding an integer from 1 to ${MAX_VERSION}`;
  }
  const partCount = integerField(fields, 'partCount');
  if (partCount === undefined || partCount < 1 || partCount > MAX_PARTS) {
    return `partCount must be a number attribute holding an integer from 1 to ${MAX_PARTS}`;
  }
  const publishId = stringField(fields, 'publishId');
  if (publishId === undefined || !PUBLISH_ID_PATTERN.test(publishId)) {
    return 'publishId must be a string attribute of 16 lowercase hex digits';
  }
  const contentHash = stringField(fields, 'contentHash');
  if (contentHash === undefined || !CONTENT_HASH_PATTERN.test(contentHash)) {
    return 'contentHash must be a string attribute of the form sha256:<64 hex digits>';
  }
  // Readers ignore the list start; only publishers order by it, so a damaged one never makes a snapshot unreadable.
  const listStartedAt = integerField(fields, 'listStartedAt');
  return { version, publishId, partCount, contentHash, ...(listStartedAt === undefined ? {} : { listStartedAt }) };
}

function checkedListStart(value: number | undefined): number | undefined {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    throw new MalformedInputError(`listStartedAt is ${value}; expected epoch milliseconds`, { context: { field: 'listStartedAt' } });
  }
  return value;
}

function isoOf(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** The body of a part if its attributes agree with the pointer, else what disagrees. */
function partBody(item: Item, pointer: SnapshotPointer, part: number): Uint8Array | string {
  const where = `part ${part} of ${pointer.partCount}`;
  const fields = fieldsOf(item);
  if (integerField(fields, 'version') !== pointer.version) return `${where} does not record version ${pointer.version}`;
  if (integerField(fields, 'partCount') !== pointer.partCount) {
    return `${where} does not record a part count of ${pointer.partCount}`;
  }
  if (stringField(fields, 'contentHash') !== pointer.contentHash) return `${where} does not record content hash ${pointer.contentHash}`;
  const { body } = fields;
  if (!(body instanceof Uint8Array)) return `${where} has no binary body`;
  if (stringField(fields, 'partDigest') !== partDigestOf(body)) return `${where} is corrupted: its body does not match its digest`;
  return body;
}

/** A store of rule snapshots in one DynamoDB table; see the item layout above. */
function createSnapshotStore(options: SnapshotStoreOptions): SnapshotStore {
  const { client, tableName } = options;
  const clock = options.clock ?? Date.now;
  const partBytes = integerOption(options.partBytes, 'partBytes', DEFAULT_PART_BYTES, MIN_PART_BYTES, MAX_PART_BYTES);
  const retentionSeconds = integerOption(options.retentionSeconds, 'retentionSeconds', DEFAULT_RETENTION_SECONDS, 1, 30 * 24 * 3600);

  const call = <T>(operation: string, clusterId: string, run: () => Promise<T>) => storeCall(tableName, operation, clusterId, run);

  function unusable(clusterId: string, version: number, problem: string, cause?: unknown): StoreError {
    return new StoreError(`snapshot version ${version} of cluster "${clusterId}" in table "${tableName}" is unusable: ${problem}`, {
      cause,
      context: { tableName, clusterId, version, problem },
    });
  }

  async function getPointer(clusterId: string, consistent: boolean): Promise<SnapshotPointer | undefined> {
    const { Item: item } = await call('GetItem', clusterId, () =>
      client.send(
        new GetItemCommand({ TableName: tableName, Key: itemKey(clusterId, POINTER_SORT_KEY), ConsistentRead: consistent }),
      ),
    );
    if (item === undefined) return undefined;
    const pointer = parsePointer(item);
    if (typeof pointer === 'string') {
      throw new StoreError(`pointer of cluster "${clusterId}" in table "${tableName}" is malformed: ${pointer}`, {
        context: { tableName, clusterId, problem: pointer },
      });
    }
    return pointer;
  }

  /** Every item whose sort key starts with prefix; keysOnly projects the keys and the TTL attribute. */
  async function queryAll(clusterId: string, prefix: string, keysOnly: boolean): Promise<Item[]> {
    const items: Item[] = [];
    let startKey: Item | undefined;
    do {
      const page = await call('Query', clusterId, () =>
        client.send(
          new QueryCommand({
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
            ExclusiveStartKey: startKey,
          }),
        ),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return items;
  }

  /** Gives the parts under these keys a TTL; parts already expiring keep their earlier time. */
  async function expire(clusterId: string, keys: readonly Item[]): Promise<number> {
    const expiresAt = Math.floor(clock() / 1000) + retentionSeconds;
    for (let start = 0; start < keys.length; start += PART_WRITE_CONCURRENCY) {
      await Promise.all(
        keys.slice(start, start + PART_WRITE_CONCURRENCY).map((partKey) =>
          call('UpdateItem', clusterId, () =>
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
        ),
      );
    }
    return keys.length;
  }

  /** Marks every part of the superseded version (any publish id, so orphans of crashed publishers too). */
  async function expireSuperseded(clusterId: string, version: number): Promise<number> {
    const items = await queryAll(clusterId, versionPrefix(version), true);
    const live = items.filter((item) => item[EXPIRES_AT_ATTRIBUTE] === undefined);
    return expire(
      clusterId,
      live.map((item) => ({ [PARTITION_KEY]: item[PARTITION_KEY]!, [SORT_KEY]: item[SORT_KEY]! })),
    );
  }

  async function writeParts(clusterId: string, pointer: SnapshotPointer, parts: readonly Uint8Array[]): Promise<Item[]> {
    const keys = parts.map((_, part) => itemKey(clusterId, partSortKey(pointer.version, pointer.publishId, part)));
    for (let start = 0; start < parts.length; start += PART_WRITE_CONCURRENCY) {
      await Promise.all(
        parts.slice(start, start + PART_WRITE_CONCURRENCY).map((body, offset) =>
          call('PutItem', clusterId, () =>
            client.send(
              new PutItemCommand({
                TableName: tableName,
                Item: {
                  ...keys[start + offset],
                  ...toItem({
                    version: pointer.version,
                    publishId: pointer.publishId,
                    part: start + offset,
                    partCount: pointer.partCount,
                    contentHash: pointer.contentHash,
                    partDigest: partDigestOf(body),
                    body,
                  }),
                },
              }),
            ),
          ),
        ),
      );
    }
    return keys;
  }

  /** The refusal of a publish whose list started before the list of the current snapshot. */
  function superseded(clusterId: string, current: SnapshotPointer, listStartedAt: number, cause?: unknown): StoreError {
    const currentStart = isoOf(current.listStartedAt ?? 0);
    return new StoreError(
      `a newer list is already published: version ${current.version} of cluster "${clusterId}" in table "${tableName}" comes from a list ` +
        `started at ${currentStart}, after this one (started at ${isoOf(listStartedAt)}); nothing was published`,
      {
        cause,
        context: { tableName, clusterId, reason: 'superseded', version: current.version, listStartedAt: isoOf(listStartedAt), currentListStartedAt: currentStart },
      },
    );
  }

  /** True when the current pointer's list started after listStartedAt. */
  function isNewer(current: SnapshotPointer | undefined, listStartedAt: number): current is SnapshotPointer {
    return current?.listStartedAt !== undefined && current.listStartedAt > listStartedAt;
  }

  async function switchPointer(clusterId: string, pointer: SnapshotPointer): Promise<void> {
    const { listStartedAt } = pointer;
    const ordered = listStartedAt !== undefined;
    try {
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            ...itemKey(clusterId, POINTER_SORT_KEY),
            ...toItem({ ...pointer, publishedAt: new Date(clock()).toISOString() }),
          },
          ConditionExpression: ordered
            ? '(attribute_not_exists(#pk) OR #version < :version) AND (attribute_not_exists(#listStartedAt) OR #listStartedAt <= :listStartedAt)'
            : 'attribute_not_exists(#pk) OR #version < :version',
          ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#version': 'version', ...(ordered ? { '#listStartedAt': 'listStartedAt' } : {}) },
          ExpressionAttributeValues: toItem({ ':version': pointer.version, ':listStartedAt': listStartedAt }),
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const current = await getPointer(clusterId, true).catch(() => undefined);
        if (listStartedAt !== undefined && isNewer(current, listStartedAt)) throw superseded(clusterId, current, listStartedAt, error);
        throw new StoreError(
          `another publisher won: the pointer of cluster "${clusterId}" in table "${tableName}" is already at version ${pointer.version} or later`,
          { cause: error, context: { tableName, clusterId, version: pointer.version } },
        );
      }
      throw new StoreError(
        `DynamoDB PutItem of the pointer on table "${tableName}" for cluster "${clusterId}" failed: ${messageOf(error)}`,
        { cause: error, context: { tableName, clusterId, operation: 'PutItem', version: pointer.version } },
      );
    }
  }

  /**
   * Confirms that the current pointer, of the same content, stands for this list too: its list start moves forward
   * to this one's, so that a list older than this one cannot replace it later. False when the pointer moved meanwhile.
   */
  async function confirmUnchanged(clusterId: string, current: SnapshotPointer, listStartedAt: number | undefined): Promise<boolean> {
    if (listStartedAt === undefined || (current.listStartedAt !== undefined && current.listStartedAt >= listStartedAt)) return true;
    return conditionalCall(tableName, 'UpdateItem', clusterId, () =>
      client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: itemKey(clusterId, POINTER_SORT_KEY),
          UpdateExpression: 'SET #listStartedAt = :listStartedAt',
          ConditionExpression:
            '#version = :version AND #publishId = :publishId AND (attribute_not_exists(#listStartedAt) OR #listStartedAt < :listStartedAt)',
          ExpressionAttributeNames: { '#version': 'version', '#publishId': 'publishId', '#listStartedAt': 'listStartedAt' },
          ExpressionAttributeValues: toItem({ ':version': current.version, ':publishId': current.publishId, ':listStartedAt': listStartedAt }),
        }),
      ),
    );
  }

  async function publish(clusterId: string, content: SnapshotContent, options: PublishOptions = {}): Promise<PublishOutcome> {
    checkedClusterId(clusterId);
    isoTime(content.syncedAt, 'syncedAt');
    const listStartedAt = checkedListStart(options.listStartedAt);
    const serialized = serializeContent(content);
    const { contentHash } = serialized;
    // Confirming unchanged content can race another publisher; the pointer is read again once, then the race is lost.
    for (let attempt = 1; ; attempt += 1) {
      const current = await getPointer(clusterId, true);
      if (current?.contentHash === contentHash) {
        if (await confirmUnchanged(clusterId, current, listStartedAt)) {
          return { published: false, version: current.version, contentHash, supersededParts: 0 };
        }
        if (attempt === 2) {
          throw new StoreError(`another publisher won: the pointer of cluster "${clusterId}" in table "${tableName}" moved while this publish confirmed it`, {
            context: { tableName, clusterId, version: current.version },
          });
        }
        continue;
      }
      if (listStartedAt !== undefined && isNewer(current, listStartedAt)) throw superseded(clusterId, current, listStartedAt);
      return publishNew(clusterId, serialized, current, listStartedAt);
    }
  }

  async function publishNew(
    clusterId: string,
    serialized: SerializedContent,
    current: SnapshotPointer | undefined,
    listStartedAt: number | undefined,
  ): Promise<PublishOutcome> {
    const { contentHash } = serialized;
    const version = (current?.version ?? 0) + 1;
    if (version > MAX_VERSION) throw new StoreError(`cluster "${clusterId}" has reached the last snapshot version ${MAX_VERSION}`);
    let parts: readonly Uint8Array[];
    try {
      parts = serialized.encode(partBytes);
    } catch (error) {
      throw new StoreError(`snapshot of cluster "${clusterId}" cannot be stored: ${messageOf(error)}`, {
        cause: error,
        context: { clusterId },
      });
    }
    if (parts.length > MAX_PARTS) {
      throw new StoreError(`snapshot of cluster "${clusterId}" needs ${parts.length} parts, above the limit of ${MAX_PARTS}`);
    }
    const pointer: SnapshotPointer = {
      version,
      publishId: randomBytes(8).toString('hex'),
      partCount: parts.length,
      contentHash,
      ...(listStartedAt === undefined ? {} : { listStartedAt }),
    };
    const keys = await writeParts(clusterId, pointer, parts);
    try {
      await switchPointer(clusterId, pointer);
    } catch (error) {
      // The losing parts were never visible to readers; let them expire rather than linger.
      await expire(clusterId, keys).catch(() => undefined);
      throw error;
    }
    if (current === undefined) return { published: true, version, contentHash, supersededParts: 0 };
    try {
      const supersededParts = await expireSuperseded(clusterId, current.version);
      return { published: true, version, contentHash, supersededParts };
    } catch (error) {
      const cleanupError =
        error instanceof StoreError ? error : new StoreError(messageOf(error), { cause: error, context: { clusterId } });
      return { published: true, version, contentHash, supersededParts: 0, cleanupError };
    }
  }

  async function readPointer(clusterId: string): Promise<SnapshotPointer | undefined> {
    checkedClusterId(clusterId);
    return getPointer(clusterId, false);
  }

  async function readSnapshot(clusterId: string, pointer: SnapshotPointer): Promise<RuleSnapshot> {
    checkedClusterId(clusterId);
    const items = await queryAll(clusterId, partsPrefix(pointer.version, pointer.publishId), false);
    const bodies: (Uint8Array | undefined)[] = Array.from({ length: pointer.partCount }, () => undefined);
    for (const item of items) {
      const part = integerField(fieldsOf(item), 'part');
      if (part === undefined || part < 0) {
        throw unusable(clusterId, pointer.version, `item ${item[SORT_KEY]?.S} has no part index`);
      }
      if (part >= pointer.partCount) {
        throw unusable(clusterId, pointer.version, `unexpected part ${part}; the pointer names ${pointer.partCount} parts`);
      }
      if (item[SORT_KEY]?.S !== partSortKey(pointer.version, pointer.publishId, part) || bodies[part] !== undefined) {
        throw unusable(clusterId, pointer.version, `item ${item[SORT_KEY]?.S} claims to be part ${part}`);
      }
      const body = partBody(item, pointer, part);
      if (typeof body === 'string') throw unusable(clusterId, pointer.version, body);
      bodies[part] = body;
    }
    const missing = bodies.findIndex((body) => body === undefined);
    if (missing !== -1) {
      throw unusable(clusterId, pointer.version, `part ${missing} of ${pointer.partCount} is missing`);
    }
    const decoded = decodeContent(bodies as Uint8Array[]);
    if ('problem' in decoded) throw unusable(clusterId, pointer.version, decoded.problem, decoded.cause);
    const actualHash = decodedContentHash(decoded);
    if (actualHash !== pointer.contentHash) {
      throw unusable(clusterId, pointer.version, `content hashes to ${actualHash}, but the pointer says ${pointer.contentHash}`);
    }
    const { rules, invalid, resourceVersion, syncedAt } = decoded.content;
    return { rules, invalid, resourceVersion, syncedAt, contentHash: pointer.contentHash, version: pointer.version };
  }

  async function read(clusterId: string): Promise<RuleSnapshot | undefined> {
    const pointer = await readPointer(clusterId);
    return pointer === undefined ? undefined : readSnapshot(clusterId, pointer);
  }

  return { publish, readPointer, readSnapshot, read };
}

export { createSnapshotStore };
export type { SnapshotStoreOptions };
