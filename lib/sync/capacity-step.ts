/**
 * The capacity step of a sync: the cluster's Nodes and NodePools read beside the PodMutations and published in the
 * snapshot, for admission to judge where a changed Pod fits. Never fails the sync: the rules matter more than the
 * capacity, and a snapshot without one leaves admission judging contradictions only.
 */
import { SNAPSHOT_BUDGET } from '../api/index.ts';
import { Capacity, type CapacityObjects } from '../capacity/index.ts';
import { errorLogFields } from '../errors/index.ts';
import type { Logger, Metrics } from '../observability/index.ts';
import type { JsonObject } from '../json/index.ts';

/** Where a sync reads the capacity from (lib/cluster's createCapacitySource). */
interface CapacityReader {
  read(): Promise<CapacityObjects>;
}

/** What the step logs and counts, and for which cluster. */
interface CapacityStepContext {
  readonly clusterId: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/**
 * The capacity's published form, or undefined (with a warning and CapacityUnpublished counted) when it cannot be read,
 * holds no Node and no NodePool, or is above SNAPSHOT_BUDGET.maxCapacityBytes. Never rejects.
 */
async function publishedCapacity(
  reader: CapacityReader,
  context: CapacityStepContext,
): Promise<JsonObject | undefined> {
  const unpublished = (message: string, fields: object) => {
    context.logger.warn(`${message}; the snapshot carries no capacity, so admission judges contradictions only`, {
      clusterId: context.clusterId,
      ...fields,
    });
    context.metrics.addMetric('CapacityUnpublished', 'Count', 1);
    return undefined;
  };
  let published: JsonObject | undefined;
  try {
    const objects = await reader.read();
    // Every Pod would fit nowhere: a listing that wrong (a grant that hides every Node) is no capacity, as report reads it.
    if (objects.nodes.length === 0 && objects.nodePools.length === 0)
      return unpublished('the cluster listed no Node and no NodePool', {});
    published = Capacity.of(objects).published();
  } catch (error) {
    return unpublished('reading the Nodes and NodePools failed', errorLogFields(error));
  }
  const bytes = Buffer.byteLength(JSON.stringify(published));
  if (bytes > SNAPSHOT_BUDGET.maxCapacityBytes)
    return unpublished('the capacity is above the snapshot budget', {
      capacityBytes: bytes,
      maxCapacityBytes: SNAPSHOT_BUDGET.maxCapacityBytes,
    });
  return published;
}

export { publishedCapacity };
export type { CapacityReader };
