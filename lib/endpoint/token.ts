/** The webhook's path token: where the expected value comes from, and the constant-time comparison. */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigurationError } from '../errors/index.ts';
import { readSecretString, secretReaderFor, type SecretReader } from '../secrets/index.ts';
import { WEBHOOK_TOKEN_FORM, WEBHOOK_TOKEN_PATTERN } from '../values/index.ts';

/** Where the expected token is read from: a Secrets Manager secret (deployed) or a literal value (local runs). */
type TokenSourceConfig =
  | { readonly kind: 'secret'; readonly secretArn: string }
  | { readonly kind: 'literal'; readonly token: string };

/** Options of a token source; a reader is created from the SDK's default chain when none is given. */
interface TokenSourceOptions {
  readonly secrets?: SecretReader;
}

/** The expected token; the first successful read is kept for the life of the container. */
type TokenSource = () => Promise<string>;

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

async function readSecretToken(reader: SecretReader, secretArn: string): Promise<string> {
  const read = await readSecretString(reader, secretArn);
  if ('failure' in read) {
    throw new ConfigurationError(`reading the webhook token from secret ${secretArn} failed: ${(read.failure as Error).message}`, {
      cause: read.failure,
      context: { secretArn },
    });
  }
  if ('empty' in read) {
    throw new ConfigurationError(`secret ${secretArn} has no SecretString; expected the token as a string secret`, {
      context: { secretArn },
    });
  }
  return tokenInSecret(read.text, secretArn);
}

/**
 * The expected-token source of a configuration. A secret is read on first use and then kept; a failed read is not
 * kept, so the next request retries. Rejects with ConfigurationError naming the secret (never the token).
 */
function createTokenSource(config: TokenSourceConfig, options: TokenSourceOptions = {}): TokenSource {
  if (config.kind === 'literal') {
    const token = Promise.resolve(checkedToken(config.token, 'the configured token'));
    return () => token;
  }
  const { secretArn } = config;
  let reader = options.secrets;
  let cached: Promise<string> | undefined;
  return () => {
    if (cached === undefined) {
      reader ??= secretReaderFor(secretArn);
      cached = readSecretToken(reader, secretArn);
      cached.catch(() => {
        cached = undefined;
      });
    }
    return cached;
  };
}

function sha256(text: string): Buffer {
  // The one-shot hash is measurably cheaper than createHash().update().digest() on this per-request path.
  return hash('sha256', text, 'buffer');
}

/**
 * A comparer of presented tokens against expected ones in constant time: both are hashed with SHA-256 first, so
 * neither the content nor the length of the expected token shows in the timing. The last expected digest is reused.
 */
function createTokenComparer(): (presented: string | undefined, expected: string) => boolean {
  let expectedText: string | undefined;
  let expectedDigest: Buffer = Buffer.alloc(0);
  return (presented, expected) => {
    if (expected !== expectedText) {
      expectedText = expected;
      expectedDigest = sha256(expected);
    }
    // A missing token is compared too (as ""), so it costs the same as a wrong one.
    const matches = timingSafeEqual(sha256(presented ?? ''), expectedDigest);
    return matches && presented !== undefined;
  };
}

/** A fresh random token: 32 bytes in base64url (43 characters). */
function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

export { createTokenSource, createTokenComparer, checkedToken, generateToken };
export type { TokenSourceConfig, TokenSourceOptions, TokenSource, SecretReader };
