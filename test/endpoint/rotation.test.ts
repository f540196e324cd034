import { afterEach, describe, expect, it } from 'vitest';
import {
  createAdmissionHandler,
  createTokenSource,
  ignoredTokenVersionReporter,
  tokenRefreshFailureReporter,
} from '../../lib/endpoint/index.ts';
import { createTokenComparer } from '../../lib/endpoint/token.ts';
import type { ConfigurationError } from '../../lib/errors/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import {
  admissionEvent,
  annotatingRules,
  recordingLogger,
  recordingMetrics,
  startFakeSecretsManager,
} from './support.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation/webhook-token-AbCdEf';
const OLD = 'old-token-0123456789abcdefghijklmnopqrstuv';
const NEW = 'new-token-0123456789abcdefghijklmnopqrstuv';
const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const MINUTE = 60_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function rotatingSecret() {
  const fake = await startFakeSecretsManager(new Map([[SECRET_ARN, OLD]]));
  cleanups.push(fake.close);
  const clock = { now: 0 };
  const failures: ConfigurationError[] = [];
  const source = createTokenSource(
    { kind: 'secret', secretArn: SECRET_ARN, refreshSeconds: 300 },
    { secrets: fake.client(), clock: () => clock.now, onRefreshFailure: (error) => failures.push(error) },
  );
  return { fake, clock, failures, source };
}

function handlerWith(source: ReturnType<typeof createTokenSource>, logger = recordingLogger()) {
  return createAdmissionHandler({
    rules: annotatingRules(),
    acceptedTokens: source,
    logger,
    metrics: recordingMetrics(),
  });
}

describe('token rotation through the admission handler', () => {
  it('answers the old and the new token throughout the overlap, and 403s the old one after its removal and one refresh', async () => {
    const { fake, clock, source } = await rotatingSecret();
    const handler = handlerWith(source);
    const status = async (token: string) => (await handler(admissionEvent({ body: REVIEW, token }))).statusCode;
    const stream: { at: number; token: string; status: number | undefined }[] = [];
    const send = async (token: string) => stream.push({ at: clock.now, token, status: await status(token) });

    await send(OLD);
    clock.now = 1 * MINUTE;
    fake.rotate(SECRET_ARN, NEW); // put-secret-value: NEW is AWSCURRENT, OLD is AWSPREVIOUS
    // The API servers switch to the new configuration one by one: both tokens arrive, interleaved.
    for (let minute = 1; minute <= 12; minute += 1) {
      clock.now = minute * MINUTE;
      await send(minute % 2 === 0 ? OLD : NEW);
      await send(minute % 2 === 0 ? NEW : OLD);
    }
    expect(stream.filter((entry) => entry.status !== 200)).toEqual([]);

    fake.removePrevious(SECRET_ARN);
    clock.now += 5 * MINUTE; // one refresh interval
    await expect(status(OLD)).resolves.toBe(403);
    await expect(status(NEW)).resolves.toBe(200);
  });

  it('accepts a token rotated a moment ago on its first request, before the refresh is due', async () => {
    const { fake, clock, source } = await rotatingSecret();
    const handler = handlerWith(source);
    await handler(admissionEvent({ body: REVIEW, token: OLD }));

    fake.rotate(SECRET_ARN, NEW);
    clock.now = 11_000;

    expect((await handler(admissionEvent({ body: REVIEW, token: NEW }))).statusCode).toBe(200);
  });

  it('re-reads on unknown tokens at most once per 10 seconds', async () => {
    const { fake, clock, source } = await rotatingSecret();
    const handler = handlerWith(source);
    await handler(admissionEvent({ body: REVIEW, token: OLD }));
    const callsAfterFirstRead = fake.calls();

    clock.now = 11_000;
    for (let attempt = 0; attempt < 20; attempt += 1)
      await handler(admissionEvent({ body: REVIEW, token: `wrong-${attempt}-0123456789abcdefghijklmnop` }));

    // One early refresh (two GetSecretValue calls: AWSCURRENT and AWSPREVIOUS) for twenty wrong tokens.
    expect(fake.calls() - callsAfterFirstRead).toBe(2);
  });
});

describe('a failed refresh', () => {
  it('keeps the last good tokens, reports the failure, and backs off before reading again rather than on every call', async () => {
    const { fake, clock, failures, source } = await rotatingSecret();
    await source();
    fake.fail(true);
    clock.now = 5 * MINUTE;

    await expect(source()).resolves.toEqual([OLD]);
    const callsAfterFailure = fake.calls();
    clock.now += 499;
    await expect(source()).resolves.toEqual([OLD]);

    expect(failures.map((error) => error.name)).toEqual(['ConfigurationError']);
    expect(failures[0]?.message).toContain(`reading the webhook token from secret ${SECRET_ARN}`);
    expect(fake.calls()).toBe(callsAfterFailure);

    fake.fail(false);
    fake.rotate(SECRET_ARN, NEW);
    clock.now += 501;
    await expect(source()).resolves.toEqual([NEW, OLD]);
  });

  it('never puts a token in the reported error', async () => {
    const { fake, clock, failures, source } = await rotatingSecret();
    await source();
    fake.rotate(SECRET_ARN, 'too-short');
    clock.now = 5 * MINUTE;

    await expect(source()).resolves.toEqual([OLD]);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.message).not.toContain('too-short');
    expect(failures[0]?.message).not.toContain(OLD);
  });
});

