/** The webhook's path token: where the expected value comes from, and the constant-time comparison. */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigurationError } from '../errors/index.ts';
import type { Logger, Metrics } from '../observability/index.ts';
import { isSecretNotFound, readSecretString, secretReaderFor, type SecretRead, type SecretReader } from '../secrets/index.ts';
import { WEBHOOK_TOKEN_FORM, WEBHOOK_TOKEN_PATTERN } from '../values/index.ts';

/** Where the accepted tokens are read from: a Secrets Manager secret (deployed) or a literal value (local runs). */
type TokenSourceConfig =
  | { readonly kind: 'secret'; readonly secretArn: string; readonly refreshSeconds?: number }
  | { readonly kind: 'literal'; readonly token: string };

/** Options of a token source; a reader is created from the SDK's default chain when none is given. */
interface TokenSourceOptions {
  readonly secrets?: SecretReader;
  /** Epoch milliseconds; drives the refresh schedule. */
  readonly clock?: () => number;
  /** Called when a refresh fails while the last good tokens are kept (log and count it). */
  readonly onRefreshFailure?: (error: ConfigurationError) => void;
}

/**
 * The accepted tokens: the secret's AWSCURRENT and, while a rotation overlaps, its AWSPREVIOUS. `mismatch` says a
 * presented token matched none, which re-reads the secret early (rate-limited) so a token rotated a moment ago is
 * accepted at once. Rejects only when no token was ever read.
 */
type TokenSource = (reason?: 'mismatch') => Promise<readonly string[]>;

/** Default re-read interval (issue #11): how long a removed token stays accepted on a warm container at most. */
const DEFAULT_TOKEN_REFRESH_SECONDS = 300;
// After a failed refresh with good tokens kept, the next attempt waits this long: an outage costs one call per 30 s.
const RETRY_AFTER_FAILURE_MS = 30_000;
// A presented token that matches none re-reads at most this often per container, so wrong tokens cannot flood the secret.
const MISMATCH_REFRESH_MS = 10_000;

/** The token if it has the accepted form; `where` names its origin in the error. */
function checkedToken(token: string, where: string): string {
  if (!WEBHOOK_TOKEN_PATTERN.test(token)) {
    // The value itself is never put in the message: it may be a real secret with a typo.
    throw new ConfigurationError(`${where} holds a token of ${token.length} characters that is not of the form ${WEBHOOK_TOKEN_FORM}`, {
      context: { source: where },
    });
  }
  return token;
}

/** The token in a SecretString: the whole string, or the `token` field of a JSON object (console key/value secrets). */
function tokenInSecret(secret: string, secretArn: string): string {
  const text = secret.trim();
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new ConfigurationError(`secret ${secretArn} looks like JSON but does not parse; expected a token or {"token": "..."}`, {
        cause: error,
        context: { secretArn },
      });
    }
    const token = (parsed as { token?: unknown } | null)?.token;
    if (typeof token !== 'string') {
      throw new ConfigurationError(`secret ${secretArn} is a JSON object without a string "token" field; expected a token or {"token": "..."}`, {
        context: { secretArn },
      });
    }
    return checkedToken(token, `secret ${secretArn}`);
  }
  return checkedToken(text, `secret ${secretArn}`);
}

function readFailure(secretArn: string, stage: string, failure: unknown): ConfigurationError {
  return new ConfigurationError(`reading the webhook token from secret ${secretArn} (${stage}) failed: ${(failure as Error).message}`, {
    cause: failure,
    context: { secretArn, versionStage: stage },
  });
}

function currentTokenOf(current: SecretRead, secretArn: string): string {
  if ('failure' in current) throw readFailure(secretArn, 'AWSCURRENT', current.failure);
  if ('empty' in current) {
    throw new ConfigurationError(`secret ${secretArn} has no SecretString; expected the token as a string secret`, {
      context: { secretArn },
    });
  }
  return tokenInSecret(current.text, secretArn);
}

