/** The stamp's digests and key: where the key comes from, how often it is read, and what a MAC check refuses. */
import type { GetSecretValueCommandOutput } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/errors/index.ts';
import type { SecretReader } from '../../lib/secrets/index.ts';
import {
  createStampSource,
  generateStampKey,
  KEYLESS_STAMPS,
  keyedStamps,
  readStampKeyConfig,
} from '../../lib/stamp/index.ts';

const KEY = 'StampKeyOfTheStampTest0123456789abcdefghijklmnopqrstuvwxyzABCDE';
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:StampKeySecret-AbCdEf';

/** A Secrets Manager double answering each call from `answers` in turn (an Error is thrown), counting the calls. */
function secretsAnswering(...answers: (string | Error)[]): SecretReader & { readonly calls: () => number } {
  let calls = 0;
  return {
    calls: () => calls,
    send(): Promise<GetSecretValueCommandOutput> {
      const answer = answers[Math.min(calls, answers.length - 1)]!;
      calls += 1;
      return answer instanceof Error
        ? Promise.reject(answer)
        : Promise.resolve({ SecretString: answer, $metadata: {} });
    },
  };
}

describe('the stamp key setting', () => {
  it.each([
    ['a secret', { STAMP_KEY_SECRET_ARN: ARN }, { kind: 'secret', secretArn: ARN }],
    ['a literal key', { STAMP_KEY: KEY }, { kind: 'literal', key: KEY }],
    ['neither, which is no stamps', {}, undefined],
  ])('reads %s', (_name, env, expected) => {
    expect(readStampKeyConfig(env)).toEqual(expected);
  });

  it.each([
    [
      'both variables',
      { STAMP_KEY_SECRET_ARN: ARN, STAMP_KEY: KEY },
      'STAMP_KEY_SECRET_ARN and STAMP_KEY are both set; expected at most one of them',
    ],
    [
      "an ARN that is not a secret's",
      { STAMP_KEY_SECRET_ARN: 'arn:aws:s3:::bucket' },
      'STAMP_KEY_SECRET_ARN is "arn:aws:s3:::bucket"; expected',
    ],
    [
      'a key too short to be one',
      { STAMP_KEY: 'short' },
      'STAMP_KEY holds a stamp key of 5 characters that is not of the form',
    ],
  ])('refuses %s, naming the variable', (_name, env, message) => {
    expect(() => readStampKeyConfig(env)).toThrow(ConfigurationError);
    expect(() => readStampKeyConfig(env)).toThrow(message);
  });
});

describe('the stamp key read from its secret', () => {
  it('is read once (a call per stage), shared by concurrent reviews, and kept until its refresh is due', async () => {
    let now = 0;
    const secrets = secretsAnswering(KEY);
    const source = createStampSource(
      { kind: 'secret', secretArn: ARN, refreshSeconds: 300 },
      { secrets, clock: () => now },
    );

    const [first, second] = await Promise.all([source(), source()]);
    now = 299_000;
    await source();
    expect(secrets.calls()).toBe(3); // AWSCURRENT, AWSPREVIOUS, AWSPENDING
    now = 300_000;
    await source();

    expect(secrets.calls()).toBe(6);
    expect(first).toBe(second);
    expect(first.key!.sign('sum')).toBe(keyedStamps(KEY).key!.sign('sum'));
  });

  it('rejects naming the secret when the read fails, and reads again once its backoff has passed', async () => {
    let now = 0;
    const secrets = secretsAnswering(new Error('connect ETIMEDOUT'), KEY);
    const source = createStampSource(
      { kind: 'secret', secretArn: ARN },
      { secrets, clock: () => now, random: () => 0 },
    );

    await expect(source()).rejects.toThrow(
      `reading the stamp key from secret ${ARN} (AWSCURRENT) failed: connect ETIMEDOUT`,
    );
    now = 400;
    await expect(source()).rejects.toThrow(ConfigurationError);
    expect(secrets.calls()).toBe(3);
    now = 500;
    await expect(source()).resolves.toHaveProperty('key');
    expect(secrets.calls()).toBe(6);
  });

  it('backs off reads that keep failing: 100 reviews of a cold container make a handful of calls', async () => {
    let now = 0;
    const secrets = secretsAnswering(new Error('AccessDeniedException'));
    const source = createStampSource(
      { kind: 'secret', secretArn: ARN },
      { secrets, clock: () => now, random: () => 0.5 },
    );

    for (let review = 0; review < 100; review += 1) {
      await expect(source()).rejects.toThrow(ARN);
      now += 100;
    }

    // 10 s of reviews, one each 100 ms: reads at 0, 0.8, 2.3 and 5.3 s (waits of 0.75, 1.5 and 3 s; the next is 6 s),
    // each a call per stage.
    expect(secrets.calls()).toBe(4 * 3);
  });

  it('stops waiting for a silent secret at its deadline, naming the secret and the deadline', async () => {
    const silent: SecretReader = { send: () => new Promise(() => {}) };
    const source = createStampSource({ kind: 'secret', secretArn: ARN }, { secrets: silent, deadlineMs: 50 });

    await expect(source()).rejects.toThrow(`reading the stamp key from secret ${ARN} gave no answer within 50 ms`);
  });

  it('rejects a secret that holds no key, without repeating what it holds', async () => {
    const source = createStampSource({ kind: 'secret', secretArn: ARN }, { secrets: secretsAnswering('not-a-key') });

    await expect(source()).rejects.toThrow(
      `secret ${ARN} (AWSCURRENT) holds a stamp key of 9 characters that is not of the form`,
    );
    await expect(source()).rejects.not.toThrow('not-a-key');
  });
});

describe('the stamp digests', () => {
  it('check a MAC made under the same key, and refuse one of another key, another sum or another length', () => {
    const { key } = keyedStamps(KEY);
    const mac = key!.sign('sum');

    expect(key!.verify('sum', mac)).toBe(true);
    expect(key!.verify('other sum', mac)).toBe(false);
    expect(keyedStamps(generateStampKey()).key!.verify('sum', mac)).toBe(false);
    expect(key!.verify('sum', mac.slice(1))).toBe(false);
  });

  it('sign under the first key of a set and check a MAC of any key of it, and of no other', () => {
    const [current, previous, other] = [generateStampKey(), generateStampKey(), generateStampKey()];
    const { key } = keyedStamps(current, [previous]);

    expect(key!.sign('sum')).toBe(keyedStamps(current).key!.sign('sum'));
    expect(key!.verify('sum', keyedStamps(current).key!.sign('sum'))).toBe(true);
    expect(key!.verify('sum', keyedStamps(previous).key!.sign('sum'))).toBe(true);
    expect(key!.verify('sum', keyedStamps(other).key!.sign('sum'))).toBe(false);
    expect(key!.verify('other sum', keyedStamps(previous).key!.sign('sum'))).toBe(false);
  });

  it('give sums without the key, and no MAC', () => {
    expect(KEYLESS_STAMPS.sum('text')).toBe(keyedStamps(KEY).sum('text'));
    expect(KEYLESS_STAMPS.key).toBeUndefined();
  });

  it('generate keys of the accepted form, a new one each time', () => {
    const key = generateStampKey();

    expect(readStampKeyConfig({ STAMP_KEY: key })).toEqual({ kind: 'literal', key });
    expect(generateStampKey()).not.toBe(key);
  });
});