describe('createTokenComparer', () => {
  const matches = createTokenComparer();

  it.each([
    { presented: OLD, accepted: [NEW, OLD], expected: true },
    { presented: NEW, accepted: [NEW, OLD], expected: true },
    { presented: NEW, accepted: [OLD], expected: false },
    { presented: 'x', accepted: [NEW, OLD], expected: false },
    { presented: undefined, accepted: [NEW], expected: false },
    { presented: '', accepted: [NEW], expected: false },
  ])('says $expected for $presented against $accepted', ({ presented, accepted, expected }) => {
    expect(matches(presented, accepted)).toBe(expected);
  });
});

describe('a rotation mistake', () => {
  const BAD = 'not-a-token';

  /** A handler reading the fake secret, logging as the Lambda does. */
  function deployedContainer(fake: Awaited<ReturnType<typeof startFakeSecretsManager>>) {
    const clock = { now: 0 };
    const logger = recordingLogger();
    const metrics = recordingMetrics();
    const source = createTokenSource(
      { kind: 'secret', secretArn: SECRET_ARN, refreshSeconds: 300 },
      {
        secrets: fake.client(),
        clock: () => clock.now,
        onRefreshFailure: tokenRefreshFailureReporter(logger, metrics),
        onIgnoredVersion: ignoredTokenVersionReporter(logger),
      },
    );
    const handler = handlerWith(source, logger);
    return {
      clock,
      logger,
      metrics,
      status: async (token: string) => (await handler(admissionEvent({ body: REVIEW, token }))).statusCode,
    };
  }

  async function secretHolding(value: string) {
    const fake = await startFakeSecretsManager(new Map([[SECRET_ARN, value]]));
    cleanups.push(fake.close);
    return fake;
  }

  it('accepts the new token on a warm container once a fixed put-secret-value turned the malformed one into AWSPREVIOUS', async () => {
    const fake = await secretHolding(OLD);
    const container = deployedContainer(fake);
    await expect(container.status(OLD)).resolves.toBe(200);

    fake.rotate(SECRET_ARN, BAD); // step 1 with a badly formed token
    container.clock.now = 5 * MINUTE;
    await expect(container.status(OLD)).resolves.toBe(200);
    fake.rotate(SECRET_ARN, NEW); // the fix: NEW is AWSCURRENT, BAD is AWSPREVIOUS
    container.clock.now += MINUTE;

    await expect(container.status(NEW)).resolves.toBe(200);
    expect(container.logger.records.filter((record) => record.level === 'warn')).toEqual([
      {
        level: 'warn',
        message: 'webhook token refresh failed; keeping the last tokens',
        fields: expect.objectContaining({
          errorMessage: expect.stringContaining(
            `secret ${SECRET_ARN} (AWSCURRENT) holds a token of 11 characters`,
          ) as unknown,
        }) as unknown,
      },
      {
        level: 'warn',
        message: 'webhook token version ignored; accepting AWSCURRENT alone',
        fields: expect.objectContaining({ versionStage: 'AWSPREVIOUS' }) as unknown,
      },
    ]);
  });

  it('accepts the current token on a cold container whose AWSPREVIOUS is malformed', async () => {
    const fake = await secretHolding(BAD);
    fake.rotate(SECRET_ARN, NEW);
    const container = deployedContainer(fake);

    await expect(container.status(NEW)).resolves.toBe(200);
    expect(container.logger.records[0]).toMatchObject({
      level: 'warn',
      fields: {
        versionStage: 'AWSPREVIOUS',
        errorMessage: expect.stringContaining(
          `secret ${SECRET_ARN} (AWSPREVIOUS) holds a token of 11 characters`,
        ) as unknown,
      },
    });
  });

  it('answers 500 on a cold container whose AWSCURRENT is malformed, naming the stage in the log', async () => {
    const fake = await secretHolding(BAD);
    const container = deployedContainer(fake);

    await expect(container.status(NEW)).resolves.toBe(500);
    expect(container.logger.records[0]?.fields).toMatchObject({
      reason: 'webhook token unavailable',
      errorMessage: expect.stringContaining(
        `secret ${SECRET_ARN} (AWSCURRENT) holds a token of 11 characters`,
      ) as unknown,
    });
  });

  it('costs a cold container whose secret cannot be read a few Secrets Manager calls for 100 wrong-token requests, not one per request', async () => {
    const fake = await secretHolding(OLD);
    fake.fail(true);
    const container = deployedContainer(fake);

    const statuses = new Set<number | undefined>();
    for (let request = 0; request < 100; request += 1) {
      statuses.add(await container.status(`wrong-${request}-0123456789abcdefghijklmnop`));
      container.clock.now += 100;
    }

    // 10 s of requests: reads at most at 0, 0.5, 1.5, 3.5 and 7.5 s, whatever the jitter draws; two calls each.
    expect(statuses).toEqual(new Set([500]));
    expect(fake.calls()).toBeGreaterThanOrEqual(2);
    expect(fake.calls()).toBeLessThanOrEqual(10);
  });
});
