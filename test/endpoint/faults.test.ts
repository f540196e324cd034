import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAdmissionHandler, createTokenSource, tokenRefreshFailureReporter } from '../../lib/endpoint/index.ts';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { secretReaderFor } from '../../lib/secrets/index.ts';
import { createDynamoClient, type SnapshotStore } from '../../lib/store/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import { parseAnswer } from '../support/reviews.ts';
import {
  closedEndpoint,
  freshClusterId,
  startLink,
  type Link,
  snapshotsOf,
  placementsOf,
  type PerCluster,
} from '../store/support.ts';
import {
  TOKEN,
  admissionEvent,
  annotatingRules,
  exampleContent,
  recordingLogger,
  recordingMetrics,
  ruleCache,
  startFakeSecretsManager,
  useSecretsManagerAt,
} from './support.ts';
import { useTestTable } from '../support/dynamo.ts';

const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const START = Date.parse('2026-12-01T10:00:00.000Z');
const GENERIC_500 = { error: 'InternalError', message: 'the webhook could not evaluate the request' };

const table = useTestTable();
let publisher: PerCluster<SnapshotStore>;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  publisher = snapshotsOf({ client: table.client, tableName: table.tableName });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A client that fails fast: one attempt, short timeouts (unless told to wait). */
function readerClient(endpoint: string, requestTimeoutMs = 1_000): DynamoDBClient {
  const client = createDynamoClient({ endpoint, maxAttempts: 1, connectionTimeoutMs: 300, requestTimeoutMs });
  cleanups.push(() => client.destroy());
  return client;
}

/** A handler whose rules are read through `endpoint`, with a clock the test moves; `deadlineMs` bounds each wait for them. */
function handlerReadingFrom(
  endpoint: string,
  clusterId: string,
  options: { readonly deadlineMs?: number; readonly requestTimeoutMs?: number } = {},
) {
  let now = START;
  const logger = recordingLogger();
  const metrics = recordingMetrics();
  const client = readerClient(endpoint, options.requestTimeoutMs);
  const stores = {
    snapshots: snapshotsOf({ client, tableName: table.tableName }),
    placements: placementsOf({ client, tableName: table.tableName }),
  };
  const cache = ruleCache(stores, clusterId, {
    clock: () => now,
    refreshSeconds: 30,
    maxStaleSeconds: 300,
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    onRefreshFailure: (error) =>
      logger.warn('rule refresh failed; serving the last rules and placements', { errorMessage: error.message }),
  });
  const handler = createAdmissionHandler({
    rules: cache,
    acceptedTokens: () => Promise.resolve([TOKEN]),
    logger,
    metrics,
  });
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
  await publisher(clusterId).publish(await exampleContent());
  const link = await startLink(table.endpoint);
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
    const harness = handlerReadingFrom(table.endpoint, freshClusterId());

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
        fields: expect.objectContaining({
          status: 500,
          decision: 'error',
          reason: 'rules unavailable',
          errorName: 'StoreError',
        }) as unknown,
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
      acceptedTokens: () =>
        Promise.reject(new ConfigurationError('reading the webhook token from secret arn:... failed')),
      logger,
      metrics: recordingMetrics(),
    });

    const result = await handler(admissionEvent({ body: REVIEW }));

    expect(result.statusCode).toBe(500);
    expect(logger.records[0]?.fields).toMatchObject({
      reason: 'webhook token unavailable',
      errorName: 'ConfigurationError',
    });
  });
});

// A dependency that accepts the connection, reads the request and never answers: a proxy gone silent. The clients
// below would wait 20 s for it; the deadline is short so that only it can end a request sooner.
const SILENT_CLIENT_TIMEOUT_MS = 20_000;
const DEADLINE_MS = 100;

