/** The published form of a capacity: what the sync stores in the snapshot, read back through the capacity boundary. */
import { describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import { node, nodePool, placementOf } from './support.ts';

const CAPACITY = Capacity.of({
  nodes: [
    node('ip-1', { 'example.com/pool': 'general', 'kubernetes.io/hostname': 'ip-1' }),
    node('ip-2', { 'example.com/pool': 'general', 'kubernetes.io/hostname': 'host-2' }),
    node('ip-3', { 'example.com/pool': 'general' }, { taints: [{ key: 'example.com/gpu', effect: 'NoSchedule' }] }),
  ],
  nodePools: [
    nodePool('general', {}, { labels: { 'example.com/pool': 'general' }, spec: { weight: 10 } }),
    nodePool('gone', {}, { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } }),
    nodePool('static', {}, { spec: { replicas: 2, limits: { cpu: '10' } }, status: { resources: { cpu: '10' } } }),
  ],
});

function readBack(capacity: Capacity): Capacity {
  return Capacity.fromPublished(JSON.parse(JSON.stringify(capacity.published())), 'snapshot.capacity');
}

describe('the published form of a capacity', () => {
  it('keeps the Node shapes, each Node named once, and a hostname only where it differs from the name', () => {
    const published = CAPACITY.published() as { nodeShapes: { nodes: unknown[] }[] };
    expect(published.nodeShapes.map((shape) => shape.nodes)).toEqual([['ip-1', ['ip-2', 'host-2']], [['ip-3']]]);
  });

  it('reads back the same shapes and NodePools', () => {
    const back = readBack(CAPACITY);
    expect(back.shapes).toEqual(CAPACITY.shapes);
    expect(back.nodePools).toEqual(CAPACITY.nodePools);
  });

  it.each([
    ['a Pod on the general pool', { nodeSelector: { 'example.com/pool': 'general' } }],
    ['a Pod on a hostname', { nodeSelector: { 'kubernetes.io/hostname': 'host-2' } }],
    ['a Pod on a misspelt pool', { nodeSelector: { 'example.com/pool': 'genral' } }],
  ])('judges %s as the capacity it was published from', (_case, spec) => {
    expect(readBack(CAPACITY).judge(placementOf(spec)).text()).toBe(CAPACITY.judge(placementOf(spec)).text());
  });

  it('publishes nothing for an unknown capacity', () => {
    expect(Capacity.unknown().published()).toBeUndefined();
  });

  it.each([
    ['not an object', [], 'snapshot.capacity: expected an object'],
    ['another format', { format: 2, nodeShapes: [], nodePools: [] }, 'snapshot.capacity.format: expected 1, got 2'],
    [
      'a shape without Nodes',
      { format: 1, nodeShapes: [{ labels: {}, taints: [], unschedulable: false, nodes: [] }], nodePools: [] },
      'snapshot.capacity.nodeShapes[0].nodes: expected a non-empty list',
    ],
    [
      'a Node name that is not a string',
      { format: 1, nodeShapes: [{ labels: {}, taints: [], unschedulable: false, nodes: [7] }], nodePools: [] },
      'snapshot.capacity.nodeShapes[0].nodes[0]: expected a Node name',
    ],
    [
      'a taint of an unknown effect',
      {
        format: 1,
        nodeShapes: [{ labels: {}, taints: [{ key: 'k', effect: 'Never' }], unschedulable: false, nodes: ['n'] }],
        nodePools: [],
      },
      'snapshot.capacity.nodeShapes[0].taints[0].effect: expected one of NoSchedule, PreferNoSchedule, NoExecute',
    ],
    [
      'a NodePool requirement of an unknown operator',
      {
        format: 1,
        nodeShapes: [],
        nodePools: [
          {
            name: 'general',
            requirements: [{ key: 'k', operator: 'Within', values: [] }],
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          },
        ],
      },
      'snapshot.capacity.nodePools[0].requirements[0].operator: expected one of In, NotIn',
    ],
    [
      'a NodePool limit that is no quantity',
      {
        format: 1,
        nodeShapes: [],
        nodePools: [
          {
            name: 'general',
            limits: { cpu: 'lots' },
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          },
        ],
      },
      'snapshot.capacity.nodePools[0].limits.cpu: expected a quantity, got "lots"',
    ],
  ])('refuses %s, naming the field', (_case, value, message) => {
    expect(() => Capacity.fromPublished(value, 'snapshot.capacity')).toThrow(message);
  });
});
