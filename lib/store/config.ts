/** Typed reading of the store's environment variables. */
import { optionalSetting, wholeNumberSetting, type Environment } from '../config/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { readAll } from '../json/index.ts';
import { CLUSTER_ID, isHttpUrl, TABLE_NAME } from '../syntax/index.ts';

/** Store settings read from the environment. */
interface StoreConfig {
  readonly tableName: string;
  readonly clusterId: string;
  readonly endpoint?: string;
  readonly refreshSeconds: number;
  readonly maxStaleSeconds: number;
}

const MAX_SECONDS = 86_400;

function readTableName(env: Environment): string {
  const tableName = optionalSetting(env, 'RULES_TABLE');
  if (tableName === undefined || !TABLE_NAME.pattern.test(tableName)) {
    throw new ConfigurationError(
      `RULES_TABLE is ${tableName === undefined ? 'not set' : `"${tableName}"`}; expected ${TABLE_NAME.form}`,
      { context: { variable: 'RULES_TABLE' } },
    );
  }
  return tableName;
}

function readClusterId(env: Environment): string {
  const clusterId = optionalSetting(env, 'CLUSTER_ID') ?? 'default';
  if (!CLUSTER_ID.pattern.test(clusterId)) {
    throw new ConfigurationError(`CLUSTER_ID is "${clusterId}"; expected ${CLUSTER_ID.form}`, {
      context: { variable: 'CLUSTER_ID' },
    });
  }
  return clusterId;
}

function readEndpoint(env: Environment): string | undefined {
  const endpoint = optionalSetting(env, 'DYNAMODB_ENDPOINT');
  if (endpoint !== undefined && !isHttpUrl(endpoint)) {
    throw new ConfigurationError(`DYNAMODB_ENDPOINT is "${endpoint}"; expected an http:// or https:// URL`, {
      context: { variable: 'DYNAMODB_ENDPOINT' },
    });
  }
  return endpoint;
}

function readFreshness(env: Environment): Pick<StoreConfig, 'refreshSeconds' | 'maxStaleSeconds'> {
  const refreshSeconds = wholeNumberSetting(env, 'RULES_REFRESH_SECONDS', {
    fallback: 30,
    minimum: 1,
    maximum: MAX_SECONDS,
    unit: 'seconds',
  });
  // A value may only be served stale after a refresh was due, so the limit cannot be shorter than the interval.
  const maxStaleSeconds = wholeNumberSetting(env, 'RULES_MAX_STALE_SECONDS', {
    fallback: Math.max(300, refreshSeconds),
    minimum: refreshSeconds,
    maximum: MAX_SECONDS,
    unit: 'seconds',
  });
  return { refreshSeconds, maxStaleSeconds };
}

/**
 * Reads RULES_TABLE, CLUSTER_ID, DYNAMODB_ENDPOINT, RULES_REFRESH_SECONDS and RULES_MAX_STALE_SECONDS; one
 * ConfigurationError names every variable that is wrong.
 */
function readStoreConfig(env: Environment): StoreConfig {
  const { tableName, clusterId, endpoint, freshness } = readAll(
    {
      tableName: () => readTableName(env),
      clusterId: () => readClusterId(env),
      endpoint: () => readEndpoint(env),
      freshness: () => readFreshness(env),
    },
    ConfigurationError,
  );
  return { tableName, clusterId, ...(endpoint === undefined ? {} : { endpoint }), ...freshness };
}

export { readStoreConfig };
export type { StoreConfig };
