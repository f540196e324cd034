/** Typed reading of the admission function's environment. */
import { choiceSetting, optionalSetting, wholeNumberSetting, type Environment } from '../config/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { readAll } from '../json/index.ts';
import { SECRET_ARN } from '../syntax/index.ts';
import { readCapacityFlavour, type CapacityFlavour } from '../placement/index.ts';
import { readStoreConfig, type StoreConfig } from '../store/index.ts';
import { DEFAULT_ENFORCEMENT, ENFORCEMENTS, type Enforcement } from '../api/index.ts';
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
  /**
   * STAMP_KEY_SECRET_ARN or STAMP_KEY: the key of the stamps on the Pods the webhook changes; undefined, none. A
   * secret is re-read on the token's schedule (TOKEN_REFRESH_SECONDS).
   */
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

function readEnforcement(env: Environment): Enforcement {
  return choiceSetting(env, 'ENFORCEMENT', ENFORCEMENTS, DEFAULT_ENFORCEMENT);
}

/**
 * Reads the admission function's configuration (each variable's meaning is in docs/configuration.md, rendered from
 * lib/config/variables.ts); one ConfigurationError names every variable that is wrong.
 */
function readAdmissionConfig(env: Environment): AdmissionConfig {
  const config = readAll(
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
  if (config.stampKey?.kind !== 'secret') return config;
  const refreshSeconds = config.token.kind === 'secret' ? config.token.refreshSeconds : undefined;
  return {
    ...config,
    stampKey: { ...config.stampKey, refreshSeconds: refreshSeconds ?? DEFAULT_TOKEN_REFRESH_SECONDS },
  };
}

export { readAdmissionConfig, DEFAULT_MAX_BODY_BYTES };
