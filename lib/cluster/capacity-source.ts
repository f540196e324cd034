/**
 * The cluster's capacity for report, rollout and the sync: its Nodes and its Karpenter NodePools (karpenter.sh/v1),
 * listed page by page and read through lib/capacity's one boundary, as `--capacity FILE` is.
 */
import { readCapacityObjects, type CapacityObjects } from '../capacity/index.ts';
import type { ClusterConfig } from './config.ts';
import { createListing, type WorkloadObjectSourceOptions } from './workload-objects.ts';

/** Tuning and collaborators of a CapacitySource: those of a WorkloadObjectSource. */
type CapacitySourceOptions = WorkloadObjectSourceOptions;

/**
 * The Nodes and NodePools of one cluster, read whole on each call.
 * @internal Exported for tests: the tests type the source they run against the API server.
 */
interface CapacitySource {
  /**
   * Every Node and every NodePool, read through readCapacityObjects. A cluster without the NodePool CRD (404) has no
   * NodePools; any other failure, or a malformed Node or NodePool, rejects (ClusterError, MalformedInputError), since a
   * capacity missing part of the cluster would judge Pods against less than it has.
   */
  read(): Promise<CapacityObjects>;
}

/** Where readCapacityObjects' messages say the objects came from. */
const SOURCE = 'the cluster';

/**
 * A source of the configured cluster's capacity, connecting as createWorkloadObjectSource does; an out-of-range option
 * throws ConfigurationError.
 */
function createCapacitySource(config: ClusterConfig, options: CapacitySourceOptions = {}): CapacitySource {
  const listing = createListing(config, options);
  const all = async (kind: 'Node' | 'NodePool'): Promise<unknown[]> => {
    const items: unknown[] = [];
    for await (const page of listing.pages(kind)) items.push(...page);
    return items;
  };
  return {
    async read() {
      const [nodes, nodePools] = await Promise.all([all('Node'), all('NodePool')]);
      return readCapacityObjects([...nodes, ...nodePools], SOURCE);
    },
  };
}

export { createCapacitySource };
export type { CapacitySource };
