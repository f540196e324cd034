/**
 * The capacity boundary: Nodes and NodePools from untrusted JSON or YAML, as `kubectl get nodes,nodepools -o yaml`
 * prints them (the fixture is that command's output from the real-cluster suite's API server, with Karpenter's CRD),
 * as several documents and as API lists; every field it reads checked with its path.
 */
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { Capacity, readCapacityObjects, type CapacityObjects } from '../../lib/capacity/index.ts';
import { MalformedInputError } from '../../lib/errors/index.ts';
import { fixtureText } from '../support/fixtures.ts';
import { nodeObject, nodePoolObject, placementOf } from './support.ts';
import { type NodePoolRequirement } from '../../lib/capacity/node-pools.ts';
import { type SkippedObject } from '../../lib/capacity/read.ts';

type Json = Record<string, unknown>;

const PRINTED = 'capacity/kubectl-get-nodes-nodepools.yaml';

/** The message of what `read` throws, which must be a MalformedInputError. */
function failure(read: () => unknown): MalformedInputError {
  try {
    read();
  } catch (error) {
    if (error instanceof MalformedInputError) return error;
    throw error;
  }
  throw new Error('the read did not fail');
}

describe('readCapacityObjects', () => {
  it('reads the Nodes and NodePools of `kubectl get nodes,nodepools -o yaml`', () => {
    const read: CapacityObjects = readCapacityObjects([parse(fixtureText(PRINTED))], PRINTED);
    expect(read.nodes).toHaveLength(9);
    expect(read.nodes.find((node) => node.name === 'legacy-2')?.unschedulable).toBe(true);
    expect(read.nodes.find((node) => node.name === 'batch-spot-1')?.taints).toEqual([
      { key: 'example.com/spot', value: 'true', effect: 'NoSchedule' },
    ]);
    expect(read.nodePools.map((pool) => pool.name)).toEqual(['general', 'gpu']);
    const [general, gpu] = read.nodePools;
    expect(general).toMatchObject({
      weight: 10,
      labels: { 'example.com/team': 'shop' },
      limits: { cpu: '1000' },
      nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      ready: undefined,
    });
    const generation: NodePoolRequirement = {
      key: 'karpenter.k8s.aws/instance-generation',
      operator: 'Gt',
      values: ['4'],
    };
    expect(general?.requirements).toContainEqual(generation);
    expect(gpu?.taints).toEqual([{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }]);
    expect(read.skipped).toEqual([]);
  });

  it('gives a capacity that judges Pods against what kubectl printed', () => {
    const capacity = Capacity.of(readCapacityObjects([parse(fixtureText(PRINTED))], PRINTED));
    expect(capacity.judge(placementOf({ nodeSelector: { 'example.com/node-pool': 'legacy' } })).text()).toBe(
      'fits 1 Node',
    );
    expect(capacity.judge(placementOf({ nodeSelector: { 'example.com/team': 'shop' } })).text()).toBe(
      'fits NodePool general; 0 Nodes',
    );
  });

  it('reads several documents, a NodeList and a NodePoolList alike', () => {
    const text = [
      'apiVersion: v1\nkind: NodeList\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}',
      'apiVersion: v1\nkind: Node\nmetadata: {name: b}',
      `apiVersion: karpenter.sh/v1\nkind: NodePoolList\nitems:\n- ${JSON.stringify(nodePoolObject('general'))}`,
    ].join('\n---\n');
    const read = readCapacityObjects(
      parseAllDocuments(text).map((document) => document.toJS() as unknown),
      'several.yaml',
    );
    expect(read.nodes.map((node) => node.name)).toEqual(['a', 'b']);
    expect(read.nodePools.map((pool) => pool.name)).toEqual(['general']);
  });

  it('leaves out and lists objects of other kinds', () => {
    const read = readCapacityObjects(
      [{ kind: 'List', items: [nodeObject('a'), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' } }] }],
      'mixed.yaml',
    );
    expect(read.nodes).toHaveLength(1);
    const pod: SkippedObject = { where: 'mixed.yaml: document 1, items[1]', kind: 'Pod', name: 'web' };
    expect(read.skipped).toEqual([pod]);
  });

  it('reads the status that takes a NodePool out or notes its limits', () => {
    const [pool] = readCapacityObjects(
      [
        nodePoolObject(
          'general',
          {},
          {
            spec: { limits: { cpu: 1000, memory: '4000Gi' } },
            status: {
              resources: { cpu: '1k', memory: '3Ti' },
              conditions: [
                {
                  type: 'Ready',
                  status: 'False',
                  reason: 'NodeClassNotReady',
                  message: 'EC2NodeClass default not found',
                },
              ],
            },
            metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' },
          },
        ),
      ],
      'pool.yaml',
    ).nodePools;
    expect(pool).toMatchObject({
      limits: { cpu: '1000', memory: '4000Gi' },
      resources: { cpu: '1k', memory: '3Ti' },
      ready: false,
      notReadyReason: 'EC2NodeClass default not found',
      deleting: true,
    });
  });

  it.each<[string, Json, string]>([
    [
      'a taint of an unknown effect',
      nodeObject('ip-1', {}, { taints: [{ key: 'spot', effect: 'NoSchedul' }] }),
      'nodes.yaml: document 1 (Node ip-1): spec.taints[0].effect: expected one of NoSchedule, PreferNoSchedule, NoExecute, got "NoSchedul"',
    ],
    [
      'a label that is no string',
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'ip-1', labels: { zone: 1 } } },
      'nodes.yaml: document 1 (Node ip-1): metadata.labels.zone: expected a string, got a number',
    ],
    [
      'a Node without a name',
      { apiVersion: 'v1', kind: 'Node', metadata: {} },
      'nodes.yaml: document 1 (Node): metadata.name: required, and missing or empty',
    ],
    [
      'a cordon that is no boolean',
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'ip-1' }, spec: { unschedulable: 'yes' } },
      'nodes.yaml: document 1 (Node ip-1): spec.unschedulable: expected a boolean, got a string',
    ],
    [
      'a NodePool of another API version',
      { ...nodePoolObject('general'), apiVersion: 'karpenter.sh/v1beta1' },
      'nodes.yaml: document 1 (NodePool general): apiVersion: expected karpenter.sh/v1, got "karpenter.sh/v1beta1"',
    ],
    [
      'a NodePool without a node class',
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'general' },
        spec: { template: { spec: {} } },
      },
      'nodes.yaml: document 1 (NodePool general): spec.template.spec.nodeClassRef: required, and missing',
    ],
    [
      'an operator Karpenter does not take',
      nodePoolObject('general', { requirements: [{ key: 'zone', operator: 'Matches', values: ['a'] }] }),
      'nodes.yaml: document 1 (NodePool general): spec.template.spec.requirements[0].operator: expected one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte, got "Matches"',
    ],
    [
      'a Gt without an integer',
      nodePoolObject('general', { requirements: [{ key: 'gen', operator: 'Gt', values: ['four'] }] }),
      'nodes.yaml: document 1 (NodePool general): spec.template.spec.requirements[0].values: Gt needs exactly one non-negative integer',
    ],
    [
      'a requirement on the NodePool label',
      nodePoolObject('general', { requirements: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: ['x'] }] }),
      "nodes.yaml: document 1 (NodePool general): spec.template.spec.requirements[0].key: the label karpenter.sh/nodepool is restricted (Karpenter's NodePool CRD refuses it)",
    ],
    [
      'a template label in the karpenter.sh domain',
      nodePoolObject('general', {}, { labels: { 'karpenter.sh/team': 'a' } }),
      `nodes.yaml: document 1 (NodePool general): spec.template.metadata.labels["karpenter.sh/team"]: the label domain "karpenter.sh" is restricted (Karpenter's NodePool CRD refuses it)`,
    ],
    [
      'a limit that is no quantity',
      nodePoolObject('general', {}, { spec: { limits: { cpu: 'lots' } } }),
      'nodes.yaml: document 1 (NodePool general): spec.limits.cpu: expected a quantity such as 1000, 250m or 64Gi, got "lots"',
    ],
    [
      'an object without a kind',
      { metadata: { name: 'x' } },
      'nodes.yaml: document 1: the object has no kind; expected a Node, a NodePool or a List of them',
    ],
    [
      'a document that is no object',
      ['a'] as unknown as Json,
      'nodes.yaml: document 1: expected a Kubernetes object, got a list',
    ],
  ])('refuses %s, naming the object and the field', (_, document, message) => {
    const error = failure(() => readCapacityObjects([document], 'nodes.yaml'));
    expect(error.message).toBe(message);
  });

  it('names every malformed object at once', () => {
    const error = failure(() =>
      readCapacityObjects(
        [
          {
            kind: 'List',
            items: [
              nodeObject('ok'),
              { kind: 'Node', metadata: { name: 'a', labels: [] } },
              { kind: 'Node', metadata: {} },
            ],
          },
        ],
        'nodes.yaml',
      ),
    );
    expect(error.message.split('\n')).toEqual([
      'nodes.yaml: document 1, items[1] (Node a): metadata.labels: expected an object, got a list',
      'nodes.yaml: document 1, items[2] (Node): metadata.name: required, and missing or empty',
    ]);
    expect(error.context.issues).toHaveLength(2);
  });
});
