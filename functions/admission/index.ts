/**
 * The admission Lambda behind API Gateway (HTTP API, payload 2.0): wiring only, the contract lives in lib/endpoint.
 * Module scope holds the configuration, clients and the cache of rules and placement policies, so they live as long
 * as the container.
 * Never import lib/cluster or @kubernetes/client-node here: the admission bundle excludes them.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import {
  createAdmissionHandler,
  createAdmissionRulesCache,
  createTokenSource,
  ignoredTokenVersionReporter,
  readAdmissionConfig,
  tokenRefreshFailureReporter,
} from '../../lib/endpoint/index.ts';
import { errorLogFields } from '../../lib/errors/index.ts';
import { secretReaderFor } from '../../lib/secrets/index.ts';
import { createStampSource, type StampKeyConfig, type StampSource } from '../../lib/stamp/index.ts';
import {
  createDynamoClient,
  openDiversityCounterStore,
  openPlacementStore,
  openSnapshotStore,
} from '../../lib/store/index.ts';

const config = readAdmissionConfig(process.env);
const logger = new Logger();
const metrics = new Metrics();

// Deadlines of the request path. The function's timeout is 3 s (serverless.yml), inside the 5 s the cluster waits by
// default (timeoutSeconds). A request waits at most once for a read of the token, since the early re-read on an
// unknown token never starts within 10 s of another read, and at most once for the rules (the stamp key, read
// beside them with the same deadline): 0.5 + 2 = 2.5 s, which leaves 0.5 s for the review (under 10 ms
// at its worst case, 64 x 64 terms) and the log line. The rules get the larger share because a cold load of the largest snapshot reads every part and compiles it (up to about 1 s on a 1024 MB
// function); a GetSecretValue is one small answer. Past a deadline the last good tokens or rules are served, stale,
// counted and logged; with none yet (a cold start) the request answers 500 at once.
const TOKEN_DEADLINE_MS = 500;
const RULES_DEADLINE_MS = 2_000;
// The clients' own timeouts end a silent call (one attempt, then one retry), so the read behind a passed deadline
// finishes in the background and its answer, if it comes, is kept for the next request.
const CLIENT_TIMEOUTS = { maxAttempts: 2, connectionTimeoutMs: 500, requestTimeoutMs: 1000 };

const client = createDynamoClient({
  ...(config.store.endpoint === undefined ? {} : { endpoint: config.store.endpoint }),
  ...CLIENT_TIMEOUTS,
});
// The stores the admission reads and counts in, opened alone (openSnapshotStore says why).
const table = { client, tableName: config.store.tableName, clusterId: config.store.clusterId };
const rules = createAdmissionRulesCache({
  snapshots: openSnapshotStore(table),
  placements: openPlacementStore(table),
  clusterId: config.store.clusterId,
  refreshSeconds: config.store.refreshSeconds,
  maxStaleSeconds: config.store.maxStaleSeconds,
  deadlineMs: RULES_DEADLINE_MS,
  capacityFlavour: config.capacityFlavour,
  onRefreshFailure: (error) =>
    logger.warn('rule refresh failed; serving the last rules and placements', {
      errorName: error.name,
      errorMessage: error.message,
    }),
});
const acceptedTokens = createTokenSource(config.token, {
  ...(config.token.kind === 'secret' ? { secrets: secretReaderFor(config.token.secretArn, CLIENT_TIMEOUTS) } : {}),
  deadlineMs: TOKEN_DEADLINE_MS,
  onRefreshFailure: tokenRefreshFailureReporter(logger, metrics),
  onIgnoredVersion: ignoredTokenVersionReporter(logger),
});

function stampSource(stampKey: StampKeyConfig): StampSource {
  const secrets = stampKey.kind === 'secret' ? { secrets: secretReaderFor(stampKey.secretArn, CLIENT_TIMEOUTS) } : {};
  return createStampSource(stampKey, {
    ...secrets,
    deadlineMs: RULES_DEADLINE_MS,
    // The last key set stays in use; the warning says a rotation is not being picked up (never a key).
    onRefreshFailure: (error) =>
      logger.warn('stamp key refresh failed; keeping the last keys', { ...errorLogFields(error) }),
    onIgnoredVersion: (error) =>
      logger.warn('stamp key version ignored', {
        versionStage: error.context['versionStage'],
        ...errorLogFields(error),
      }),
  });
}

/** The Lambda entry point: the HTTP admission handler with the Lambda context in logs and EMF metrics flushed per call. */
export const handler = middy(
  createAdmissionHandler({
    rules,
    acceptedTokens,
    logger,
    metrics,
    maxBodyBytes: config.maxBodyBytes,
    enforcement: config.enforcement,
    // One UpdateItem per Diversity Pod created, within its own deadline (lib/endpoint/diversity-sequence.ts).
    diversityCounters: openDiversityCounterStore(table),
    // Read beside the rules, within their deadline, and re-read on the token's schedule: a key set, as the token is.
    ...(config.stampKey === undefined ? {} : { stamps: stampSource(config.stampKey) }),
  }),
)
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
