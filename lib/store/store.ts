/**
 * The DynamoDB rule store. One table with string keys pk (HASH) and sk (RANGE); every pk is
 * `cluster#<clusterId>`, so one table serves several clusters. Items under one pk:
 *
 *   sk `pointer`  the current snapshot: version (N), publishId (S), partCount (N), contentHash (S),
 *                 publishedAt (S, ISO-8601), listStartedAt (N, epoch ms, when the list behind it started). Written
 *                 last, with a condition that only moves the version forward and, given a list start, never back
 *                 to a list that started before the current one's (a pointer without listStartedAt is replaceable,
 *                 and so is one whose list start lies more than MAX_CLOCK_SKEW_MS ahead of the table's clock).
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
import { ConfigurationError, MalformedInputError, messageOf, StoreError } from '../errors/index.ts';
import { MAX_CLOCK_SKEW_MS, spanText, withTableTime } from './clock.ts';
import { decodedContentHash, decodeContent, partDigestOf, serializeContent, type SerializedContent } from './codec.ts';
import {
  CONTENT_HASH_PATTERN,
  checkedClusterId,
  conditionalCall,
  fieldsOf,
  integerField,
  isoTime,
  itemKey,
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
  UntrustedListStart,
} from './types.ts';

/** Options of a store over one table. */
interface SnapshotStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /**
   * Epoch milliseconds; drives expiresAt and publishedAt, and stands for the table's clock when a response carries no
   * Date header. A publish whose list start lies more than MAX_CLOCK_SKEW_MS ahead of it is refused.
   */
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

function integerOption(
  value: number | undefined,
  option: string,
  fallback: number,
  minimum: number,
  maximum: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum || value > maximum) {
    throw new ConfigurationError(
      `snapshot store option ${option} is ${value}; expected an integer from ${minimum} to ${maximum}`,
    );
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
    throw new MalformedInputError(`listStartedAt is ${value}; expected epoch milliseconds`, {
      context: { field: 'listStartedAt' },
    });
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
  if (stringField(fields, 'contentHash') !== pointer.contentHash)
    return `${where} does not record content hash ${pointer.contentHash}`;
  const { body } = fields;
  if (!(body instanceof Uint8Array)) return `${where} has no binary body`;
  if (stringField(fields, 'partDigest') !== partDigestOf(body))
    return `${where} is corrupted: its body does not match its digest`;
  return body;
}

