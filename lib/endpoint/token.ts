/** The webhook's path token: where the expected value comes from, and the constant-time comparison. */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigurationError, errorLogFields } from '../errors/index.ts';
import type { Logger, Metrics } from '../observability/index.ts';
import { createRefreshingValue } from '../refresh/index.ts';
import {
  readSecretString,
  readStagedVersions,
  SECRET_READ_BACKOFF,
  secretReaderFor,
  type SecretRead,
  type SecretReader,
} from '../secrets/index.ts';
import { WEBHOOK_TOKEN_FORM, WEBHOOK_TOKEN_PATTERN } from '../syntax/index.ts';

/** Where the accepted tokens are read from: a Secrets Manager secret (deployed) or a literal value (local runs). */
type TokenSourceConfig =
  | { readonly kind: 'secret'; readonly secretArn: string; readonly refreshSeconds?: number }
  | { readonly kind: 'literal'; readonly token: string };

/** Options of a token source; a reader is created from the SDK's default chain when none is given. */
interface TokenSourceOptions {
  readonly secrets?: SecretReader;
  /** Epoch milliseconds; drives the refresh schedule and the backoff. */
  readonly clock?: () => number;
  /** A draw from [0, 1) for the jitter of the backoff. */
  readonly random?: () => number;
  /**
   * Longest a request waits for a read of the secret, in milliseconds from the read's start; past it the last good
   * tokens are used (none: the read fails) while the read goes on. Without it a request waits until the read ends.
   */
  readonly deadlineMs?: number;
  /** Called when a refresh fails (or passes the deadline) while the last good tokens are kept (log and count it). */
  readonly onRefreshFailure?: (error: ConfigurationError) => void;
  /** Called when a read ignores a malformed AWSPREVIOUS version; the error names the stage. */
  readonly onIgnoredVersion?: (error: ConfigurationError) => void;
}

/**
 * The accepted tokens: the secret's AWSCURRENT and, while a rotation overlaps, its AWSPREVIOUS. `mismatch` says a
 * presented token matched none, which re-reads the secret early (rate-limited) so a token rotated a moment ago is
 * accepted at once. Rejects while no good tokens are known (before the first good read), with the last failure.
 */
type TokenSource = (reason?: 'mismatch') => Promise<readonly string[]>;

/** Default re-read interval: how long a removed token stays accepted on a warm container at most. */
const DEFAULT_TOKEN_REFRESH_SECONDS = 300;
// A presented token that matches none re-reads at most this often per container, so wrong tokens cannot flood the secret.
const MISMATCH_REFRESH_MS = 10_000;

/** The token if it has the accepted form; `where` names its origin in the error, `context` is added to the error's. */
function checkedToken(token: string, where: string, context: Record<string, unknown> = {}): string {
  if (!WEBHOOK_TOKEN_PATTERN.test(token)) {
    // The value itself is never put in the message: it may be a real secret with a typo.
    throw new ConfigurationError(
      `${where} holds a token of ${token.length} characters that is not of the form ${WEBHOOK_TOKEN_FORM}`,
      {
        context: { source: where, ...context },
      },
    );
  }
  return token;
}

/** The token in a SecretString: the whole string, or the `token` field of a JSON object (console key/value secrets). */
function tokenInSecret(secret: string, where: string, context: Record<string, unknown>): string {
  const text = secret.trim();
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new ConfigurationError(
        `${where} looks like JSON but does not parse; expected a token or {"token": "..."}`,
        { cause: error, context },
      );
    }
    const token = (parsed as { token?: unknown } | null)?.token;
    if (typeof token !== 'string') {
      throw new ConfigurationError(
        `${where} is a JSON object without a string "token" field; expected a token or {"token": "..."}`,
        { context },
      );
    }
    return checkedToken(token, where, context);
  }
  return checkedToken(text, where, context);
}

function readFailure(secretArn: string, stage: string, failure: unknown): ConfigurationError {
  return new ConfigurationError(
    `reading the webhook token from secret ${secretArn} (${stage}) failed: ${(failure as Error).message}`,
    {
      cause: failure,
      context: { secretArn, versionStage: stage },
    },
  );
}

/** The token of one version of the secret read without failure; a malformed one throws a ConfigurationError naming the stage. */
function tokenOfVersion(
  read: Exclude<SecretRead, { readonly failure: unknown }>,
  secretArn: string,
  stage: string,
): string {
  const where = `secret ${secretArn} (${stage})`;
  const context = { secretArn, versionStage: stage };
  if ('empty' in read)
    throw new ConfigurationError(`${where} has no SecretString; expected the token as a string secret`, { context });
  return tokenInSecret(read.text, where, context);
}

function currentTokenOf(current: SecretRead, secretArn: string): string {
  if ('failure' in current) throw readFailure(secretArn, 'AWSCURRENT', current.failure);
  return tokenOfVersion(current, secretArn, 'AWSCURRENT');
}

/** The token of the secret's AWSCURRENT version: the one a new webhook configuration carries. */
async function readCurrentToken(secretArn: string, options: { readonly secrets?: SecretReader } = {}): Promise<string> {
  return currentTokenOf(
    await readSecretString(options.secrets ?? secretReaderFor(secretArn), secretArn, 'AWSCURRENT'),
    secretArn,
  );
}

