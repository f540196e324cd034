import { Sha256 } from '@aws-crypto/sha256-js';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { ConfigurationError } from '../errors/index.ts';

/**
 * AWS credentials as the SDK's providers resolve them.
 * @internal Exported for tests: the tests sign with fixed credentials.
 */
interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** Resolves (and refreshes) AWS credentials, e.g. defaultProvider() of @aws-sdk/credential-provider-node. */
type AwsCredentialsProvider = () => Promise<AwsCredentials>;

/** The current time; injectable so tests can fix and advance it. */
type Clock = () => Date;

/** What presignEksToken signs. */
interface EksTokenRequest {
  readonly clusterName: string;
  readonly region: string;
  readonly credentials: AwsCredentials;
  /** Becomes X-Amz-Date; the token is valid 15 minutes from it. */
  readonly signingDate: Date;
}

/** Hands out a bearer token for the cluster that is valid for at least the next few minutes. */
interface EksTokenProvider {
  token(): Promise<string>;
}

/** The cluster a provider signs for, the credentials it signs with, and how long it reuses a token. */
interface EksTokenProviderOptions {
  readonly clusterName: string;
  readonly region: string;
  readonly credentials: AwsCredentials | AwsCredentialsProvider;
  readonly clock?: Clock;
  /** How long one token is handed out; at most 14 minutes, so every token has a minute of validity left. */
  readonly reuseForMs?: number;
}

const TOKEN_PREFIX = 'k8s-aws-v1.';
const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
const STS_API_VERSION = '2011-06-15';
// aws eks get-token presigns for 60 s; the EKS authenticator itself accepts the token for 15 minutes from X-Amz-Date.
const PRESIGN_EXPIRES_SECONDS = 60;
const TOKEN_VALIDITY_MS = 15 * 60_000;
const MIN_REMAINING_VALIDITY_MS = 60_000;
const DEFAULT_REUSE_MS = 10 * 60_000;
// Renew before the credentials the token was signed with expire; STS rejects a URL signed by expired credentials.
const CREDENTIALS_EXPIRY_MARGIN_MS = 60_000;

/**
 * The token `aws eks get-token` makes: "k8s-aws-v1." + unpadded base64url of a presigned STS GetCallerIdentity URL; deterministic.
 * @internal Exported for tests: tested on its own against aws-iam-authenticator's token form.
 */
async function presignEksToken(request: EksTokenRequest): Promise<string> {
  const hostname = stsHostname(request.region);
  const signer = new SignatureV4({
    credentials: request.credentials,
    region: request.region,
    service: 'sts',
    sha256: Sha256,
  });
  const presigned = await signer.presign(
    new HttpRequest({
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: STS_API_VERSION },
      // Not an x-amz- header, so the signer keeps it as a signed header instead of hoisting it into the query.
      headers: { host: hostname, [CLUSTER_ID_HEADER]: request.clusterName },
    }),
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: request.signingDate },
  );
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(presigned.query ?? {})) {
    for (const entry of Array.isArray(value) ? value : [value]) query.append(key, entry ?? '');
  }
  return TOKEN_PREFIX + Buffer.from(`https://${hostname}/?${query.toString()}`, 'utf8').toString('base64url');
}

/** Reuses one token for `reuseForMs` (default 10 minutes), then presigns a new one; concurrent callers share one signing. */
function createEksTokenProvider(options: EksTokenProviderOptions): EksTokenProvider {
  const reuseForMs = options.reuseForMs ?? DEFAULT_REUSE_MS;
  if (!Number.isFinite(reuseForMs) || reuseForMs < 0 || reuseForMs > TOKEN_VALIDITY_MS - MIN_REMAINING_VALIDITY_MS) {
    throw new ConfigurationError(
      `EKS token reuse must be between 0 and ${TOKEN_VALIDITY_MS - MIN_REMAINING_VALIDITY_MS} ms (tokens are valid for 15 minutes), got ${reuseForMs}`,
    );
  }
  const clock = options.clock ?? (() => new Date());
  const credentials = options.credentials;
  const resolveCredentials: AwsCredentialsProvider =
    typeof credentials === 'function' ? credentials : () => Promise.resolve(credentials);
  let current: { readonly token: string; readonly renewAtMs: number; readonly issuedAtMs: number } | undefined;
  let pending: Promise<string> | undefined;

  const issue = async (): Promise<string> => {
    const identity = await resolveCredentials();
    const signingDate = clock();
    const issuedAtMs = signingDate.getTime();
    const token = await presignEksToken({
      clusterName: options.clusterName,
      region: options.region,
      credentials: identity,
      signingDate,
    });
    const credentialsRenewAtMs =
      identity.expiration === undefined ? Infinity : identity.expiration.getTime() - CREDENTIALS_EXPIRY_MARGIN_MS;
    current = { token, issuedAtMs, renewAtMs: Math.min(issuedAtMs + reuseForMs, credentialsRenewAtMs) };
    return token;
  };

  return {
    token(): Promise<string> {
      const nowMs = clock().getTime();
      // A clock that moved backwards (before issuedAt) cannot vouch for the token's age; renew.
      if (current !== undefined && nowMs < current.renewAtMs && nowMs >= current.issuedAtMs) {
        return Promise.resolve(current.token);
      }
      pending ??= issue().finally(() => {
        pending = undefined;
      });
      return pending;
    },
  };
}

/** The regional STS endpoint the EKS authenticator accepts for a region (China regions use amazonaws.com.cn). */
function stsHostname(region: string): string {
  return region.startsWith('cn-') ? `sts.${region}.amazonaws.com.cn` : `sts.${region}.amazonaws.com`;
}

export { presignEksToken, createEksTokenProvider };
export type { AwsCredentials, AwsCredentialsProvider, Clock };
