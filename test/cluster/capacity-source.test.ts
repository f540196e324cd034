/**
 * createCapacitySource: the cluster's Nodes and NodePools, paged, read through lib/capacity's boundary. The real API
 * server's answers (the NodePool CRD applied and absent, RBAC) are in test/real-cluster/capacity-source.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import { createCapacitySource } from '../../lib/cluster/index.ts';
import { ClusterError, MalformedInputError } from '../../lib/errors/index.ts';
import { placementOf } from '../capacity/support.ts';
import { kubeconfigFor, useFakeApiServer, type WorkloadObjectInput } from './fake-api-server.ts';
import { type CapacitySource } from '../../lib/cluster/capacity-source.ts';

const fake = useFakeApiServer((server) => server.setNodePoolsInstalled(false));

function sourceFor(pageSize?: number): CapacitySource {
  return createCapacitySource(
    { mode: 'kubeconfigText', text: kubeconfigFor(fake()) },
    pageSize === undefined ? {} : { pageSize },
  );
}

function node(name: string, labels: Record<string, string> = {}): WorkloadObjectInput {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: {} };
}

function nodePool(name: string, values: readonly string[] = ['on-demand']): WorkloadObjectInput {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values }],
        },
      },
    },
  };
}

describe('reading the capacity of a cluster', () => {
  it('reads every Node and NodePool, across pages', async () => {
    fake().setNodePoolsInstalled(true);
    fake().putObjects([
      ...Array.from({ length: 7 }, (_, index) => node(`node-${index}`, { pool: 'general' })),
      nodePool('general'),
      nodePool('spot', ['spot']),
    ]);

    const read = await sourceFor(3).read();

    expect(read.nodes.map((each) => each.name)).toEqual(Array.from({ length: 7 }, (_, index) => `node-${index}`));
    expect(read.nodePools.map((each) => each.name)).toEqual(['general', 'spot']);
    expect(read.skipped).toEqual([]);
    const nodeLists = fake().requests.filter((request) => request.path === '/api/v1/nodes');
    expect(nodeLists.length).toBe(3);
  });

  it('reads a cluster without the NodePool CRD as one with no NodePools', async () => {
    fake().putObjects([node('node-a')]);

    const read = await sourceFor().read();

    expect(read.nodes.map((each) => each.name)).toEqual(['node-a']);
    expect(read.nodePools).toEqual([]);
  });

  it('gives a capacity that judges a misspelt pool to fit nowhere', async () => {
    fake().putObjects([node('node-a', { 'karpenter.sh/nodepool': 'general' })]);
    const capacity = Capacity.of(await sourceFor().read());
    const misspelt = placementOf({ nodeSelector: { 'karpenter.sh/nodepool': 'genral' } });
    const right = placementOf({ nodeSelector: { 'karpenter.sh/nodepool': 'general' } });

    expect(capacity.judge(misspelt).kind).toBe('nowhere');
    expect(capacity.judge(right).kind).toBe('fits');
  });

  it('rejects a malformed Node naming it and the field, rather than judging against less than the cluster has', async () => {
    fake().putObjects([{ ...node('node-a'), spec: { taints: [{ key: 'dedicated', effect: 'Sometimes' }] } }]);

    const read = sourceFor().read();

    await expect(read).rejects.toBeInstanceOf(MalformedInputError);
    await expect(read).rejects.toThrow(/the cluster: .*node-a.*spec\.taints\[0\]\.effect/);
  });

  it('rejects with reason forbidden naming the grant when the identity may not list Nodes', async () => {
    fake().fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { resource: 'nodes' });

    const read = sourceFor().read();

    await expect(read).rejects.toBeInstanceOf(ClusterError);
    await expect(read).rejects.toHaveProperty('context.reason', 'forbidden');
    await expect(read).rejects.toThrow(
      /list nodes \(verb "list", resource "nodes".*apply infra\/rbac\.yaml \(the sync\)/,
    );
  });

  it('rejects when the NodePools cannot be listed for another reason than an absent CRD', async () => {
    fake().setNodePoolsInstalled(true);
    fake().fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { resource: 'nodepools' });

    await expect(sourceFor().read()).rejects.toHaveProperty('context.reason', 'forbidden');
  });
});
