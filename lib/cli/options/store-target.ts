import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { MalformedInputError } from '../../errors/index.ts';
import { AWS_REGION, CLUSTER_ID, isHttpUrl, readAll, TABLE_NAME, type ValueRule } from '../../values/index.ts';
import { createDynamoClient, createSnapshotTable } from '../../store/index.ts';

/** The flags naming a rules table, as `sync` and `placement` take them. */
export const STORE_TARGET_OPTIONS = {
  table: { type: 'string' },
  'dynamodb-endpoint': { type: 'string' },
  'cluster-id': { type: 'string' },
  region: { type: 'string' },
} as const;

/** Where the rules table is: its name, endpoint and region, and the cluster id within it. */
export interface StoreTarget {
  readonly tableName: string;
  readonly clusterId: string;
  readonly endpoint?: string;
  readonly region?: string;
}

const DEFAULT_TABLE = 'podmutation-rules';
const DEFAULT_CLUSTER_ID = 'default';
// The forms readStoreConfig accepts for RULES_TABLE and CLUSTER_ID, checked here to name the flag.
function checked(value: string, rule: ValueRule, flag: string): string {
  if (!rule.pattern.test(value)) throw new MalformedInputError(`--${flag} is "${value}"; expected ${rule.form}`, { context: { flag: `--${flag}` } });
  return value;
}

function checkedEndpoint(value: string): string {
  if (!isHttpUrl(value)) {
    throw new MalformedInputError(`--dynamodb-endpoint is "${value}"; expected an http:// or https:// URL`, { context: { flag: '--dynamodb-endpoint' } });
  }
  return value;
}

/** Checks the store flags (defaults: table podmutation-rules, cluster id default); one error names every wrong flag. */
export function storeTarget(flags: Readonly<Record<string, unknown>>): StoreTarget {
  const text = (name: string) => (typeof flags[name] === 'string' ? flags[name] : undefined);
  const { tableName, clusterId, endpoint, region } = readAll(
    {
      tableName: () => checked(text('table') ?? DEFAULT_TABLE, TABLE_NAME, 'table'),
      clusterId: () => checked(text('cluster-id') ?? DEFAULT_CLUSTER_ID, CLUSTER_ID, 'cluster-id'),
      endpoint: () => optional(text('dynamodb-endpoint'), checkedEndpoint),
      region: () => optional(text('region'), (value) => checked(value, AWS_REGION, 'region')),
    },
    MalformedInputError,
  );
  return { tableName, clusterId, ...(endpoint === undefined ? {} : { endpoint }), ...(region === undefined ? {} : { region }) };
}

function optional(value: string | undefined, check: (value: string) => string): string | undefined {
  return value === undefined ? undefined : check(value);
}

/**
 * A DynamoDB client for the target. A local DynamoDB (an explicit endpoint) starts empty, so the table is created
 * there; in AWS the table belongs to the deployed stack and is never created here.
 */
export async function targetClient(target: StoreTarget): Promise<DynamoDBClient> {
  const client = createDynamoClient({
    ...(target.endpoint === undefined ? {} : { endpoint: target.endpoint }),
    ...(target.region === undefined ? {} : { region: target.region }),
  });
  if (target.endpoint !== undefined) {
    try {
      await createSnapshotTable(client, target.tableName);
    } catch (error) {
      client.destroy();
      throw error;
    }
  }
  return client;
}