/**
 * The tokens of the secret's AWSCURRENT and AWSPREVIOUS versions; a missing AWSPREVIOUS means no rotation overlaps,
 * and a malformed one is left out and handed to `onIgnored` (lib/secrets readStagedVersions).
 */
function readSecretTokens(
  reader: SecretReader,
  secretArn: string,
  onIgnored?: (error: ConfigurationError) => void,
): Promise<readonly string[]> {
  return readStagedVersions(reader, secretArn, {
    stages: ['AWSCURRENT', 'AWSPREVIOUS'],
    valueOf: (read, stage) => tokenOfVersion(read, secretArn, stage),
    failed: (stage, failure) => readFailure(secretArn, stage, failure),
    ...(onIgnored === undefined ? {} : { onIgnored: (error) => onIgnored(error as ConfigurationError) }),
  });
}

/**
 * The accepted-token source of a configuration. A secret is read on first use, then re-read when `refreshSeconds`
 * have passed (or early on a mismatch, at most every 10 s). A request waits for a read at most `deadlineMs`. A failed
 * read (or one past the deadline) keeps the last good tokens and reports through onRefreshFailure; with none, the
 * source rejects. Failed reads back off from 1 s to 30 s, jittered, whether or not a read ever succeeded; during the
 * backoff the last tokens are used, or the last failure rejects at once. Errors are ConfigurationErrors naming the
 * secret and the version stage, never a token.
 */
function createTokenSource(config: TokenSourceConfig, options: TokenSourceOptions = {}): TokenSource {
  if (config.kind === 'literal') {
    const tokens = Promise.resolve([checkedToken(config.token, 'the configured token')]);
    return () => tokens;
  }
  const { secretArn } = config;
  let reader = options.secrets;
  const accepted = createRefreshingValue<readonly string[]>({
    read: () => readSecretTokens((reader ??= secretReaderFor(secretArn)), secretArn, options.onIgnoredVersion),
    refreshMs: (config.refreshSeconds ?? DEFAULT_TOKEN_REFRESH_SECONDS) * 1000,
    backoff: SECRET_READ_BACKOFF,
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    timeoutError: (deadlineMs) =>
      new ConfigurationError(
        `reading the webhook token from secret ${secretArn} gave no answer within ${deadlineMs} ms`,
        {
          context: { secretArn, deadlineMs },
        },
      ),
    onFailure: (failure, kept) => {
      if (kept && failure instanceof ConfigurationError) options.onRefreshFailure?.(failure);
    },
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.random === undefined ? {} : { random: options.random }),
  });
  return async (reason) => (await accepted.get(reason === 'mismatch' ? { dueAfterMs: MISMATCH_REFRESH_MS } : {})).value;
}

function sha256(text: string): Buffer {
  // The one-shot hash is measurably cheaper than createHash().update().digest() on this per-request path.
  return hash('sha256', text, 'buffer');
}

// Every check compares against this many digests, padding with random ones, so timing never shows whether a
// rotation overlaps (two accepted tokens) or not.
const COMPARED_DIGESTS = 2;

/**
 * A comparer of a presented token against the accepted ones in constant time: all are hashed with SHA-256 first, so
 * neither the content nor the length of an accepted token shows in the timing, and every digest is compared without
 * stopping at a match. The digests of the last accepted set are reused.
 */
function createTokenComparer(): (presented: string | undefined, accepted: readonly string[]) => boolean {
  let acceptedSet: readonly string[] | undefined;
  let digests: readonly Buffer[] = [];
  return (presented, accepted) => {
    if (accepted !== acceptedSet) {
      acceptedSet = accepted;
      digests = Array.from({ length: Math.max(COMPARED_DIGESTS, accepted.length) }, (_, index) =>
        index < accepted.length ? sha256(accepted[index]!) : randomBytes(32),
      );
    }
    // A missing token is compared too (as ""), so it costs the same as a wrong one.
    const digest = sha256(presented ?? '');
    let matches = false;
    for (const expected of digests) matches = timingSafeEqual(digest, expected) || matches;
    return matches && presented !== undefined;
  };
}

/** The onRefreshFailure of the deployed function: a warning (never a token) and one TokenRefreshFailures count. */
function tokenRefreshFailureReporter(
  logger: Pick<Logger, 'warn'>,
  metrics: Pick<Metrics, 'addMetric'>,
): (error: ConfigurationError) => void {
  return (error) => {
    // The last good tokens stay accepted; the metric's alarm catches a secret that stays unreadable.
    logger.warn('webhook token refresh failed; keeping the last tokens', {
      ...errorLogFields(error),
    });
    metrics.addMetric('TokenRefreshFailures', 'Count', 1);
  };
}

/** The onIgnoredVersion of the deployed function: a warning naming the stage (never a token). */
function ignoredTokenVersionReporter(logger: Pick<Logger, 'warn'>): (error: ConfigurationError) => void {
  return (error) => {
    logger.warn('webhook token version ignored; accepting AWSCURRENT alone', {
      versionStage: error.context['versionStage'],
      ...errorLogFields(error),
    });
  };
}

/** A fresh random token: 32 bytes in base64url (43 characters). */
function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

export {
  createTokenSource,
  createTokenComparer,
  checkedToken,
  generateToken,
  readCurrentToken,
  tokenRefreshFailureReporter,
  ignoredTokenVersionReporter,
  DEFAULT_TOKEN_REFRESH_SECONDS,
};
export type { TokenSourceConfig, TokenSource };
