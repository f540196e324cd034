/** The pointer item of snapshots (RULES_TABLE_LAYOUT.pointer): read, switched, confirmed, and the refusals of a publish. */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { messageOf, StoreError } from '../errors/index.ts';
import { MAX_CLOCK_SKEW_MS, spanText, withTableTime } from './clock.ts';
import {
  CONTENT_HASH_PATTERN,
  conditionalCall,
  fieldsOf,
  integerField,
  itemKey,
  storeCall,
  stringField,
  toItem,
  type Item,
} from './items.ts';
import { MAX_PARTS, MAX_VERSION, PARTITION_KEY, POINTER_SORT_KEY } from './layout.ts';
import type { SnapshotPointer, SnapshotTable } from './snapshot-parts.ts';

/** A list start more than MAX_CLOCK_SKEW_MS ahead of the table's clock: no longer ordered by, and replaced. */
interface UntrustedListStart {
  /** ISO-8601. */
  readonly listStartedAt: string;
  /** How far it lay ahead of the table's clock (of the publisher's, when DynamoDB sent no Date header). */
  readonly aheadMs: number;
}

/** The pointer as a read found it, and the table's clock when DynamoDB answered (undefined without a Date header). */
interface CurrentPointer {
  readonly pointer: SnapshotPointer | undefined;
  readonly tableTime: number | undefined;
}

const PUBLISH_ID_PATTERN = /^[0-9a-f]{16}$/;

function isoOf(epochMs: number): string {
  return new Date(epochMs).toISOString();
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

/** The pointer, from a consistent read or not, and the table's clock when DynamoDB answered. */
async function readCurrent(table: SnapshotTable, consistency: { consistent: boolean }): Promise<CurrentPointer> {
  const { client, tableName, clusterId } = table;
  const command = new GetItemCommand({
    TableName: tableName,
    Key: itemKey(clusterId, POINTER_SORT_KEY),
    ConsistentRead: consistency.consistent,
  });
  const tableTime = withTableTime(command);
  const { Item: item } = await storeCall(tableName, 'GetItem', clusterId, () => client.send(command));
  if (item === undefined) return { pointer: undefined, tableTime: tableTime() };
  const pointer = parsePointer(item);
  if (typeof pointer === 'string') {
    throw new StoreError(`pointer of cluster "${clusterId}" in table "${tableName}" is malformed: ${pointer}`, {
      context: { tableName, clusterId, problem: pointer },
    });
  }
  return { pointer, tableTime: tableTime() };
}

/**
 * Refuses a list start more than MAX_CLOCK_SKEW_MS ahead of the table's clock or this process's: published, it
 * would make every later sync of a right clock skip as superseded until the clocks met.
 */
function refuseAhead(table: SnapshotTable, listStartedAt: number, tableTime: number | undefined): void {
  const { tableName, clusterId } = table;
  const ownTime = table.clock();
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

/** The pointer of a newer list, the start of the list that lost to it, and the table's clock when it was read. */
interface NewerList {
  readonly current: SnapshotPointer;
  readonly listStartedAt: number;
  readonly tableTime: number | undefined;
}

/**
 * The refusal of a publish whose list started before the list of the current snapshot. When that list start lies
 * ahead of the table's clock, its writer's clock runs ahead, and the message says when syncs publish again.
 */
function superseded(
  table: SnapshotTable,
  { current, listStartedAt, tableTime }: NewerList,
  cause?: unknown,
): StoreError {
  const { tableName, clusterId } = table;
  const currentStart = isoOf(current.listStartedAt ?? 0);
  const ahead = tableTime === undefined || current.listStartedAt === undefined ? 0 : current.listStartedAt - tableTime;
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

/** The StoreError of a pointer switch whose condition failed: superseded by a newer list, or another publisher won. */
async function lostSwitch(
  table: SnapshotTable,
  pointer: SnapshotPointer,
  trustedUntil: number,
  error: unknown,
): Promise<StoreError> {
  const { tableName, clusterId } = table;
  const { listStartedAt } = pointer;
  const { pointer: current, tableTime } = await readCurrent(table, { consistent: true }).catch(() => ({
    pointer: undefined,
    tableTime: undefined,
  }));
  if (listStartedAt !== undefined && isNewer(current, listStartedAt, trustedUntil))
    return superseded(table, { current, listStartedAt, tableTime }, error);
  return new StoreError(
    `another publisher won: the pointer of cluster "${clusterId}" in table "${tableName}" is already at version ${pointer.version} or later`,
    { cause: error, context: { tableName, clusterId, version: pointer.version } },
  );
}

/** Makes the pointer current if it moves the version forward and, given a list start, not back to an older list. */
async function switchPointer(table: SnapshotTable, pointer: SnapshotPointer, trustedUntil: number): Promise<void> {
  const { client, tableName, clusterId } = table;
  const { listStartedAt } = pointer;
  const ordered = listStartedAt !== undefined;
  try {
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          ...itemKey(clusterId, POINTER_SORT_KEY),
          ...toItem({ ...pointer, publishedAt: new Date(table.clock()).toISOString() }),
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
    if (error instanceof ConditionalCheckFailedException) throw await lostSwitch(table, pointer, trustedUntil, error);
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
  table: SnapshotTable,
  current: SnapshotPointer,
  listStartedAt: number | undefined,
  trustedUntil: number,
): Promise<boolean> {
  const { client, tableName, clusterId } = table;
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

export { readCurrent, refuseAhead, superseded, isNewer, switchPointer, confirmUnchanged, untrustedStart };
export type { UntrustedListStart };
