/**
 * The stamp's digests on node:crypto, for the engine's stamps (lib/engine/stamp.ts): SHA-256 sums, which anyone can
 * check, and HMAC-SHA-256 under the stamp key, which only the webhook holds; and where that key comes from: a Secrets
 * Manager secret of its own in the deployed stack, a literal for local runs, a generated one for `podmutation serve`.
 * The secret is a key set, rotated as the webhook token is: its AWSCURRENT version signs, and AWSCURRENT, AWSPREVIOUS
 * and AWSPENDING verify, re-read on the token's schedule, so that during a rotation every container accepts the
 * stamps of both keys (docs/operations.md, "Rotating the stamp key").
 */
import { createHmac, createSecretKey, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { optionalSetting, type Environment } from '../config/index.ts';
import type { StampDigest } from '../engine/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { createRefreshingValue } from '../refresh/index.ts';
import { readStagedVersions, SECRET_READ_BACKOFF, secretReaderFor, type SecretReader } from '../secrets/index.ts';
import { SECRET_ARN, WEBHOOK_TOKEN_FORM, WEBHOOK_TOKEN_PATTERN } from '../syntax/index.ts';

/**
 * Where the stamp key is read from: a Secrets Manager secret (deployed), re-read every `refreshSeconds` (default 300),
 * or a literal value (local runs).
 */
type StampKeyConfig =
  | { readonly kind: 'secret'; readonly secretArn: string; readonly refreshSeconds?: number }
  | { readonly kind: 'literal'; readonly key: string };

/** The stamp's digests under the current key set; rejects while no key set was ever read (the next call reads again). */
type StampSource = () => Promise<StampDigest>;

// The stage that signs first; the others only verify. AWSPENDING lets a new key be known to every container before
// any signs with it: a key set read before the new key is current already accepts its stamps.
const STAMP_KEY_STAGES: readonly [string, ...string[]] = ['AWSCURRENT', 'AWSPREVIOUS', 'AWSPENDING'];
const DEFAULT_REFRESH_SECONDS = 300;

function sum(text: string): string {
  return hash('sha256', text, 'base64url');
}

/** Sums only: stamps are checked by their sum and written without a MAC (the CLI, the sync's report). */
const KEYLESS_STAMPS: StampDigest = Object.freeze({ sum });

/**
 * The key if it has the accepted form (that of the webhook token: 32 to 256 base64url characters); `where` names its
 * origin, and `stage` the secret's version stage it was read from.
 */
function checkedStampKey(key: string, where: string, stage?: string): string {
  if (!WEBHOOK_TOKEN_PATTERN.test(key)) {
    // The value itself is never put in the message.
    throw new ConfigurationError(
      `${where} holds a stamp key of ${key.length} characters that is not of the form ${WEBHOOK_TOKEN_FORM}`,
      { context: { source: where, ...(stage === undefined ? {} : { versionStage: stage }) } },
    );
  }
  return key;
}

/**
 * Sums, and MACs: signed under `key`, checked under `key` and each of `alsoAccepted` (the key set of a rotation). Every
 * key is tried, in constant time each, so the check takes as long whichever key made the MAC, or none.
 */
function keyedStamps(key: string, alsoAccepted: readonly string[] = []): StampDigest {
  // Imported once: an HMAC of a string key imports the key again on every call, on the path of every mutated Pod.
  const secrets = [key, ...alsoAccepted].map((each) => createSecretKey(Buffer.from(each, 'utf8')));
  const macUnder = (secret: (typeof secrets)[number], text: string): string =>
    createHmac('sha256', secret).update(text).digest('base64url');
  return Object.freeze({
    sum,
    key: Object.freeze({
      sign: (text: string): string => macUnder(secrets[0]!, text),
      verify(text: string, mac: string): boolean {
        const given = Buffer.from(mac);
        let matches = false;
        for (const secret of secrets) {
          const expected = Buffer.from(macUnder(secret, text));
          matches = (given.length === expected.length && timingSafeEqual(given, expected)) || matches;
        }
        return matches;
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

/** What a stamp source reads with, how long a review waits for it, and who hears of a failed refresh. */
interface StampSourceOptions {
  readonly secrets?: SecretReader;
  /** Longest a review waits for the read (lib/refresh); without it, until the client's own timeouts end it. */
  readonly deadlineMs?: number;
  readonly clock?: () => number;
  readonly random?: () => number;
  /** Called when a refresh fails (or passes the deadline) while the last key set is kept (log it). */
  readonly onRefreshFailure?: (error: ConfigurationError) => void;
  /** Called when a read leaves out a malformed AWSPREVIOUS or AWSPENDING version; the error names the stage. */
  readonly onIgnoredVersion?: (error: ConfigurationError) => void;
}

/** The key of one version of the stamp key's secret (its whole SecretString); a malformed one throws, naming the stage. */
function keyOfVersion(
  read: { readonly text: string } | { readonly empty: true },
  secretArn: string,
  stage: string,
): string {
  const where = `secret ${secretArn} (${stage})`;
  if ('empty' in read) {
    throw new ConfigurationError(`${where} has no SecretString; expected the stamp key as a string secret`, {
      context: { secretArn, versionStage: stage },
    });
  }
  return checkedStampKey(read.text.trim(), where, stage);
}

/**
 * The stamp's digests under the configured key. A secret is read on first use (one read at a time, shared by the
 * callers), then again every `refreshSeconds`: its AWSCURRENT key signs, and every key of AWSCURRENT, AWSPREVIOUS and
 * AWSPENDING verifies. A failed refresh, or one past the deadline, keeps the last key set (onRefreshFailure); with none
 * yet, it rejects with a ConfigurationError naming the secret and the stage (never a key). Reads back off as the
 * token's do (SECRET_READ_BACKOFF), and during the backoff the last failure rejects at once.
 */
function createStampSource(config: StampKeyConfig, options: StampSourceOptions = {}): StampSource {
  if (config.kind === 'literal') {
    const stamps = Promise.resolve(keyedStamps(config.key));
    return () => stamps;
  }
  const { secretArn } = config;
  let reader = options.secrets;
  const failed = (stage: string, failure: unknown) =>
    new ConfigurationError(
      `reading the stamp key from secret ${secretArn} (${stage}) failed: ${(failure as Error).message}`,
      { cause: failure, context: { secretArn, versionStage: stage } },
    );
  const keySet = createRefreshingValue<StampDigest>({
    read: async () => {
      const [current, ...accepted] = await readStagedVersions((reader ??= secretReaderFor(secretArn)), secretArn, {
        stages: STAMP_KEY_STAGES,
        valueOf: (read, stage) => keyOfVersion(read, secretArn, stage),
        failed,
        onIgnored: (error) => options.onIgnoredVersion?.(error as ConfigurationError),
      });
      return keyedStamps(current!, accepted);
    },
    refreshMs: (config.refreshSeconds ?? DEFAULT_REFRESH_SECONDS) * 1000,
    backoff: SECRET_READ_BACKOFF,
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    timeoutError: (deadlineMs) =>
      new ConfigurationError(`reading the stamp key from secret ${secretArn} gave no answer within ${deadlineMs} ms`, {
        context: { secretArn, deadlineMs },
      }),
    onFailure: (failure, kept) => {
      if (kept && failure instanceof ConfigurationError) options.onRefreshFailure?.(failure);
    },
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  return async () => (await keySet.get()).value;
}

export { KEYLESS_STAMPS, keyedStamps, generateStampKey, readStampKeyConfig, createStampSource, checkedStampKey };
export type { StampKeyConfig, StampSource };
