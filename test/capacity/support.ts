/** Builders of the capacity tests: Pods' placements from their spec, Nodes and NodePools in Kubernetes' shapes. */
import { Capacity, Placement, readCapacityObjects } from '../../lib/capacity/index.ts';
import { podFacts } from '../../lib/engine/index.ts';
import { type CapacityNode } from '../../lib/capacity/nodes.ts';
import { type CapacityParts } from '../../lib/capacity/capacity.ts';
import { type NodePool } from '../../lib/capacity/node-pools.ts';
import { type PlacementFields } from '../../lib/capacity/placement.ts';

type Json = Record<string, unknown>;

/** The placement of a Pod with this spec, read through the engine's Pod boundary as admission reads it. */
export function placementOf(spec: Json): Placement {
  // The engine's PodFacts is the shape a placement is read from.
  const fields: PlacementFields = podFacts({ metadata: { name: 'pod' }, spec }, 'default');
  return Placement.of(fields);
}

/** A Pod spec with these required node selector terms (each a list of matchExpressions). */
export function requiring(...terms: Json[][]): Json {
  return {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })),
        },
      },
    },
  };
}

/** A v1 Node object. */
export function nodeObject(
  name: string,
  labels: Record<string, string> = {},
  spec: { taints?: Json[]; unschedulable?: boolean } = {},
): Json {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec };
}

/** A Node as the capacity reads it. */
export function node(
  name: string,
  labels: Record<string, string> = {},
  spec: { taints?: Json[]; unschedulable?: boolean } = {},
): CapacityNode {
  return readCapacityObjects([nodeObject(name, labels, spec)], 'test').nodes[0]!;
}

/** A karpenter.sh/v1 NodePool object: `template` is spec.template.spec, `labels` its template's labels. */
export function nodePoolObject(
  name: string,
  template: Json = {},
  extra: { labels?: Record<string, string>; spec?: Json; status?: Json; metadata?: Json } = {},
): Json {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, ...extra.metadata },
    spec: {
      ...extra.spec,
      template: {
        ...(extra.labels === undefined ? {} : { metadata: { labels: extra.labels } }),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [],
          ...template,
        },
      },
    },
    ...(extra.status === undefined ? {} : { status: extra.status }),
  };
}

/** A NodePool as the capacity reads it. */
export function nodePool(...args: Parameters<typeof nodePoolObject>): NodePool {
  return readCapacityObjects([nodePoolObject(...args)], 'test').nodePools[0]!;
}

/** True when the Pod of this spec fits the one Node. */
export function fitsNode(spec: Json, candidate: CapacityNode): boolean {
  const parts: CapacityParts = { nodes: [candidate] };
  return Capacity.of(parts).judge(placementOf(spec)).fits;
}

/** True when the Pod of this spec fits the one NodePool. */
export function fitsNodePool(spec: Json, candidate: NodePool): boolean {
  return Capacity.of({ nodePools: [candidate] }).judge(placementOf(spec)).fits;
}
