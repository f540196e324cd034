/** Attribute reading and argument checks shared by the snapshot and placement adapters of one table. */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { MalformedInputError } from '../errors/index.ts';
import { CLUSTER_ID } from '../values/index.ts';

/** A DynamoDB item as the SDK returns it. */
type Item = Record<string, AttributeValue>;

const CONTENT_HASH_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** The integer in a number attribute, or undefined when the attribute is missing, not a number or not an integer. */
function integerAttribute(item: Item, name: string): number | undefined {
  const text = item[name]?.N;
  const value = text === undefined ? Number.NaN : Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export { CONTENT_HASH_PATTERN, integerAttribute, checkedClusterId, messageOf };
export type { Item };
