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
import { createAdmissionHandler, createAdmissionRulesCache, createTokenSource, readAdmissionConfig, tokenRefreshFailureReporter } from '../../lib/endpoint/index.ts';
import { createDynamoClient, createPlacementStore, createSnapshotStore } from '../../lib/store/index.ts';

const config = readAdmissionConfig(process.env);
const logger = new Logger();
const metrics = new Metrics();

// A refresh runs on the request path: bounded well inside the function's 3 s and the cluster's 5 s, so a slow store
// means stale rules served (or a 500 on a cold start), never a timed-out admission.
const client = createDynamoClient({
  ...(config.store.endpoint === undefined ? {} : { endpoint: config.store.endpoint }),
  maxAttempts: 2,
  connectionTimeoutMs: 500,
  requestTimeoutMs: 1000,
});
const rules = createAdmissionRulesCache({
  snapshots: createSnapshotStore({ client, tableName: config.store.tableName }),
  placements: createPlacementStore({ client, tableName: config.store.tableName }),
  clusterId: config.store.clusterId,
  refreshSeconds: config.store.refreshSeconds,
  maxStaleSeconds: config.store.maxStaleSeconds,
  capacityFlavour: config.capacityFlavour,
  onRefreshFailure: (error) =>
    logger.warn('rule refresh failed; serving the last rules and placements', { errorName: error.name, errorMessage: error.message }),
});

/** The Lambda entry point: the HTTP admission handler with the Lambda context in logs and EMF metrics flushed per call. */
export const handler = middy(
  createAdmissionHandler({
    rules,
    acceptedTokens: createTokenSource(config.token, { onRefreshFailure: tokenRefreshFailureReporter(logger, metrics) }),
    logger,
    metrics,
    maxBodyBytes: config.maxBodyBytes,
    enforcement: config.enforcement,
  }),
)
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics, { captureColdStartMetric: true }));
