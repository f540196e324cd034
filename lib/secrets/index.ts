/**
 * The one way the product reads a secret: GetSecretValue of a Secrets Manager secret, its SecretString or nothing.
 * Used by the webhook token (lib/endpoint), the stamp key (lib/stamp) and the kubeconfig of the sync (lib/cluster), which each turn a failure
 * into their own typed error; the secret's value never appears in a message.
 */
import {
  GetSecretValueCommand,
  SecretsManagerClient,
  type GetSecretValueCommandOutput,
} from '@aws-sdk/client-secrets-manager';
import { SECRET_ARN } from '../syntax/index.ts';

/** The one Secrets Manager call the product makes; satisfied by SecretsManagerClient. */
interface SecretReader {
  send(command: GetSecretValueCommand): Promise<GetSecretValueCommandOutput>;
}

/** What reading a secret gave: its SecretString, or why there is none (the call's error, or no string). */
type SecretRead = { readonly text: string } | { readonly failure: unknown } | { readonly empty: true };

/** Timeouts and attempts of a Secrets Manager client; each timeout ends the call with a TimeoutError. */
interface SecretReaderOptions {
  /** Time to wait for the answer once the request is sent, in milliseconds (default 3000). */
  readonly requestTimeoutMs?: number;
  /** Time to establish a connection, in milliseconds (default 1000). */
  readonly connectionTimeoutMs?: number;
  /** Attempts per call including the first (SDK default 3). */
  readonly maxAttempts?: number;
}

// A failed read is retried after 0.5–1 s, then after twice as long each time, up to 15–30 s: an unreadable secret costs a
// container at most four reads a minute once the backoff is full, before the first good read as after it, however many
// requests arrive (lib/refresh draws each wait from the upper half of its cap).
/** The backoff of every secret read on the request path (the webhook token, the stamp key). */
const SECRET_READ_BACKOFF = Object.freeze({ initialMs: 1_000, maxMs: 30_000 });

/** A Secrets Manager client for the secret's own region (an ARN names it), or the SDK's default region otherwise. */
function secretReaderFor(secretArn: string, options: SecretReaderOptions = {}): SecretReader {
  const region = SECRET_ARN.pattern.exec(secretArn)?.[1];
  return new SecretsManagerClient({
    ...(region === undefined ? {} : { region }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 1_000,
      requestTimeout: options.requestTimeoutMs ?? 3_000,
      // Without it @smithy/node-http-handler only logs a warning when requestTimeout passes and keeps waiting.
      throwOnRequestTimeout: true,
    },
  });
}

/**
 * Reads the SecretString of the secret's version with `versionStage` (default AWSCURRENT); an empty or missing
 * string is `empty`, a failed call its `failure`. Never throws.
 */
async function readSecretString(reader: SecretReader, secretArn: string, versionStage?: string): Promise<SecretRead> {
  let output: GetSecretValueCommandOutput;
  try {
    output = await reader.send(
      new GetSecretValueCommand({
        SecretId: secretArn,
        ...(versionStage === undefined ? {} : { VersionStage: versionStage }),
      }),
    );
  } catch (failure) {
    return { failure };
  }
  const text = output.SecretString;
  return text === undefined || text.trim() === '' ? { empty: true } : { text };
}

/** True when a read failed because the secret, or the version with the asked stage, does not exist. */
function isSecretNotFound(failure: unknown): boolean {
  return failure instanceof Error && failure.name === 'ResourceNotFoundException';
}

/** How the values of a rotating secret's versions are read: each stage's value checked, and failures named. */
interface StagedVersions {
  /** The stages read: the first (AWSCURRENT) must be there; the others are read when present. */
  readonly stages: readonly [string, ...string[]];
  /** The value of one version read without failure; throws when it is malformed (the error names the stage). */
  readonly valueOf: (read: Exclude<SecretRead, { readonly failure: unknown }>, stage: string) => string;
  /** The error of a failed read of a stage. */
  readonly failed: (stage: string, failure: unknown) => Error;
  /** Called with the error of a malformed version of a stage after the first, which is then left out. */
  readonly onIgnored?: (error: unknown) => void;
}

/**
 * The distinct values of a rotating secret's versions, the first stage's first: a key set whose first value is the
 * one in use and the others still accepted while a rotation overlaps. A stage after the first that no version carries
 * is left out; one whose value is malformed is left out and handed to `onIgnored` (a second put-secret-value that
 * fixes a bad first one turns the bad value into AWSPREVIOUS, and the current one must still be read). Any other
 * failure throws, so that a caller keeping its last good set keeps it whole rather than drop an accepted value.
 */
async function readStagedVersions(
  reader: SecretReader,
  secretArn: string,
  versions: StagedVersions,
): Promise<readonly string[]> {
  const reads = await Promise.all(versions.stages.map((stage) => readSecretString(reader, secretArn, stage)));
  const values: string[] = [];
  for (const [index, read] of reads.entries()) {
    const stage = versions.stages[index]!;
    if ('failure' in read) {
      if (index > 0 && isSecretNotFound(read.failure)) continue;
      throw versions.failed(stage, read.failure);
    }
    let value: string;
    try {
      value = versions.valueOf(read, stage);
    } catch (error) {
      if (index === 0) throw error;
      versions.onIgnored?.(error);
      continue;
    }
    if (!values.includes(value)) values.push(value);
  }
  return values;
}

export { readSecretString, readStagedVersions, secretReaderFor, SECRET_READ_BACKOFF };
export type { SecretReader, SecretRead };
