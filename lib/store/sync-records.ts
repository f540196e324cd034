/** The sync record of one cluster (RULES_TABLE_LAYOUT.sync): the last attempt, the last success, the last report. */
import { GetItemCommand, UpdateItemCommand, type UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { StoreError } from '../errors/index.ts';
import {
  checkedClusterId,
  fieldsOf,
  integerField,
  isoTime,
  itemKey,
  storeCall,
  stringField,
  toItem,
  type ClusterTable,
  type ItemFields,
} from './items.ts';
import { SYNC_SORT_KEY } from './layout.ts';

/** How one sync ended. `error` is a message for operators and must hold no secrets. */
type SyncOutcome =
  | { readonly status: 'published' | 'unchanged'; readonly version: number }
  | { readonly status: 'failed'; readonly error: string };

/** One sync attempt: when it ran (ISO-8601) and how it ended. */
interface SyncRecord {
  readonly at: string;
  readonly outcome: SyncOutcome;
}

/**
 * The sync item: the last attempt and the last success, so staleness can be seen and alarmed on.
 * @internal Exported for tests: the tests read the sync record to check what a sync recorded.
 */
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

/** The sync records of one cluster, beside its snapshots. */
interface SyncRecordStore {
  /** Records one sync attempt in the cluster's sync item. */
  recordSync(record: SyncRecord): Promise<void>;
  /** The cluster's sync item; undefined before the first recorded sync. */
  readSyncStatus(): Promise<SyncStatus | undefined>;
  /** Records when the sync computed the migration report, so that the next one waits for the interval. */
  recordReport(at: string): Promise<void>;
  /** When the sync last computed the migration report; undefined before the first. */
  readReportTime(): Promise<string | undefined>;
}

const MAX_SYNC_ERROR_CHARS = 1_000;
const STATUSES: readonly SyncStatus['lastStatus'][] = ['published', 'unchanged', 'failed'];

/** Records one sync attempt: a failure keeps the last success, a success clears the last error. */
async function recordSync(table: ClusterTable, record: SyncRecord): Promise<void> {
  const { client, tableName, clusterId } = table;
  checkedClusterId(clusterId);
  const at = isoTime(record.at, 'sync time');
  const { outcome } = record;
  const update: Pick<UpdateItemCommandInput, 'UpdateExpression' | 'ExpressionAttributeValues'> =
    outcome.status === 'failed'
      ? {
          UpdateExpression: 'SET lastAttemptAt = :at, lastStatus = :status, lastError = :error',
          ExpressionAttributeValues: toItem({
            ':at': at,
            ':status': outcome.status,
            ':error': outcome.error.slice(0, MAX_SYNC_ERROR_CHARS),
          }),
        }
      : {
          UpdateExpression:
            'SET lastAttemptAt = :at, lastStatus = :status, lastSuccessAt = :at, lastVersion = :version REMOVE lastError',
          ExpressionAttributeValues: toItem({ ':at': at, ':status': outcome.status, ':version': outcome.version }),
        };
  await storeCall(tableName, 'UpdateItem', clusterId, () =>
    client.send(new UpdateItemCommand({ TableName: tableName, Key: itemKey(clusterId, SYNC_SORT_KEY), ...update })),
  );
}

/** The sync status in the fields of a sync item; a StoreError when they are malformed. */
function parseSyncStatus(table: ClusterTable, fields: ItemFields): SyncStatus {
  const { tableName, clusterId } = table;
  const lastAttemptAt = stringField(fields, 'lastAttemptAt');
  const lastStatus = stringField(fields, 'lastStatus') as SyncStatus['lastStatus'] | undefined;
  if (lastAttemptAt === undefined || lastStatus === undefined || !STATUSES.includes(lastStatus)) {
    throw new StoreError(
      `sync item of cluster "${clusterId}" in table "${tableName}" is malformed: expected lastAttemptAt and a lastStatus of published, unchanged or failed`,
      { context: { tableName, clusterId } },
    );
  }
  const lastSuccessAt = stringField(fields, 'lastSuccessAt');
  const lastVersion = integerField(fields, 'lastVersion');
  const lastError = stringField(fields, 'lastError');
  const lastReportAt = stringField(fields, 'lastReportAt');
  return {
    lastAttemptAt,
    lastStatus,
    ...(lastSuccessAt === undefined ? {} : { lastSuccessAt }),
    ...(lastVersion === undefined ? {} : { lastVersion }),
    ...(lastError === undefined ? {} : { lastError }),
    ...(lastReportAt === undefined ? {} : { lastReportAt }),
  };
}

/** The cluster's sync item. */
async function readSyncStatus(table: ClusterTable): Promise<SyncStatus | undefined> {
  const { client, tableName, clusterId } = table;
  checkedClusterId(clusterId);
  const { Item: item } = await storeCall(tableName, 'GetItem', clusterId, () =>
    client.send(new GetItemCommand({ TableName: tableName, Key: itemKey(clusterId, SYNC_SORT_KEY) })),
  );
  return item === undefined ? undefined : parseSyncStatus(table, fieldsOf(item));
}

/** Records when the sync computed the migration report. */
async function recordReport(table: ClusterTable, at: string): Promise<void> {
  const { client, tableName, clusterId } = table;
  checkedClusterId(clusterId);
  const time = isoTime(at, 'report time');
  await storeCall(tableName, 'UpdateItem', clusterId, () =>
    client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: itemKey(clusterId, SYNC_SORT_KEY),
        UpdateExpression: 'SET lastReportAt = :at',
        ExpressionAttributeValues: toItem({ ':at': time }),
      }),
    ),
  );
}

/** When the sync last computed the migration report. */
async function readReportTime(table: ClusterTable): Promise<string | undefined> {
  const { client, tableName, clusterId } = table;
  checkedClusterId(clusterId);
  const { Item: item } = await storeCall(tableName, 'GetItem', clusterId, () =>
    client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: itemKey(clusterId, SYNC_SORT_KEY),
        ProjectionExpression: 'lastReportAt',
      }),
    ),
  );
  return item === undefined ? undefined : stringField(fieldsOf(item), 'lastReportAt');
}

/** The sync record store bound to one cluster's table. */
function createSyncRecordStore(table: ClusterTable): SyncRecordStore {
  return {
    recordSync: (record) => recordSync(table, record),
    readSyncStatus: () => readSyncStatus(table),
    recordReport: (at) => recordReport(table, at),
    readReportTime: () => readReportTime(table),
  };
}

export { createSyncRecordStore };
export type { SyncOutcome, SyncStatus, SyncRecordStore };
