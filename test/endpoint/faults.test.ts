import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAdmissionHandler } from '../../lib/endpoint/index.ts';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { createDynamoClient, createPlacementStore, createSnapshotStore, type SnapshotStore } from '../../lib/store/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import { parseAnswer } from '../support/reviews.ts';
import {
  closedEndpoint,
  createFreshTable,
  freshClusterId,
  startLink,
  startTestDynamo,
  type Link,
  type TestDynamo,
} from '../store/support.ts';
import { TOKEN, admissionEvent, exampleContent, recordingLogger, recordingMetrics, ruleCache } from './support.ts';

const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const START = Date.parse('2026-12-01T10:00:00.000Z');
const GENERIC_500 = { error: 'InternalError', message: 'the webhook could not evaluate the request' };

let dynamo: TestDynamo;
let tableName: string;
let publisherClient: DynamoDBClient;
let publisher: SnapshotStore;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  dynamo = await startTestDynamo();
  tableName = await createFreshTable(dynamo.endpoint);
  publisherClient = createDynamoClient({ endpoint: dynamo.endpoint });
  publisher = createSnapshotStore({ client: publisherClient, tableName });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

afterAll(async () => {
  publisherClient.destroy();
  await dynamo.close();
});

/** A client that fails fast: one attempt, short timeouts. */
function readerClient(endpoint: string): DynamoDBClient {
  const client = createDynamoClient({ endpoint, maxAttempts: 1, connectionTimeoutMs: 300, requestTimeoutMs: 1_000 });
  cleanups.push(() => client.destroy());
  return client;
}

/** A handler whose rules are read through `endpoint`, with a clock the test moves. */
function handlerReadingFrom(endpoint: string, clusterId: string) {
  let now = START;
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const client = readerClient(endpoint);
  const stores = { snapshots: createSnapshotStore({ client, tableName }), placements: createPlacementStore({ client, tableName }) };
  const cache = ruleCache(stores, clusterId, { clock: () => now, refreshSeconds: 30, maxStaleSeconds: 300 });
  const handler = createAdmissionHandler({ rules: cache, acceptedTokens: () => Promise.resolve([TOKEN]), logger, metrics });
  return {
    logger,
    metrics,
    admit: () => handler(admissionEvent({ body: REVIEW })),
    advanceSeconds: (seconds: number) => {
      now += seconds * 1000;
    },
  };
}

async function cutLinkAfterGoodRead(): Promise<{ harness: ReturnType<typeof handlerReadingFrom>; link: Link }> {
  const clusterId = freshClusterId();
  await publisher.publish(clusterId, await exampleContent());
  const link = await startLink(dynamo.endpoint);
  cleanups.push(() => link.close());
  const harness = handlerReadingFrom(link.endpoint, clusterId);
  expect((await harness.admit()).statusCode).toBe(200);
  link.cut();
  return { harness, link };
}

describe('createAdmissionHandler when rules cannot be read', () => {
  it('answers 500, never "allowed", when the store is down on a cold start', async () => {
    const harness = handlerReadingFrom(await closedEndpoint(), freshClusterId());

    const result = await harness.admit();

    expect(result.statusCode).toBe(500);
    expect(JSON.parse(result.body ?? '')).toEqual(GENERIC_500);
    expect(harness.metrics.totals.get('Errors')).toBe(1);
  });

  it('answers 500 when the store holds no snapshot for the cluster', async () => {
    const harness = handlerReadingFrom(dynamo.endpoint, freshClusterId());

    const result = await harness.admit();

    expect(result.statusCode).toBe(500);
  });

  it('logs the store failure by name and message, as decision error', async () => {
    const harness = handlerReadingFrom(await closedEndpoint(), freshClusterId());

    await harness.admit();

    expect(harness.logger.records).toEqual([
      {
        level: 'error',
        message: 'admission failed',
        fields: expect.objectContaining({ status: 500, decision: 'error', reason: 'rules unavailable', errorName: 'StoreError' }) as unknown,
      },
    ]);
  });

  it('serves the last rules marked stale when the store goes down after a good read', async () => {
    const { harness } = await cutLinkAfterGoodRead();
    harness.advanceSeconds(31);

    const result = await harness.admit();

    expect(result.statusCode).toBe(200);
    expect(parseAnswer(result.body ?? '').response.patchType).toBe('JSONPatch');
    expect(harness.metrics.totals.get('StaleRules')).toBe(1);
    expect(harness.logger.records.at(-1)?.fields).toMatchObject({ decision: 'mutated', stale: true });
  });

  it('answers 500 once the rules are older than the maximum staleness', async () => {
    const { harness } = await cutLinkAfterGoodRead();
    harness.advanceSeconds(301);

    const result = await harness.admit();

    expect(result.statusCode).toBe(500);
    expect(harness.metrics.totals.get('Errors')).toBe(1);
  });

  it('serves fresh rules again once the store is back', async () => {
    const { harness, link } = await cutLinkAfterGoodRead();
    harness.advanceSeconds(31);
    await harness.admit();
    link.restore();
    harness.advanceSeconds(31);

    await harness.admit();

    expect(harness.logger.records.at(-1)?.fields).toMatchObject({ stale: false });
  });
});

describe('createAdmissionHandler when the expected token cannot be read', () => {
  it('answers 500 rather than letting any request through', async () => {
    const logger = recordingLogger();
    const handler = createAdmissionHandler({
      rules: { get: () => Promise.reject(new Error('rules must not be read without a token')) },
      acceptedTokens: () => Promise.reject(new ConfigurationError('reading the webhook token from secret arn:... failed')),
      logger,
      metrics: recordingMetrics(),
    });

    const result = await handler(admissionEvent({ body: REVIEW }));

    expect(result.statusCode).toBe(500);
    expect(logger.records[0]?.fields).toMatchObject({ reason: 'webhook token unavailable', errorName: 'ConfigurationError' });
  });
});
