/**
 * The sync Lambda, scheduled every minute by EventBridge: wiring only, the logic lives in lib/sync.
 * Module scope holds the configuration, the cluster source and the store, so they live as long as the container
 * (the EKS description, kubeconfig secret and token are cached by the source).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { createCapacitySource, createPodMutationSource, createWorkloadObjectSource } from '../../lib/cluster/index.ts';
import { KEYLESS_STAMPS } from '../../lib/stamp/index.ts';
import { createDynamoClient, openRulesTable } from '../../lib/store/index.ts';
import { createSyncHandler, readSyncConfig, syncOnce, type ProgressDependencies } from '../../lib/sync/index.ts';

const config = readSyncConfig(process.env);
const logger = new Logger();
const metrics = new Metrics();

const source = createPodMutationSource(config.cluster);
// The Nodes and NodePools published with the rules, for admission (and the migration report) to judge where Pods fit.
const capacity = createCapacitySource(config.cluster);
const {
  snapshots: store,
  records,
  leases,
  placements,
  bindings,
} = openRulesTable({
  client: createDynamoClient(config.store.endpoint === undefined ? {} : { endpoint: config.store.endpoint }),
  tableName: config.store.tableName,
  clusterId: config.store.clusterId,
});

/** A per-rule count as a single metric with a rule dimension, which Powertools flushes at once with the service dimension kept. */
function ruleMetric(name: 'PendingPods' | 'UnschedulablePods', rule: string, value: number): void {
  const single = metrics.singleMetric();
  single.addDimension('rule', rule);
  single.addMetric(name, 'Count', value);
}

// The migration report (REPORT_INTERVAL_MINUTES, off at 0), with PendingPods and UnschedulablePods per rule.
const progress: ProgressDependencies | undefined =
  config.reportIntervalMinutes === 0
    ? undefined
    : {
        objects: createWorkloadObjectSource(config.cluster),
        intervalMinutes: config.reportIntervalMinutes,
        records,
        // Managed placement as admission runs it (the table's policies, the PodPlacements published), so that placed Pods read as current.
        placement: {
          flavour: config.capacityFlavour,
          policies: async () => (await placements.readPlacements())?.policies ?? [],
        },
        // Stamps checked by their sum, as `podmutation report` checks them: the sync never holds the stamp key.
        stamps: KEYLESS_STAMPS,
        pendingPodsMetric: (rule, pendingPods) => ruleMetric('PendingPods', rule, pendingPods),
        unschedulablePodsMetric: (rule, unschedulablePods) => ruleMetric('UnschedulablePods', rule, unschedulablePods),
      };

/**
 * The Lambda entry point: a scheduled event syncs every SYNC_INTERVAL_SECONDS for a minute, any other event once.
 * Each sync takes the sync lease without waiting: while another sync (a CLI) holds it, that sync is skipped.
 */
export const handler = middy(
  createSyncHandler({
    intervalSeconds: config.intervalSeconds,
    syncOnce: (context) =>
      syncOnce({
        source,
        store,
        records,
        lease: { leases, owner: `lambda:${context.awsRequestId ?? 'unknown'}` },
        binding: { store: bindings, owner: `lambda:${context.awsRequestId ?? 'unknown'}` },
        clusterId: config.store.clusterId,
        logger,
        metrics,
        capacity,
        ...(progress === undefined ? {} : { progress }),
      }),
  }),
)
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
