/** One DynamoDB for the tests: an endpoint (DYNAMODB_ENDPOINT when set, else dynalite in-process) and fresh tables on it. */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { startEmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { createDynamoClient, createSnapshotTable } from '../../lib/store/index.ts';

/** A DynamoDB endpoint for one test file: DYNAMODB_ENDPOINT when set, else dynalite started in-process. */
interface TestDynamo {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** Starts the endpoint of a test file (DynamoDB Local or any other given in DYNAMODB_ENDPOINT, else dynalite). */
async function startTestDynamo(): Promise<TestDynamo> {
  const external = process.env.DYNAMODB_ENDPOINT;
  if (external !== undefined && external !== '') return { endpoint: external, close: () => Promise.resolve() };
  return startEmbeddedDynamo();
}

/** Creates a table with a random name (so runs against a shared endpoint never collide) and returns its name. */
async function createFreshTable(endpoint: string): Promise<string> {
  const tableName = `podmutation-test-${randomUUID()}`;
  const client = createDynamoClient({ endpoint });
  await createSnapshotTable(client, tableName);
  client.destroy();
  return tableName;
}

/** The DynamoDB of the tests that `useTestTable` registers: read inside tests and hooks, not where it is declared. */
interface TestTable {
  readonly endpoint: string;
  /** A table made for these tests alone. */
  readonly tableName: string;
  /** A plain client of the endpoint, destroyed after the tests. */
  readonly client: DynamoDBClient;
}

/**
 * The endpoint, a fresh table and a client for the tests of the file or describe block it is called in: started in a
 * beforeAll registered by this call (so hooks registered after it see them), closed in an afterAll.
 */
function useTestTable(): TestTable {
  let opened: { readonly dynamo: TestDynamo; readonly tableName: string; readonly client: DynamoDBClient } | undefined;
  beforeAll(async () => {
    const dynamo = await startTestDynamo();
    opened = {
      dynamo,
      tableName: await createFreshTable(dynamo.endpoint),
      client: createDynamoClient({ endpoint: dynamo.endpoint }),
    };
  });
  afterAll(async () => {
    opened?.client.destroy();
    await opened?.dynamo.close();
    opened = undefined;
  });
  const current = () => {
    if (opened === undefined) throw new Error('the test table is read outside the tests that useTestTable serves');
    return opened;
  };
  return {
    get endpoint() {
      return current().dynamo.endpoint;
    },
    get tableName() {
      return current().tableName;
    },
    get client() {
      return current().client;
    },
  };
}

export { createFreshTable, startTestDynamo, useTestTable };
export type { TestDynamo, TestTable };
