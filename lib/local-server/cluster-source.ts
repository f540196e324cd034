/** The cluster as the local server's rule source: the sync function's own code, run in-process on an interval. */
import { ClusterError } from '../errors/index.ts';
import type { PodMutationSource } from '../cluster/index.ts';
import { DISCARDED_LOGGER, DISCARDED_METRICS, type Logger } from '../observability/index.ts';
import { buildSnapshotContent, syncOnce, type SyncDependencies } from '../sync/index.ts';
import type { RuleSource } from './source.ts';

/** Options of a cluster rule source. */
interface ClusterRuleSourceOptions {
  readonly source: PodMutationSource;
  /** Seconds between syncs once the server runs (the Lambda's SYNC_INTERVAL_SECONDS). */
  readonly intervalSeconds: number;
  /** For the start message, e.g. "cluster of kubeconfig ~/.kube/config". */
  readonly description: string;
  /** The sync's log (one line per sync, as the Lambda's); discarded when absent. */
  readonly logger?: Logger;
  /** Epoch milliseconds. */
  readonly clock?: () => number;
  /** The cluster's Nodes and NodePools, published with the rules as the sync Lambda publishes them; absent: none. */
  readonly capacity?: SyncDependencies['capacity'];
}

/**
 * Rules synced from a cluster exactly as the sync Lambda does it (syncOnce: list, validate, publish only what
 * changed, write Accepted status back); `watch` ticks every intervalSeconds. A failed sync publishes nothing and
 * rejects, so the last snapshot stays current.
 */
function createClusterRuleSource(options: ClusterRuleSourceOptions): RuleSource {
  const clock = options.clock ?? Date.now;
  return {
    description: options.description,
    async publishRules({ snapshots: store, records, bindings }, clusterId) {
      let listed: Awaited<ReturnType<PodMutationSource['listPodMutations']>> | undefined;
      // Keep the list the sync read, to report its invalid rules the way the file source does.
      const source: PodMutationSource = {
        readClusterUid: () => options.source.readClusterUid(),
        listPodMutations: async () => (listed = await options.source.listPodMutations()),
        listPodPlacements: () => options.source.listPodPlacements(),
        patchStatus: (name, status, kind) => options.source.patchStatus(name, status, kind),
      };
      const report = await syncOnce({
        source,
        store,
        records,
        // The server's own embedded table: its first sync binds it to the kubeconfig's cluster.
        binding: { store: bindings, owner: `serve:${process.pid}` },
        clusterId,
        logger: options.logger ?? DISCARDED_LOGGER,
        metrics: DISCARDED_METRICS,
        clock,
        ...(options.capacity === undefined ? {} : { capacity: options.capacity }),
      });
      if (report.outcome === 'failed' || listed === undefined || report.version === undefined) {
        throw new ClusterError(
          `syncing from the ${options.description} failed: ${report.error ?? 'no list was read'}`,
          {
            context: { step: report.failedStep },
          },
        );
      }
      const { invalid } = buildSnapshotContent(listed, clock());
      return {
        rules: report.valid,
        invalid,
        outcome: { published: report.outcome === 'published', version: report.version },
      };
    },
    watch(onChange) {
      const timer = setInterval(onChange, options.intervalSeconds * 1000);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}

export { createClusterRuleSource };
