import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { createTokenSource, generateToken } from '../../lib/endpoint/index.ts';
import { startFakeSecretsManager } from './support.ts';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation/webhook-token-AbCdEf';
const TOKEN = 'secret-token-0123456789abcdefghijklmnop';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function fakeWith(secret: string) {
  const fake = await startFakeSecretsManager(new Map([[SECRET_ARN, secret]]));
  cleanups.push(fake.close);
  return fake;
}

describe('createTokenSource', () => {
  it('returns a literal token as given', async () => {
    await expect(createTokenSource({ kind: 'literal', token: TOKEN })()).resolves.toEqual([TOKEN]);
  });

  it('reads a secret once per refresh interval, AWSCURRENT and AWSPREVIOUS in one round', async () => {
    const fake = await fakeWith(TOKEN);
    const clock = { now: 0 };
    const source = createTokenSource(
      { kind: 'secret', secretArn: SECRET_ARN, refreshSeconds: 300 },
      { secrets: fake.client(), clock: () => clock.now },
    );

    const tokens = [await source(), await source(), await source()];
    clock.now = 299_999;
    await source();

    expect(tokens).toEqual([[TOKEN], [TOKEN], [TOKEN]]);
    expect(fake.calls()).toBe(2);
  });

  it('reads the token field of a JSON key/value secret', async () => {
    const fake = await fakeWith(JSON.stringify({ token: TOKEN }));
    const source = createTokenSource({ kind: 'secret', secretArn: SECRET_ARN }, { secrets: fake.client() });

    await expect(source()).resolves.toEqual([TOKEN]);
  });

  it('answers a failed first read with its failure until the backoff has passed, then reads the secret again', async () => {
    const fake = await fakeWith(TOKEN);
    const clock = { now: 0 };
    const source = createTokenSource(
      { kind: 'secret', secretArn: SECRET_ARN },
      { secrets: fake.client(), clock: () => clock.now },
    );
    fake.fail(true);
    await expect(source()).rejects.toThrow(ConfigurationError);
    fake.fail(false);

    await expect(source()).rejects.toThrow(`reading the webhook token from secret ${SECRET_ARN} (AWSCURRENT) failed`);
    expect(fake.calls()).toBe(2);
    clock.now += 1_000;
    await expect(source()).resolves.toEqual([TOKEN]);
  });

  it('rejects naming the secret when the secret does not exist', async () => {
    const fake = await startFakeSecretsManager(new Map());
    cleanups.push(fake.close);
    const source = createTokenSource({ kind: 'secret', secretArn: SECRET_ARN }, { secrets: fake.client() });

    await expect(source()).rejects.toThrow(`reading the webhook token from secret ${SECRET_ARN} (AWSCURRENT) failed`);
  });

  it('rejects a secret that is too short to be a token, without echoing it', async () => {
    const fake = await fakeWith('hunter2');
    const source = createTokenSource({ kind: 'secret', secretArn: SECRET_ARN }, { secrets: fake.client() });

    await expect(source()).rejects.toThrow(
      `secret ${SECRET_ARN} (AWSCURRENT) holds a token of 7 characters that is not of the form`,
    );
    await expect(source()).rejects.not.toThrow(/hunter2/);
  });
});

describe('generateToken', () => {
  it('makes 43 URL-safe characters, different each time', () => {
    const tokens = new Set(Array.from({ length: 20 }, () => generateToken()));

    expect(tokens.size).toBe(20);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