describe('createAdmissionHandler while DynamoDB is silent', () => {
  it('answers a warm container from the last good rules at the deadline, stale, counted and logged', async () => {
    const clusterId = freshClusterId();
    await publisher(clusterId).publish(await exampleContent());
    const link = await startLink(table.endpoint);
    cleanups.push(() => link.close());
    const harness = handlerReadingFrom(link.endpoint, clusterId, {
      deadlineMs: DEADLINE_MS,
      requestTimeoutMs: SILENT_CLIENT_TIMEOUT_MS,
    });
    expect((await harness.admit()).statusCode).toBe(200);
    link.hang();
    harness.advanceSeconds(31);

    const result = await harness.admit();

    expect(result.statusCode).toBe(200);
    expect(parseAnswer(result.body ?? '').response.patchType).toBe('JSONPatch');
    // The answer came while the refresh's reads were still unanswered.
    expect(link.held()).toBeGreaterThan(0);
    expect(harness.metrics.totals.get('StaleRules')).toBe(1);
    expect(
      harness.logger.records.map((record) => [
        record.level,
        record.message,
        record.fields['errorMessage'] ?? record.fields['stale'],
      ]),
    ).toEqual([
      ['info', 'admission', false],
      [
        'warn',
        'rule refresh failed; serving the last rules and placements',
        `reading the rule snapshot of cluster "${clusterId}" gave no answer within ${DEADLINE_MS} ms`,
      ],
      ['info', 'admission', true],
    ]);
  });

  it('answers 500 on a cold start at the deadline, and 500 at once during the backoff without another read', async () => {
    const link = await startLink(table.endpoint);
    cleanups.push(() => link.close());
    link.hang();
    const harness = handlerReadingFrom(link.endpoint, freshClusterId(), {
      deadlineMs: DEADLINE_MS,
      requestTimeoutMs: SILENT_CLIENT_TIMEOUT_MS,
    });

    const first = await harness.admit();
    const heldAfterFirst = link.held();
    const second = await harness.admit();

    expect([first.statusCode, second.statusCode]).toEqual([500, 500]);
    expect(heldAfterFirst).toBeGreaterThan(0);
    expect(link.held()).toBe(heldAfterFirst);
    expect(harness.metrics.totals.get('Errors')).toBe(2);
    expect(harness.logger.records[0]?.fields).toMatchObject({
      reason: 'rules unavailable',
      errorMessage: expect.stringContaining(`gave no answer within ${DEADLINE_MS} ms`) as unknown,
    });
  });
});

describe('createAdmissionHandler while Secrets Manager is silent', () => {
  const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation/webhook-token-AbCdEf';

  afterEach(() => {
    vi.unstubAllEnvs();
  });

  /** A handler reading the token through a link to a fake Secrets Manager with the product's own client, on a clock the test moves. */
  async function readingTokensThroughLink() {
    const fake = await startFakeSecretsManager(new Map([[SECRET_ARN, TOKEN]]));
    const link = await startLink(fake.url);
    cleanups.push(fake.close, () => link.close());
    useSecretsManagerAt(link.endpoint);
    const clock = { now: START };
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    const acceptedTokens = createTokenSource(
      { kind: 'secret', secretArn: SECRET_ARN, refreshSeconds: 300 },
      {
        secrets: secretReaderFor(SECRET_ARN, { maxAttempts: 1, requestTimeoutMs: SILENT_CLIENT_TIMEOUT_MS }),
        deadlineMs: DEADLINE_MS,
        clock: () => clock.now,
        onRefreshFailure: tokenRefreshFailureReporter(logger, metrics),
      },
    );
    const handler = createAdmissionHandler({ rules: annotatingRules(), acceptedTokens, logger, metrics });
    return {
      link,
      clock,
      logger,
      metrics,
      admit: async () => (await handler(admissionEvent({ body: REVIEW }))).statusCode,
    };
  }

  it('accepts a valid token at the deadline, counting and logging the failed refresh', async () => {
    const container = await readingTokensThroughLink();
    await expect(container.admit()).resolves.toBe(200);
    container.link.hang();
    container.clock.now += 300_000;

    await expect(container.admit()).resolves.toBe(200);

    expect(container.link.held()).toBeGreaterThan(0);
    expect(container.metrics.totals.get('TokenRefreshFailures')).toBe(1);
    expect(container.logger.records.find((record) => record.level === 'warn')?.fields).toMatchObject({
      errorMessage: `reading the webhook token from secret ${SECRET_ARN} gave no answer within ${DEADLINE_MS} ms`,
    });
  });

  it('answers 500 on a cold start at the deadline, never letting a request through', async () => {
    const container = await readingTokensThroughLink();
    container.link.hang();

    await expect(container.admit()).resolves.toBe(500);

    expect(container.link.held()).toBeGreaterThan(0);
    expect(container.logger.records[0]?.fields).toMatchObject({ reason: 'webhook token unavailable' });
  });
});
