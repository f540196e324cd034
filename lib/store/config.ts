/** Typed reading of the store's environment variables. */
import { ConfigurationError } from '../errors/index.ts';
import { CLUSTER_ID_PATTERN } from './layout.ts';
import type { StoreConfig } from './types.ts';

type Environment = Readonly<Record<string, string | undefined>>;

// DynamoDB table names: 3 to 255 of these characters.
const TABLE_NAME_PATTERN = /^[A-Za-z0-9_.-]{3,255}$/;
const MAX_SECONDS = 86_400;

/** The variable's value, with an empty string treated as unset (templates often render unset values as ""). */
function optional(env: Environment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function wholeSeconds(env: Environment, name: string, fallback: number, minimum: number): number {
  const text = optional(env, name);
  if (text === undefined) return fallback;
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < minimum || value > MAX_SECONDS) {
    throw new ConfigurationError(`${name} is "${text}"; expected a whole number of seconds from ${minimum} to ${MAX_SECONDS}`, {
      context: { variable: name },
    });
  }
  return value;
}

/** Reads RULES_TABLE, CLUSTER_ID, DYNAMODB_ENDPOINT, RULES_REFRESH_SECONDS and RULES_MAX_STALE_SECONDS; fails fast naming the variable. */
function readStoreConfig(env: Environment): StoreConfig {
  const tableName = optional(env, 'RULES_TABLE');
  if (tableName === undefined || !TABLE_NAME_PATTERN.test(tableName)) {
    throw new ConfigurationError(
      `RULES_TABLE is ${tableName === undefined ? 'not set' : `"${tableName}"`}; expected a DynamoDB table name (3 to 255 letters, digits, "_", "-" or ".")`,
      { context: { variable: 'RULES_TABLE' } },
    );
  }
  const clusterId = optional(env, 'CLUSTER_ID') ?? 'default';
  if (!CLUSTER_ID_PATTERN.test(clusterId)) {
    throw new ConfigurationError(
      `CLUSTER_ID is "${clusterId}"; expected 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit`,
      { context: { variable: 'CLUSTER_ID' } },
    );
  }
  const endpoint = optional(env, 'DYNAMODB_ENDPOINT');
  if (endpoint !== undefined && !isHttpUrl(endpoint)) {
    throw new ConfigurationError(`DYNAMODB_ENDPOINT is "${endpoint}"; expected an http:// or https:// URL`, {
      context: { variable: 'DYNAMODB_ENDPOINT' },
    });
  }
  const refreshSeconds = wholeSeconds(env, 'RULES_REFRESH_SECONDS', 30, 1);
  // A value may only be served stale after a refresh was due, so the limit cannot be shorter than the interval.
  const maxStaleSeconds = wholeSeconds(env, 'RULES_MAX_STALE_SECONDS', Math.max(300, refreshSeconds), refreshSeconds);
  return { tableName, clusterId, ...(endpoint === undefined ? {} : { endpoint }), refreshSeconds, maxStaleSeconds };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export { readStoreConfig };