/** The token of the secret's AWSCURRENT version: the one a new webhook configuration carries. */
async function readCurrentToken(secretArn: string, options: { readonly secrets?: SecretReader } = {}): Promise<string> {
  return currentTokenOf(await readSecretString(options.secrets ?? secretReaderFor(secretArn), secretArn, 'AWSCURRENT'), secretArn);
}

/** The tokens of the secret's AWSCURRENT and AWSPREVIOUS versions; a missing AWSPREVIOUS means no rotation overlaps. */
async function readSecretTokens(reader: SecretReader, secretArn: string): Promise<readonly string[]> {
  const [current, previous] = await Promise.all([
    readSecretString(reader, secretArn, 'AWSCURRENT'),
    readSecretString(reader, secretArn, 'AWSPREVIOUS'),
  ]);
  const tokens = [currentTokenOf(current, secretArn)];
  // Any other failure of AWSPREVIOUS fails the refresh, so the last good pair is kept rather than the old token dropped.
  if ('failure' in previous && !isSecretNotFound(previous.failure)) throw readFailure(secretArn, 'AWSPREVIOUS', previous.failure);
  if ('text' in previous) {
    const old = tokenInSecret(previous.text, secretArn);
    if (old !== tokens[0]) tokens.push(old);
  }
  return tokens;
}

/**
 * The accepted-token source of a configuration. A secret is read on first use, then re-read when `refreshSeconds`
 * have passed (or early on a mismatch, at most every 10 s). A failed first read is not kept, so the next request
 * retries; a failed refresh keeps the last good tokens, reports through onRefreshFailure and retries after 30 s.
 * Errors are ConfigurationErrors naming the secret, never a token.
 */
function createTokenSource(config: TokenSourceConfig, options: TokenSourceOptions = {}): TokenSource {
  if (config.kind === 'literal') {
    const tokens = Promise.resolve([checkedToken(config.token, 'the configured token')]);
    return () => tokens;
  }
  const { secretArn } = config;
  const refreshMs = (config.refreshSeconds ?? DEFAULT_TOKEN_REFRESH_SECONDS) * 1000;
  const clock = options.clock ?? Date.now;
  let reader = options.secrets;
  let tokens: readonly string[] | undefined;
  let readAt = 0;
  let attemptAt = 0;
  let lastFailed = false;
  let inflight: Promise<readonly string[]> | undefined;

  function due(now: number, reason: 'mismatch' | undefined): boolean {
    if (tokens === undefined) return true;
    if (reason === 'mismatch' && now - attemptAt >= MISMATCH_REFRESH_MS) return true;
    return lastFailed ? now - attemptAt >= RETRY_AFTER_FAILURE_MS : now - readAt >= refreshMs;
  }

  function refresh(now: number): Promise<readonly string[]> {
    reader ??= secretReaderFor(secretArn);
    attemptAt = now;
    return readSecretTokens(reader, secretArn).then(
      (read) => {
        tokens = read;
        readAt = now;
        lastFailed = false;
        return read;
      },
      (error: unknown) => {
        lastFailed = true;
        if (tokens === undefined) throw error;
        if (error instanceof ConfigurationError) options.onRefreshFailure?.(error);
        return tokens;
      },
    );
  }

  return (reason) => {
    const now = clock();
    if (tokens !== undefined && !due(now, reason)) return Promise.resolve(tokens);
    inflight ??= refresh(now).finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
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
function tokenRefreshFailureReporter(logger: Pick<Logger, 'warn'>, metrics: Pick<Metrics, 'addMetric'>): (error: ConfigurationError) => void {
  return (error) => {
    // The last good tokens stay accepted; the metric's alarm catches a secret that stays unreadable.
    logger.warn('webhook token refresh failed; keeping the last tokens', { errorName: error.name, errorMessage: error.message });
    metrics.addMetric('TokenRefreshFailures', 'Count', 1);
  };
}

/** A fresh random token: 32 bytes in base64url (43 characters). */
function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

export { createTokenSource, createTokenComparer, checkedToken, generateToken, readCurrentToken, tokenRefreshFailureReporter, DEFAULT_TOKEN_REFRESH_SECONDS };
export type { TokenSourceConfig, TokenSourceOptions, TokenSource, SecretReader };
