import { afterEach, describe, expect, it } from 'vitest';
import { validatePodMutation } from '../../lib/api/index.ts';
import { compileRuleSet } from '../../lib/engine/index.ts';
import { createAdmissionHandler, createTokenSource } from '../../lib/endpoint/index.ts';
import { createTokenComparer } from '../../lib/endpoint/token.ts';
import type { ConfigurationError } from '../../lib/errors/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import { admissionEvent, recordingLogger, recordingMetrics, startFakeSecretsManager } from './support.ts';

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

function handlerWith(source: ReturnType<typeof createTokenSource>) {
  const verdict = validatePodMutation({
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name: 'annotate' },
    spec: { enable: true, workloadSelector: { all: true }, mutationAdd: { annotations: { 'example.com/a': 'b' } } },
  });
  if (!verdict.valid) throw new Error('the rotation test rule must be valid');
  const snapshot = { value: compileRuleSet([verdict.rule]), version: 1, contentHash: 'sha256:test', syncedAt: '2026-12-01T10:00:00.000Z', ageSeconds: 1, stale: false };
  return createAdmissionHandler({ rules: { get: () => Promise.resolve(snapshot) }, acceptedTokens: source, logger: recordingLogger(), metrics: recordingMetrics() });
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
    for (let attempt = 0; attempt < 20; attempt += 1) await handler(admissionEvent({ body: REVIEW, token: `wrong-${attempt}-0123456789abcdefghijklmnop` }));

    // One early refresh (two GetSecretValue calls: AWSCURRENT and AWSPREVIOUS) for twenty wrong tokens.
    expect(fake.calls() - callsAfterFirstRead).toBe(2);
  });
});

describe('a failed refresh', () => {
  it('keeps the last good tokens, reports the failure, and retries after 30 seconds rather than on every call', async () => {
    const { fake, clock, failures, source } = await rotatingSecret();
    await source();
    fake.fail(true);
    clock.now = 5 * MINUTE;

    await expect(source()).resolves.toEqual([OLD]);
    const callsAfterFailure = fake.calls();
    clock.now += 29_000;
    await expect(source()).resolves.toEqual([OLD]);

    expect(failures.map((error) => error.name)).toEqual(['ConfigurationError']);
    expect(failures[0]?.message).toContain(`reading the webhook token from secret ${SECRET_ARN}`);
    expect(fake.calls()).toBe(callsAfterFailure);

    fake.fail(false);
    fake.rotate(SECRET_ARN, NEW);
    clock.now += 1_000;
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
