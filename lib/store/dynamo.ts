/** The DynamoDB client and table adapter: connection settings and table creation. */
import { integerOption } from '../config/index.ts';
import {
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { StoreError } from '../errors/index.ts';
import { PARTITION_KEY, SORT_KEY } from './layout.ts';

/**
 * Connection settings; short timeouts and one attempt make "store down" fail fast.
 * @internal Exported for tests: the test support points the client at dynalite.
 */
interface DynamoClientOptions {
  /** A local DynamoDB (dynalite, DynamoDB Local); static dummy credentials are used with it. */
  readonly endpoint?: string;
  /** Defaults to us-east-1 with a local endpoint, else to the SDK's region chain (AWS_REGION in Lambda). */
  readonly region?: string;
  /** Attempts per call including the first (SDK default 3). */
  readonly maxAttempts?: number;
  /** Time to establish a connection, in milliseconds (default 1000). */
  readonly connectionTimeoutMs?: number;
  /** Time to wait for a response once connected, in milliseconds (default 3000); passing it fails the attempt with a TimeoutError. */
  readonly requestTimeoutMs?: number;
}

const LOCAL_REGION = 'us-east-1';
// DynamoDB Local partitions its data by access key and region, so every local client must use the same pair.
const LOCAL_ACCESS_KEY = 'local';
const TABLE_ACTIVE_MAX_WAIT_SECONDS = 120;

/** A DynamoDBClient for AWS, or for a local endpoint with dummy credentials; timeouts and attempts bounded. */
function createDynamoClient(options: DynamoClientOptions = {}): DynamoDBClient {
  const requestHandler = {
    connectionTimeout: integerOption(options.connectionTimeoutMs, 'DynamoDB client option connectionTimeoutMs', {
      fallback: 1_000,
      minimum: 1,
    }),
    requestTimeout: integerOption(options.requestTimeoutMs, 'DynamoDB client option requestTimeoutMs', {
      fallback: 3_000,
      minimum: 1,
    }),
    // Without it @smithy/node-http-handler only logs a warning when requestTimeout passes and keeps waiting.
    throwOnRequestTimeout: true,
  };
  const maxAttempts = integerOption(options.maxAttempts, 'DynamoDB client option maxAttempts', {
    fallback: 3,
    minimum: 1,
  });
  if (options.endpoint === undefined) {
    return new DynamoDBClient({
      ...(options.region === undefined ? {} : { region: options.region }),
      maxAttempts,
      requestHandler,
    });
  }
  return new DynamoDBClient({
    endpoint: options.endpoint,
    region: options.region ?? LOCAL_REGION,
    // A fresh object per client: the SDK tags the credentials object it is given.
    credentials: { accessKeyId: LOCAL_ACCESS_KEY, secretAccessKey: LOCAL_ACCESS_KEY },
    maxAttempts,
    requestHandler,
  });
}

/** Creates the rules table (pk S HASH, sk S RANGE, on demand) unless it exists, and waits until it is ACTIVE. */
async function createSnapshotTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: PARTITION_KEY, AttributeType: 'S' },
          { AttributeName: SORT_KEY, AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
          { AttributeName: SORT_KEY, KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) {
      throw new StoreError(`creating DynamoDB table "${tableName}" failed: ${(error as Error).message}`, {
        cause: error,
        context: { tableName },
      });
    }
  }
  try {
    await waitUntilTableExists(
      { client, maxWaitTime: TABLE_ACTIVE_MAX_WAIT_SECONDS, minDelay: 1 },
      { TableName: tableName },
    );
  } catch (error) {
    throw new StoreError(
      `DynamoDB table "${tableName}" did not become ACTIVE within ${TABLE_ACTIVE_MAX_WAIT_SECONDS} s`,
      { cause: error, context: { tableName } },
    );
  }
}

export { createDynamoClient, createSnapshotTable };
export type { DynamoClientOptions };
