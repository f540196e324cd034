/** The per-workload counters that number Diversity Pods (RULES_TABLE_LAYOUT.diversityCounters). */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { StoreError } from '../errors/index.ts';
import { checkedClusterId, fieldsOf, integerField, itemKey, storeCall, toItem, type ClusterTable } from './items.ts';
import { diversityCounterSortKey } from './layout.ts';

/** The Diversity counters of one cluster. */
interface DiversityCounterStore {
  /**
   * The next 0-based number of the counter `key` (a workload and its revision, diversityCounterKey), taken in one
   * atomic UpdateItem: concurrent callers never get the same number. `abortSignal` ends the call early (a deadline);
   * the counter may still have moved on, if the request reached the table.
   */
  next(key: string, abortSignal?: AbortSignal): Promise<number>;
}

/** The counter store bound to one cluster's table. */
function createDiversityCounterStore(table: ClusterTable): DiversityCounterStore {
  const { client, tableName, clusterId } = table;
  return {
    async next(key, abortSignal) {
      checkedClusterId(clusterId);
      const { Attributes: attributes } = await storeCall(
        tableName,
        'UpdateItem of a Diversity counter',
        clusterId,
        () =>
          client.send(
            new UpdateItemCommand({
              TableName: tableName,
              Key: itemKey(clusterId, diversityCounterSortKey(key)),
              // ADD creates the attribute at 0 when absent: the first Pod of a revision gets 0.
              UpdateExpression: 'ADD #n :one',
              ExpressionAttributeNames: { '#n': 'n' },
              ExpressionAttributeValues: toItem({ ':one': 1 }),
              ReturnValues: 'UPDATED_NEW',
            }),
            abortSignal === undefined ? {} : { abortSignal },
          ),
      );
      const count = attributes === undefined ? undefined : integerField(fieldsOf(attributes), 'n');
      if (count === undefined || count < 1) {
        throw new StoreError(
          `the Diversity counter "${key}" of cluster "${clusterId}" in table "${tableName}" is unusable: n must be a number attribute holding a positive integer`,
          { context: { tableName, clusterId, counter: key } },
        );
      }
      return count - 1;
    },
  };
}

export { createDiversityCounterStore };
export type { DiversityCounterStore };