/** A store of rule snapshots in one DynamoDB table; see the item layout above. */
function createSnapshotStore(options: SnapshotStoreOptions): SnapshotStore {
  const { client, tableName } = options;
  const clock = options.clock ?? Date.now;
  const partBytes = integerOption(options.partBytes, 'partBytes', DEFAULT_PART_BYTES, MIN_PART_BYTES, MAX_PART_BYTES);
  const retentionSeconds = integerOption(
    options.retentionSeconds,
    'retentionSeconds',
    DEFAULT_RETENTION_SECONDS,
    1,
    30 * 24 * 3600,
  );

  const call = <T>(operation: string, clusterId: string, run: () => Promise<T>) =>
    storeCall(tableName, operation, clusterId, run);

  function unusable(clusterId: string, version: number, problem: string, cause?: unknown): StoreError {
    return new StoreError(
      `snapshot version ${version} of cluster "${clusterId}" in table "${tableName}" is unusable: ${problem}`,
      {
        cause,
        context: { tableName, clusterId, version, problem },
      },
    );
  }

  /** The pointer and the table's clock when DynamoDB answered (its Date header; undefined without one). */
  async function readCurrent(
    clusterId: string,
    consistent: boolean,
  ): Promise<{ pointer: SnapshotPointer | undefined; tableTime: number | undefined }> {
    const command = new GetItemCommand({
      TableName: tableName,
      Key: itemKey(clusterId, POINTER_SORT_KEY),
      ConsistentRead: consistent,
    });
    const tableTime = withTableTime(command);
    const { Item: item } = await call('GetItem', clusterId, () => client.send(command));
    if (item === undefined) return { pointer: undefined, tableTime: tableTime() };
    const pointer = parsePointer(item);
    if (typeof pointer === 'string') {
      throw new StoreError(`pointer of cluster "${clusterId}" in table "${tableName}" is malformed: ${pointer}`, {
        context: { tableName, clusterId, problem: pointer },
      });
    }
    return { pointer, tableTime: tableTime() };
  }

  async function getPointer(clusterId: string, consistent: boolean): Promise<SnapshotPointer | undefined> {
    return (await readCurrent(clusterId, consistent)).pointer;
  }

  /**
   * Refuses a list start more than MAX_CLOCK_SKEW_MS ahead of the table's clock or this process's: published, it
   * would make every later sync of a right clock skip as superseded until the clocks met.
   */
  function refuseAhead(clusterId: string, listStartedAt: number, tableTime: number | undefined): void {
    const ownTime = clock();
    const [whose, time] =
      tableTime !== undefined && listStartedAt - tableTime > MAX_CLOCK_SKEW_MS
        ? ["the table's clock (DynamoDB's Date header)", tableTime]
        : listStartedAt - ownTime > MAX_CLOCK_SKEW_MS
          ? ["this process's clock", ownTime]
          : [undefined, undefined];
    if (whose === undefined) return;
    const aheadMs = listStartedAt - time;
    throw new StoreError(
      `refused to publish for cluster "${clusterId}" in table "${tableName}": this list started at ${isoOf(listStartedAt)}, ${spanText(aheadMs)} ahead of ` +
        `${whose}, ${isoOf(time)}; a list start more than ${spanText(MAX_CLOCK_SKEW_MS)} ahead would hold back every later sync, so nothing was ` +
        'published. Set the clock of the machine that ran this sync right (turn on NTP) and sync again',
      {
        context: {
          tableName,
          clusterId,
          reason: 'clockAhead',
          listStartedAt: isoOf(listStartedAt),
          clockTime: isoOf(time),
          aheadMs,
        },
      },
    );
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

  async function writeParts(
    clusterId: string,
    pointer: SnapshotPointer,
    parts: readonly Uint8Array[],
  ): Promise<Item[]> {
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

  /**
   * The refusal of a publish whose list started before the list of the current snapshot. When that list start lies
   * ahead of the table's clock, its writer's clock runs ahead, and the message says when syncs publish again.
   */
  function superseded(
    clusterId: string,
    current: SnapshotPointer,
    listStartedAt: number,
    tableTime: number | undefined,
    cause?: unknown,
  ): StoreError {
    const currentStart = isoOf(current.listStartedAt ?? 0);
    const ahead =
      tableTime === undefined || current.listStartedAt === undefined ? 0 : current.listStartedAt - tableTime;
    const skew =
      ahead > 0
        ? `; that list start lies ${spanText(ahead)} ahead of the table's clock, so the clock of the sync that listed it runs ahead: ` +
          `syncs publish again once the table's clock passes it, within ${spanText(MAX_CLOCK_SKEW_MS)}`
        : '';
    return new StoreError(
      `a newer list is already published: version ${current.version} of cluster "${clusterId}" in table "${tableName}" comes from a list ` +
        `started at ${currentStart}, after this one (started at ${isoOf(listStartedAt)}); nothing was published${skew}`,
      {
        cause,
        context: {
          tableName,
          clusterId,
          reason: 'superseded',
          version: current.version,
          listStartedAt: isoOf(listStartedAt),
          currentListStartedAt: currentStart,
        },
      },
    );
  }

  /** True when the current pointer's list started after listStartedAt, and not beyond trustedUntil. */
  function isNewer(
    current: SnapshotPointer | undefined,
    listStartedAt: number,
    trustedUntil: number,
  ): current is SnapshotPointer {
    return (
      current?.listStartedAt !== undefined &&
      current.listStartedAt > listStartedAt &&
      current.listStartedAt <= trustedUntil
    );
  }

  async function switchPointer(clusterId: string, pointer: SnapshotPointer, trustedUntil: number): Promise<void> {
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
          // A list start beyond trustedUntil was written by a clock running ahead; ordering by it would freeze publishing.
          ConditionExpression: ordered
            ? '(attribute_not_exists(#pk) OR #version < :version) AND ' +
              '(attribute_not_exists(#listStartedAt) OR #listStartedAt <= :listStartedAt OR #listStartedAt > :trustedUntil)'
            : 'attribute_not_exists(#pk) OR #version < :version',
          ExpressionAttributeNames: {
            '#pk': PARTITION_KEY,
            '#version': 'version',
            ...(ordered ? { '#listStartedAt': 'listStartedAt' } : {}),
          },
          ExpressionAttributeValues: toItem({
            ':version': pointer.version,
            ...(ordered ? { ':listStartedAt': listStartedAt, ':trustedUntil': trustedUntil } : {}),
          }),
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const { pointer: current, tableTime } = await readCurrent(clusterId, true).catch(() => ({
          pointer: undefined,
          tableTime: undefined,
        }));
        if (listStartedAt !== undefined && isNewer(current, listStartedAt, trustedUntil))
          throw superseded(clusterId, current, listStartedAt, tableTime, error);
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
   * to this one's, so that a list older than this one cannot replace it later, or back to it from beyond
   * trustedUntil. False when the pointer moved meanwhile.
   */
  async function confirmUnchanged(
    clusterId: string,
    current: SnapshotPointer,
    listStartedAt: number | undefined,
    trustedUntil: number,
  ): Promise<boolean> {
    if (
      listStartedAt === undefined ||
      (current.listStartedAt !== undefined &&
        current.listStartedAt >= listStartedAt &&
        current.listStartedAt <= trustedUntil)
    )
      return true;
    return conditionalCall(tableName, 'UpdateItem', clusterId, () =>
      client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: itemKey(clusterId, POINTER_SORT_KEY),
          UpdateExpression: 'SET #listStartedAt = :listStartedAt',
          ConditionExpression:
            '#version = :version AND #publishId = :publishId AND ' +
            '(attribute_not_exists(#listStartedAt) OR #listStartedAt < :listStartedAt OR #listStartedAt > :trustedUntil)',
          ExpressionAttributeNames: {
            '#version': 'version',
            '#publishId': 'publishId',
            '#listStartedAt': 'listStartedAt',
          },
          ExpressionAttributeValues: toItem({
            ':version': current.version,
            ':publishId': current.publishId,
            ':listStartedAt': listStartedAt,
            ':trustedUntil': trustedUntil,
          }),
        }),
      ),
    );
  }

  /** The current pointer's list start when it lies beyond trustedUntil (a clock ahead wrote it), for the outcome. */
  function untrustedStart(
    current: SnapshotPointer | undefined,
    listStartedAt: number | undefined,
    now: number,
    trustedUntil: number,
  ): UntrustedListStart | undefined {
    if (listStartedAt === undefined || current?.listStartedAt === undefined || current.listStartedAt <= trustedUntil)
      return undefined;
    return { listStartedAt: isoOf(current.listStartedAt), aheadMs: current.listStartedAt - now };
  }

  async function publish(
    clusterId: string,
    content: SnapshotContent,
    options: PublishOptions = {},
  ): Promise<PublishOutcome> {
    checkedClusterId(clusterId);
    isoTime(content.syncedAt, 'syncedAt');
    const listStartedAt = checkedListStart(options.listStartedAt);
    const serialized = serializeContent(content);
    const { contentHash } = serialized;
    // Confirming unchanged content can race another publisher; the pointer is read again once, then the race is lost.
    for (let attempt = 1; ; attempt += 1) {
      const { pointer: current, tableTime } = await readCurrent(clusterId, true);
      if (listStartedAt !== undefined) refuseAhead(clusterId, listStartedAt, tableTime);
      const now = tableTime ?? clock();
      const trustedUntil = now + MAX_CLOCK_SKEW_MS;
      const untrusted = untrustedStart(current, listStartedAt, now, trustedUntil);
      const replaced = untrusted === undefined ? {} : { untrustedListStart: untrusted };
      if (current?.contentHash === contentHash) {
        if (await confirmUnchanged(clusterId, current, listStartedAt, trustedUntil)) {
          return { published: false, version: current.version, contentHash, supersededParts: 0, ...replaced };
        }
        if (attempt === 2) {
          throw new StoreError(
            `another publisher won: the pointer of cluster "${clusterId}" in table "${tableName}" moved while this publish confirmed it`,
            {
              context: { tableName, clusterId, version: current.version },
            },
          );
        }
        continue;
      }
      if (listStartedAt !== undefined && isNewer(current, listStartedAt, trustedUntil))
        throw superseded(clusterId, current, listStartedAt, tableTime);
      return { ...(await publishNew(clusterId, serialized, current, listStartedAt, trustedUntil)), ...replaced };
    }
  }

  async function publishNew(
    clusterId: string,
    serialized: SerializedContent,
    current: SnapshotPointer | undefined,
    listStartedAt: number | undefined,
    trustedUntil: number,
  ): Promise<PublishOutcome> {
    const { contentHash } = serialized;
    const version = (current?.version ?? 0) + 1;
    if (version > MAX_VERSION)
      throw new StoreError(`cluster "${clusterId}" has reached the last snapshot version ${MAX_VERSION}`);
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
      throw new StoreError(
        `snapshot of cluster "${clusterId}" needs ${parts.length} parts, above the limit of ${MAX_PARTS}`,
      );
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
      await switchPointer(clusterId, pointer, trustedUntil);
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
        error instanceof StoreError
          ? error
          : new StoreError(messageOf(error), { cause: error, context: { clusterId } });
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
        throw unusable(
          clusterId,
          pointer.version,
          `unexpected part ${part}; the pointer names ${pointer.partCount} parts`,
        );
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
      throw unusable(
        clusterId,
        pointer.version,
        `content hashes to ${actualHash}, but the pointer says ${pointer.contentHash}`,
      );
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
