/**
 * The sync records of the rules table: sk `sync` under each cluster's pk holds the last attempt and the last success
 * (lastAttemptAt, lastStatus, lastSuccessAt, lastVersion, lastError), so staleness can be seen and alarmed on, and when
 * the migration report last ran (lastReportAt).
 */
import {
  GetItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { StoreError } from '../errors/index.ts';
import { checkedClusterId, fieldsOf, integerField, isoTime, itemKey, storeCall, stringField, toItem } from './items.ts';
import { SYNC_SORT_KEY } from './layout.ts';
import type { SyncRecord, SyncRecordStore, SyncStatus } from './types.ts';

/** Options of the sync records of one table. */
interface SyncRecordStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

const MAX_SYNC_ERROR_CHARS = 1_000;
const STATUSES: readonly SyncStatus['lastStatus'][] = ['published', 'unchanged', 'failed'];

/** The sync records of one table; see the item above. */
function createSyncRecordStore(options: SyncRecordStoreOptions): SyncRecordStore {
  const { client, tableName } = options;
  const call = <T>(operation: string, clusterId: string, run: () => Promise<T>) =>
    storeCall(tableName, operation, clusterId, run);

  async function recordSync(clusterId: string, record: SyncRecord): Promise<void> {
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
    await call('UpdateItem', clusterId, () =>
      client.send(new UpdateItemCommand({ TableName: tableName, Key: itemKey(clusterId, SYNC_SORT_KEY), ...update })),
    );
  }

  async function readSyncStatus(clusterId: string): Promise<SyncStatus | undefined> {
    checkedClusterId(clusterId);
    const { Item: item } = await call('GetItem', clusterId, () =>
      client.send(new GetItemCommand({ TableName: tableName, Key: itemKey(clusterId, SYNC_SORT_KEY) })),
    );
    if (item === undefined) return undefined;
    const fields = fieldsOf(item);
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

  async function recordReport(clusterId: string, at: string): Promise<void> {
    checkedClusterId(clusterId);
    const time = isoTime(at, 'report time');
    await call('UpdateItem', clusterId, () =>
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

  async function readReportTime(clusterId: string): Promise<string | undefined> {
    checkedClusterId(clusterId);
    const { Item: item } = await call('GetItem', clusterId, () =>
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

  return { recordSync, readSyncStatus, recordReport, readReportTime };
}

export { createSyncRecordStore };
export type { SyncRecordStoreOptions };
