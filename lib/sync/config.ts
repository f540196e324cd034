/** Typed reading of the sync function's environment. */
import { wholeNumberSetting, type Environment } from '../config/index.ts';
import { readCapacityFlavour, type CapacityFlavour } from '../placement/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { readAll } from '../json/index.ts';
import { readClusterConfig, type ClusterConfig } from '../cluster/index.ts';
import { readStoreConfig, type StoreConfig } from '../store/index.ts';

/** The sync function's settings. */
interface SyncConfig {
  /** Seconds between the starts of consecutive syncs within one invocation. */
  readonly intervalSeconds: number;
  readonly store: StoreConfig;
  readonly cluster: ClusterConfig;
  /** Minutes between migration reports written to the rules' status; 0, the default, is off. */
  readonly reportIntervalMinutes: number;
  /** CAPACITY_FLAVOUR, as the admission function's: the report runs managed placement as admission does. */
  readonly capacityFlavour: CapacityFlavour;
}

const DEFAULT_INTERVAL_SECONDS = 30;
// At least 5 s keeps the API server load trivial; at most 60 s, the schedule's own period.
const MIN_INTERVAL_SECONDS = 5;
const MAX_INTERVAL_SECONDS = 60;

function readIntervalSeconds(env: Environment): number {
  return wholeNumberSetting(env, 'SYNC_INTERVAL_SECONDS', {
    fallback: DEFAULT_INTERVAL_SECONDS,
    minimum: MIN_INTERVAL_SECONDS,
    maximum: MAX_INTERVAL_SECONDS,
    unit: 'seconds',
  });
}

// A day at most: progress older than that is no progress report; 0 turns the report off.
const MAX_REPORT_INTERVAL_MINUTES = 1440;

function readReportIntervalMinutes(env: Environment): number {
  return wholeNumberSetting(env, 'REPORT_INTERVAL_MINUTES', {
    fallback: 0,
    minimum: 0,
    maximum: MAX_REPORT_INTERVAL_MINUTES,
    unit: 'minutes',
  });
}

/**
 * Reads the sync function's configuration (each variable's meaning is in docs/configuration.md, rendered from
 * lib/config/variables.ts); one ConfigurationError names every variable that is wrong.
 */
function readSyncConfig(env: Environment): SyncConfig {
  return readAll(
    {
      intervalSeconds: () => readIntervalSeconds(env),
      store: () => readStoreConfig(env),
      cluster: () => readClusterConfig(env),
      reportIntervalMinutes: () => readReportIntervalMinutes(env),
      capacityFlavour: () => readCapacityFlavour(env),
    },
    ConfigurationError,
  );
}

export { readSyncConfig };
