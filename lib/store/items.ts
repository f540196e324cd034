/**
 * Items of the rules table, shared by its adapters: built with util-dynamodb's marshall and read with its unmarshall
 * (numbers wrapped, so that a corrupted number is reported rather than rounded), and the argument checks of a key.
 */
import { ConditionalCheckFailedException, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { MalformedInputError, messageOf, StoreError } from '../errors/index.ts';
import { CLUSTER_ID } from '../syntax/index.ts';
import { PARTITION_KEY, SORT_KEY, clusterPartition } from './layout.ts';

/** One cluster's items in one table: what every store is bound to. */
interface ClusterTable {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly clusterId: string;
}

/** A DynamoDB item as the SDK sends and returns it. */
type Item = Record<string, AttributeValue>;

/** An item's attributes as JavaScript values: strings, wrapped numbers, Uint8Array binaries. */
type ItemFields = Readonly<Record<string, unknown>>;

const CONTENT_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** An item from plain fields (no undefined field is written). */
function toItem(fields: Readonly<Record<string, unknown>>): Item {
  return marshall(fields, { removeUndefinedValues: true });
}

/** The key of one item of a cluster. */
function itemKey(clusterId: string, sortKey: string): Item {
  return toItem({ [PARTITION_KEY]: clusterPartition(clusterId), [SORT_KEY]: sortKey });
}

/** The fields of an item. */
function fieldsOf(item: Item): ItemFields {
  return unmarshall(item, { wrapNumbers: true });
}

/** The integer in a number field, or undefined when the field is missing, not a number or not a safe integer. */
function integerField(fields: ItemFields, name: string): number | undefined {
  const field = fields[name];
  // Wrapped numbers carry their digits as text; a string attribute is not a number.
  const text = typeof field === 'object' && field !== null && 'value' in field ? String(field.value) : undefined;
  const value = text === undefined ? Number.NaN : Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The text of a string field, or undefined. */
function stringField(fields: ItemFields, name: string): string | undefined {
  const field = fields[name];
  return typeof field === 'string' ? field : undefined;
}

/** The cluster id if it can be embedded in a partition key, else a MalformedInputError with the expected form. */
function checkedClusterId(clusterId: string): string {
  if (!CLUSTER_ID.pattern.test(clusterId)) {
    throw new MalformedInputError(
      `cluster id "${clusterId}" is invalid; expected 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
  return clusterId;
}

const ISO_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The time if it is ISO-8601, else a MalformedInputError naming what it is. */
function isoTime(text: string, what: string): string {
  if (!ISO_TIME_PATTERN.test(text) || Number.isNaN(Date.parse(text))) {
    throw new MalformedInputError(`${what} is "${text}"; expected an ISO-8601 time`);
  }
  return text;
}

/** Runs one DynamoDB call; its failure is a StoreError naming the operation, the table and the cluster. */
async function storeCall<T>(
  tableName: string,
  operation: string,
  clusterId: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new StoreError(
      `DynamoDB ${operation} on table "${tableName}" for cluster "${clusterId}" failed: ${messageOf(error)}`,
      {
        cause: error,
        context: { tableName, clusterId, operation },
      },
    );
  }
}

/** Runs one conditional DynamoDB write: its output when written, undefined when its condition failed, else fails as storeCall. */
async function conditionalWrite<T>(
  tableName: string,
  operation: string,
  clusterId: string,
  run: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await storeCall(tableName, operation, clusterId, run);
  } catch (error) {
    if (error instanceof StoreError && error.cause instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/** Runs one conditional DynamoDB write: true when written, false when its condition failed, else fails as storeCall. */
async function conditionalCall(
  tableName: string,
  operation: string,
  clusterId: string,
  run: () => Promise<unknown>,
): Promise<boolean> {
  return (await conditionalWrite(tableName, operation, clusterId, async () => ({ output: await run() }))) !== undefined;
}

export {
  CONTENT_HASH_PATTERN,
  toItem,
  itemKey,
  fieldsOf,
  integerField,
  stringField,
  checkedClusterId,
  isoTime,
  storeCall,
  conditionalWrite,
  conditionalCall,
};
export type { ClusterTable, Item, ItemFields };
