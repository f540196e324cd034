/** Typed reading of the admission function's environment. */
import { choiceSetting, optionalSetting, wholeNumberSetting, type Environment } from '../config/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { readAll, SECRET_ARN } from '../values/index.ts';
import { CAPACITY_FLAVOURS, DEFAULT_CAPACITY_FLAVOUR, type CapacityFlavour } from '../placement/index.ts';
import { readStoreConfig, type StoreConfig } from '../store/index.ts';
import { ENFORCEMENTS, type Enforcement } from '../api/index.ts';
import { readStampKeyConfig, type StampKeyConfig } from '../stamp/index.ts';
import { checkedToken, DEFAULT_TOKEN_REFRESH_SECONDS, type TokenSourceConfig } from './token.ts';

/** The admission function's settings. */
interface AdmissionConfig {
  readonly store: StoreConfig;
  readonly token: TokenSourceConfig;
  readonly maxBodyBytes: number;
  /** Whose capacity label the managed placement step writes: the cluster's node provisioner. */
  readonly capacityFlavour: CapacityFlavour;
  /** ENFORCEMENT: `audit` audits every customer rule of the deployment. */
  readonly enforcement: Enforcement;
  /** STAMP_KEY_SECRET_ARN or STAMP_KEY: the key of the stamps on the Pods the webhook changes; undefined, none. */
  readonly stampKey?: StampKeyConfig;
}

/** 3 MiB: a Pod is at most about 1.5 MiB, and an AdmissionReview of a CREATE carries it once. */
const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;
// Lambda's synchronous request payload limit is 6 MB; a larger body could never arrive.
const MAX_BODY_BYTES_LIMIT = 6 * 1024 * 1024;
const MIN_BODY_BYTES = 1024;
// At least 10 s keeps Secrets Manager calls negligible; at most an hour bounds how long a removed token stays valid.
const MIN_TOKEN_REFRESH_SECONDS = 10;
const MAX_TOKEN_REFRESH_SECONDS = 3600;

function readTokenConfig(env: Environment): TokenSourceConfig {
  const secretArn = optionalSetting(env, 'WEBHOOK_TOKEN_SECRET_ARN');
  const token = optionalSetting(env, 'WEBHOOK_TOKEN');
  if (secretArn !== undefined && token !== undefined) {
    throw new ConfigurationError(
      'WEBHOOK_TOKEN_SECRET_ARN and WEBHOOK_TOKEN are both set; expected exactly one of them',
      {
        context: { variable: 'WEBHOOK_TOKEN' },
      },
    );
  }
  if (secretArn !== undefined) {
    if (!SECRET_ARN.pattern.test(secretArn)) {
      throw new ConfigurationError(`WEBHOOK_TOKEN_SECRET_ARN is "${secretArn}"; expected ${SECRET_ARN.form}`, {
        context: { variable: 'WEBHOOK_TOKEN_SECRET_ARN' },
      });
    }
    const refreshSeconds = wholeNumberSetting(env, 'TOKEN_REFRESH_SECONDS', {
      fallback: DEFAULT_TOKEN_REFRESH_SECONDS,
      minimum: MIN_TOKEN_REFRESH_SECONDS,
      maximum: MAX_TOKEN_REFRESH_SECONDS,
      unit: 'seconds',
    });
    return { kind: 'secret', secretArn, refreshSeconds };
  }
  if (token !== undefined) return { kind: 'literal', token: checkedToken(token, 'WEBHOOK_TOKEN') };
  throw new ConfigurationError(
    'neither WEBHOOK_TOKEN_SECRET_ARN nor WEBHOOK_TOKEN is set; expected exactly one of them',
    {
      context: { variable: 'WEBHOOK_TOKEN_SECRET_ARN' },
    },
  );
}

function readMaxBodyBytes(env: Environment): number {
  return wholeNumberSetting(env, 'MAX_BODY_BYTES', {
    fallback: DEFAULT_MAX_BODY_BYTES,
    minimum: MIN_BODY_BYTES,
    maximum: MAX_BODY_BYTES_LIMIT,
    unit: 'bytes',
  });
}

function readCapacityFlavour(env: Environment): CapacityFlavour {
  return choiceSetting(env, 'CAPACITY_FLAVOUR', CAPACITY_FLAVOURS, DEFAULT_CAPACITY_FLAVOUR);
}

function readEnforcement(env: Environment): Enforcement {
  return choiceSetting(env, 'ENFORCEMENT', ENFORCEMENTS, 'enforce');
}

/**
 * Reads the admission function's configuration; one ConfigurationError names every variable that is wrong.
 *
 * - RULES_TABLE (required): DynamoDB table of rule snapshots.
 * - CLUSTER_ID (default "default"): cluster whose snapshot is served; the key prefix in the table.
 * - DYNAMODB_ENDPOINT (optional): a local DynamoDB URL (dynalite, DynamoDB Local) instead of AWS.
 * - RULES_REFRESH_SECONDS (default 30): age after which the cached snapshot's pointer is re-read.
 * - RULES_MAX_STALE_SECONDS (default max(300, refresh)): how long the last snapshot is served while refreshes
 *   fail; past it every admission answers HTTP 500 so the webhook's failurePolicy decides.
 * - WEBHOOK_TOKEN_SECRET_ARN: Secrets Manager secret holding the path token (the whole SecretString, or the
 *   "token" field of a JSON SecretString); re-read every TOKEN_REFRESH_SECONDS. Needs secretsmanager:GetSecretValue on it.
 * - TOKEN_REFRESH_SECONDS (default 300, 10 to 3600): how often the secret is re-read, so a rotation is picked up and
 *   a removed AWSPREVIOUS stops being accepted within this bound. Both AWSCURRENT and AWSPREVIOUS are accepted.
 * - WEBHOOK_TOKEN: the path token itself, for local runs. Exactly one of the two token variables must be set;
 *   a token is 32 to 256 characters of the base64url alphabet (lib/token).
 * - MAX_BODY_BYTES (default 3145728, 3 MiB): largest request body accepted, decoded; larger answers 413.
 * - CAPACITY_FLAVOUR (default karpenter): karpenter, eks or gke, the capacity label placement policies write
 *   (karpenter.sh/capacity-type, eks.amazonaws.com/capacityType, cloud.google.com/gke-provisioning).
 * - ENFORCEMENT (default enforce): enforce, or audit to evaluate and record every customer rule without changing Pods
 *   (the stack parameter `enforcement`); each rule can also be audited alone with its enforcement annotation.
 * - STAMP_KEY_SECRET_ARN: Secrets Manager secret whose SecretString is the key of the stamps (lib/engine/stamp.ts),
 *   read once per container; needs secretsmanager:GetSecretValue on it. STAMP_KEY: the key itself, for local runs. At
 *   most one of them; with neither, Pods are not stamped and a later review of one is not exact.
 * - POWERTOOLS_SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE, POWERTOOLS_LOG_LEVEL: read by Powertools itself.
 */
function readAdmissionConfig(env: Environment): AdmissionConfig {
  return readAll(
    {
      store: () => readStoreConfig(env),
      token: () => readTokenConfig(env),
      maxBodyBytes: () => readMaxBodyBytes(env),
      capacityFlavour: () => readCapacityFlavour(env),
      enforcement: () => readEnforcement(env),
      stampKey: () => readStampKeyConfig(env),
    },
    ConfigurationError,
  );
}

export { readAdmissionConfig, DEFAULT_MAX_BODY_BYTES };
export type { AdmissionConfig };
