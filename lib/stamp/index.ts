/**
 * The stamp's digests on node:crypto, for the engine's stamps (lib/engine/stamp.ts): SHA-256 sums, which anyone can
 * check, and HMAC-SHA-256 under the stamp key, which only the webhook holds; and where that key comes from: a Secrets
 * Manager secret of its own in the deployed stack (never rotated, so no Pod is ever re-stamped for it), a literal for
 * local runs, a generated one for `podmutation serve`.
 */
import { createHmac, createSecretKey, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { optionalSetting, type Environment } from '../config/index.ts';
import type { StampDigest } from '../engine/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { createRefreshingValue } from '../refresh/index.ts';
import { readSecretString, SECRET_READ_BACKOFF, secretReaderFor, type SecretReader } from '../secrets/index.ts';
import { SECRET_ARN, WEBHOOK_TOKEN_FORM, WEBHOOK_TOKEN_PATTERN } from '../values/index.ts';

/** Where the stamp key is read from: a Secrets Manager secret (deployed) or a literal value (local runs). */
type StampKeyConfig =
  { readonly kind: 'secret'; readonly secretArn: string } | { readonly kind: 'literal'; readonly key: string };

/** The stamp's digests, once the key is read; rejects while it cannot be (the next call reads again). */
type StampSource = () => Promise<StampDigest>;

function sum(text: string): string {
  return hash('sha256', text, 'base64url');
}

/** Sums only: stamps are checked by their sum and written without a MAC (the CLI, the sync's report). */
const KEYLESS_STAMPS: StampDigest = Object.freeze({ sum });

/** The key if it has the accepted form (that of the webhook token: 32 to 256 base64url characters); `where` names its origin. */
function checkedStampKey(key: string, where: string): string {
  if (!WEBHOOK_TOKEN_PATTERN.test(key)) {
    // The value itself is never put in the message.
    throw new ConfigurationError(
      `${where} holds a stamp key of ${key.length} characters that is not of the form ${WEBHOOK_TOKEN_FORM}`,
      {
        context: { source: where },
      },
    );
  }
  return key;
}

/** Sums, and MACs under `key`: what the webhook stamps and checks with. */
function keyedStamps(key: string): StampDigest {
  // Imported once: an HMAC of a string key imports the key again on every call, on the path of every mutated Pod.
  const secret = createSecretKey(Buffer.from(key, 'utf8'));
  const sign = (text: string): string => createHmac('sha256', secret).update(text).digest('base64url');
  return Object.freeze({
    sum,
    key: Object.freeze({
      sign,
      verify(text: string, mac: string): boolean {
        const expected = Buffer.from(sign(text));
        const given = Buffer.from(mac);
        return given.length === expected.length && timingSafeEqual(given, expected);
      },
    }),
  });
}

/** A new random stamp key (32 bytes, base64url): `podmutation serve` and the osls offline profile. */
function generateStampKey(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Reads the stamp key's setting: STAMP_KEY_SECRET_ARN (a secret whose whole SecretString is the key) or STAMP_KEY (the
 * key itself, for local runs); neither is no stamps. Throws ConfigurationError naming the variable.
 */
function readStampKeyConfig(env: Environment): StampKeyConfig | undefined {
  const secretArn = optionalSetting(env, 'STAMP_KEY_SECRET_ARN');
  const key = optionalSetting(env, 'STAMP_KEY');
  if (secretArn !== undefined && key !== undefined) {
    throw new ConfigurationError('STAMP_KEY_SECRET_ARN and STAMP_KEY are both set; expected at most one of them', {
      context: { variable: 'STAMP_KEY' },
    });
  }
  if (secretArn !== undefined) {
    if (!SECRET_ARN.pattern.test(secretArn)) {
      throw new ConfigurationError(`STAMP_KEY_SECRET_ARN is "${secretArn}"; expected ${SECRET_ARN.form}`, {
        context: { variable: 'STAMP_KEY_SECRET_ARN' },
      });
    }
    return { kind: 'secret', secretArn };
  }
  return key === undefined ? undefined : { kind: 'literal', key: checkedStampKey(key, 'STAMP_KEY') };
}

/** What a stamp source reads with, and how long a review waits for it. */
interface StampSourceOptions {
  readonly secrets?: SecretReader;
  /** Longest a review waits for the read (lib/refresh); without it, until the client's own timeouts end it. */
  readonly deadlineMs?: number;
  readonly clock?: () => number;
  readonly random?: () => number;
}

/**
 * The stamp's digests under the configured key. A secret is read on first use (one read at a time, shared by the
 * callers) and kept for the container's life: the key never changes. A failed read, or one past the deadline, rejects
 * with a ConfigurationError naming the secret (never the key); reads back off as the token's do (SECRET_READ_BACKOFF),
 * and during the backoff the last failure rejects at once.
 */
function createStampSource(config: StampKeyConfig, options: StampSourceOptions = {}): StampSource {
  if (config.kind === 'literal') {
    const stamps = Promise.resolve(keyedStamps(config.key));
    return () => stamps;
  }
  const { secretArn } = config;
  let reader = options.secrets;
  const key = createRefreshingValue<StampDigest>({
    read: async () => {
      const read = await readSecretString((reader ??= secretReaderFor(secretArn)), secretArn);
      if ('text' in read) return keyedStamps(checkedStampKey(read.text.trim(), `secret ${secretArn}`));
      const why = 'failure' in read ? (read.failure as Error).message : 'the secret has no SecretString';
      throw new ConfigurationError(`reading the stamp key from secret ${secretArn} failed: ${why}`, {
        ...('failure' in read ? { cause: read.failure } : {}),
        context: { secretArn },
      });
    },
    refreshMs: Infinity,
    backoff: SECRET_READ_BACKOFF,
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    timeoutError: (deadlineMs) =>
      new ConfigurationError(`reading the stamp key from secret ${secretArn} gave no answer within ${deadlineMs} ms`, {
        context: { secretArn, deadlineMs },
      }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  return async () => (await key.get()).value;
}

export { KEYLESS_STAMPS, keyedStamps, generateStampKey, readStampKeyConfig, createStampSource, checkedStampKey };
export type { StampKeyConfig, StampSource };
