/**
 * The Nodes of the test cluster: API objects only, labelled like the pools of docs/operations.md's migration story (the
 * legacy pool merged into `merged`, the batch pools moving to Spot), Ready, and tainted where Spot capacity is.
 * No kubelet heartbeats them; the node-lifecycle controller is off, so they stay Ready.
 */
import type { ApiClient, Json } from './api.ts';

/** One Node of the test cluster. */
interface TestNode {
  readonly name: string;
  readonly pool: string;
  readonly capacityType: 'spot' | 'on-demand';
  readonly instanceType: string;
  readonly arch: 'amd64' | 'arm64';
  readonly zone: string;
  readonly taints: readonly { readonly key: string; readonly value?: string; readonly effect: string }[];
  /** Labels beside the pool's (a test's own Nodes). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Extended resources the Node offers beside cpu, memory and pods, such as nvidia.com/gpu (a test's own Nodes). */
  readonly extendedResources?: Readonly<Record<string, string>>;
}

// examples/rules/batch-to-spot-pool.yaml tolerates this taint.
const SPOT_TAINT = { key: 'example.com/spot', value: 'true', effect: 'NoSchedule' } as const;

/**
 * The pools: `legacy` (what migrate-legacy-pool moves away from), `merged` (on-demand and untainted Spot, as Karpenter
 * labels them, with two instance types and both architectures), and the batch pools, whose Spot Nodes are tainted.
 */
const TEST_NODES: readonly TestNode[] = [
  {
    name: 'legacy-1',
    pool: 'legacy',
    capacityType: 'on-demand',
    instanceType: 'm5.large',
    arch: 'amd64',
    zone: 'eu-west-1a',
    taints: [],
  },
  {
    name: 'legacy-2',
    pool: 'legacy',
    capacityType: 'on-demand',
    instanceType: 'm5.large',
    arch: 'amd64',
    zone: 'eu-west-1b',
    taints: [],
  },
  {
    name: 'merged-1',
    pool: 'merged',
    capacityType: 'on-demand',
    instanceType: 'm6i.large',
    arch: 'amd64',
    zone: 'eu-west-1a',
    taints: [],
  },
  {
    name: 'merged-2',
    pool: 'merged',
    capacityType: 'on-demand',
    instanceType: 'm7g.large',
    arch: 'arm64',
    zone: 'eu-west-1b',
    taints: [],
  },
  {
    name: 'merged-spot-1',
    pool: 'merged',
    capacityType: 'spot',
    instanceType: 'm6i.large',
    arch: 'amd64',
    zone: 'eu-west-1a',
    taints: [],
  },
  {
    name: 'merged-spot-2',
    pool: 'merged',
    capacityType: 'spot',
    instanceType: 'm7g.large',
    arch: 'arm64',
    zone: 'eu-west-1b',
    taints: [],
  },
  {
    name: 'batch-ondemand-1',
    pool: 'batch-ondemand',
    capacityType: 'on-demand',
    instanceType: 'c6i.large',
    arch: 'amd64',
    zone: 'eu-west-1a',
    taints: [],
  },
  {
    name: 'batch-spot-1',
    pool: 'batch-spot',
    capacityType: 'spot',
    instanceType: 'c6i.large',
    arch: 'amd64',
    zone: 'eu-west-1a',
    taints: [SPOT_TAINT],
  },
  {
    name: 'batch-spot-2',
    pool: 'batch-spot',
    capacityType: 'spot',
    instanceType: 'c7g.large',
    arch: 'arm64',
    zone: 'eu-west-1b',
    taints: [SPOT_TAINT],
  },
];

function nodeObject(node: TestNode, now: string): Json {
  const resources = { cpu: '16', memory: '64Gi', pods: '250', ...node.extendedResources };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: node.name,
      labels: {
        'kubernetes.io/hostname': node.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': node.arch,
        'node.kubernetes.io/instance-type': node.instanceType,
        'topology.kubernetes.io/zone': node.zone,
        'example.com/node-pool': node.pool,
        'karpenter.sh/capacity-type': node.capacityType,
        ...node.labels,
      },
    },
    status: {
      capacity: resources,
      allocatable: resources,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
      nodeInfo: { architecture: node.arch, operatingSystem: 'linux', kubeletVersion: 'v1.37.2' },
    },
  };
}

/**
 * Creates the test Nodes, Ready. The TaintNodesByCondition admission plugin puts node.kubernetes.io/not-ready on
 * every new Node and only the node-lifecycle controller (off here) would take it away, so each Node's taints are set
 * to its own right after the create.
 */
async function createTestNodes(api: ApiClient, nodes: readonly TestNode[] = TEST_NODES): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  for (const node of nodes) {
    await api.json('POST', '/api/v1/nodes', { body: nodeObject(node, now) });
    await api.json('PATCH', `/api/v1/nodes/${node.name}`, {
      body: { spec: { taints: node.taints.length === 0 ? null : node.taints } },
      contentType: 'application/merge-patch+json',
    });
  }
}

export { createTestNodes, TEST_NODES, SPOT_TAINT };
export type { TestNode };
