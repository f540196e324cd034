/**
 * A Node fits as kube-scheduler's filters decide: the cases of their own tests, k8s.io/kubernetes
 * pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go (TestNodeAffinity),
 * tainttoleration/taint_toleration_test.go (TestTaintTolerationFilter) and
 * nodeunschedulable/node_unschedulable_test.go (TestNodeUnschedulable), at v1.37.2.
 */
import { describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import { fitsNode, node, placementOf, requiring } from './support.ts';

type Json = Record<string, unknown>;

const expression = (key: string, operator: string, values?: string[]) => ({
  key,
  operator,
  ...(values === undefined ? {} : { values }),
});

describe('NodeAffinity, as TestNodeAffinity lists it', () => {
  it.each<[string, Json, Record<string, string>, boolean, string?]>([
    ['missing labels', { nodeSelector: { foo: 'bar' } }, {}, false],
    ['same labels', { nodeSelector: { foo: 'bar' } }, { foo: 'bar' }, true],
    ['node labels are superset', { nodeSelector: { foo: 'bar' } }, { foo: 'bar', baz: 'blah' }, true],
    ['node labels are subset', { nodeSelector: { foo: 'bar', baz: 'blah' } }, { foo: 'bar' }, false],
    ['matchExpressions In that matches', requiring([expression('foo', 'In', ['bar', 'value2'])]), { foo: 'bar' }, true],
    [
      'matchExpressions Gt that matches, read as integers',
      requiring([expression('kernel-version', 'Gt', ['0204'])]),
      { 'kernel-version': '0206' },
      true,
    ],
    [
      'matchExpressions NotIn that matches',
      requiring([expression('mem-type', 'NotIn', ['DDR', 'DDR2'])]),
      { 'mem-type': 'DDR3' },
      true,
    ],
    ['matchExpressions Exists that matches', requiring([expression('GPU', 'Exists')]), { GPU: 'NVIDIA-GRID-K1' }, true],
    [
      "affinity that doesn't match the labels",
      requiring([expression('foo', 'In', ['value1', 'value2'])]),
      { foo: 'bar' },
      false,
    ],
    ['an empty term, which matches no Node', requiring([]), { foo: 'bar' }, false],
    ['no affinity', {}, { foo: 'bar' }, true],
    ['affinity without a required selector', { affinity: { nodeAffinity: {} } }, { foo: 'bar' }, true],
    [
      'several matchExpressions ANDed that match',
      requiring([expression('GPU', 'Exists'), expression('GPU', 'NotIn', ['AMD', 'INTER'])]),
      { GPU: 'NVIDIA-GRID-K1' },
      true,
    ],
    [
      "several matchExpressions ANDed that don't match",
      requiring([expression('GPU', 'Exists'), expression('GPU', 'In', ['AMD', 'INTER'])]),
      { GPU: 'NVIDIA-GRID-K1' },
      false,
    ],
    [
      'several terms ORed, one matching',
      requiring([expression('foo', 'In', ['bar', 'value2'])], [expression('diffkey', 'In', ['wrong', 'value2'])]),
      { foo: 'bar' },
      true,
    ],
    [
      'affinity and nodeSelector both satisfied',
      { nodeSelector: { foo: 'bar' }, ...requiring([expression('foo', 'Exists')]) },
      { foo: 'bar' },
      true,
    ],
    [
      'affinity satisfied, nodeSelector not',
      { nodeSelector: { foo: 'bar' }, ...requiring([expression('foo', 'Exists')]) },
      { foo: 'barrrrrr' },
      false,
    ],
    [
      'an invalid value in the term, which kube-scheduler cannot parse',
      requiring([expression('foo', 'NotIn', ['invalid value: ___@#$%^'])]),
      { foo: 'bar' },
      false,
    ],
  ])('%s', (_, spec, labels, fits) => {
    expect(fitsNode(spec, node('node1', labels))).toBe(fits);
  });

  const byName = (terms: Json[]) => ({
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
  });
  const field = (operator: string, value: string) => ({ key: 'metadata.name', operator, values: [value] });

  it.each<[string, Json, string, Record<string, string>, boolean]>([
    ['matchFields In that matches the Node', byName([{ matchFields: [field('In', 'node1')] }]), 'node1', {}, true],
    ['matchFields In that does not match', byName([{ matchFields: [field('In', 'node1')] }]), 'node2', {}, false],
    [
      'two terms: matchFields does not match, matchExpressions does',
      byName([
        { matchFields: [field('In', 'node1'), field('In', 'node2')] },
        { matchExpressions: [expression('foo', 'In', ['bar'])] },
      ]),
      'node2',
      { foo: 'bar' },
      true,
    ],
    [
      'one term: matchFields does not match, matchExpressions does',
      byName([{ matchFields: [field('In', 'node1')], matchExpressions: [expression('foo', 'In', ['bar'])] }]),
      'node2',
      { foo: 'bar' },
      false,
    ],
    [
      'one term: both matchFields and matchExpressions match',
      byName([{ matchFields: [field('In', 'node1')], matchExpressions: [expression('foo', 'In', ['bar'])] }]),
      'node1',
      { foo: 'bar' },
      true,
    ],
    [
      'two terms: neither matches',
      byName([{ matchFields: [field('In', 'node1')] }, { matchExpressions: [expression('foo', 'In', ['bar'])] }]),
      'node2',
      { foo: 'not-bar' },
      false,
    ],
  ])('%s', (_, spec, name, labels, fits) => {
    expect(fitsNode(spec, node(name, labels))).toBe(fits);
  });

  it('reads preferred terms as scores, never as a filter', () => {
    const spec = {
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, preference: { matchExpressions: [expression('foo', 'In', ['elsewhere'])] } },
          ],
        },
      },
    };
    expect(fitsNode(spec, node('node1', { foo: 'bar' }))).toBe(true);
  });
});

describe('TaintToleration, as TestTaintTolerationFilter lists it', () => {
  const taint = (key: string, value: string, effect: string) => ({ key, value, effect });

  it.each<[string, Json[], Json[], boolean]>([
    ['no tolerations and a taint', [], [taint('dedicated', 'user1', 'NoSchedule')], false],
    [
      'the toleration of a dedicated Node',
      [taint('dedicated', 'user1', 'NoSchedule')],
      [taint('dedicated', 'user1', 'NoSchedule')],
      true,
    ],
    [
      'a toleration of another value',
      [{ key: 'dedicated', operator: 'Equal', value: 'user2', effect: 'NoSchedule' }],
      [taint('dedicated', 'user1', 'NoSchedule')],
      false,
    ],
    [
      'a toleration with Exists',
      [{ key: 'foo', operator: 'Exists', effect: 'NoSchedule' }],
      [taint('foo', 'bar', 'NoSchedule')],
      true,
    ],
    [
      'several tolerations for several taints',
      [
        { key: 'dedicated', operator: 'Equal', value: 'user2', effect: 'NoSchedule' },
        { key: 'foo', operator: 'Exists', effect: 'NoSchedule' },
      ],
      [taint('dedicated', 'user2', 'NoSchedule'), taint('foo', 'bar', 'NoSchedule')],
      true,
    ],
    [
      'a toleration whose effect differs',
      [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'PreferNoSchedule' }],
      [taint('foo', 'bar', 'NoSchedule')],
      false,
    ],
    [
      'a toleration without an effect',
      [{ key: 'foo', operator: 'Equal', value: 'bar' }],
      [taint('foo', 'bar', 'NoSchedule')],
      true,
    ],
    [
      'an untolerated PreferNoSchedule taint',
      [{ key: 'dedicated', operator: 'Equal', value: 'user2', effect: 'NoSchedule' }],
      [taint('dedicated', 'user1', 'PreferNoSchedule')],
      true,
    ],
    ['no toleration and a PreferNoSchedule taint', [], [taint('dedicated', 'user1', 'PreferNoSchedule')], true],
    ['an untolerated NoExecute taint', [], [taint('dedicated', 'user1', 'NoExecute')], false],
    [
      'Gt under the taint value (comparison operators on)',
      [{ key: 'node.example.com/priority-level', operator: 'Gt', value: '950', effect: 'NoSchedule' }],
      [taint('node.example.com/priority-level', '800', 'NoSchedule')],
      false,
    ],
    [
      'Gt over the taint value',
      [{ key: 'node.kubernetes.io/sla', operator: 'Gt', value: '750', effect: 'NoSchedule' }],
      [taint('node.kubernetes.io/sla', '950', 'NoSchedule')],
      true,
    ],
    [
      'Lt under the taint value',
      [{ key: 'node.example.com/priority-level', operator: 'Lt', value: '800', effect: 'NoSchedule' }],
      [taint('node.example.com/priority-level', '950', 'NoSchedule')],
      false,
    ],
    [
      'Lt over the taint value',
      [{ key: 'node.kubernetes.io/sla', operator: 'Lt', value: '950', effect: 'NoSchedule' }],
      [taint('node.kubernetes.io/sla', '800', 'NoSchedule')],
      true,
    ],
    [
      'Gt and a non-numeric taint value',
      [{ key: 'node.kubernetes.io/sla', operator: 'Gt', value: '950', effect: 'NoSchedule' }],
      [taint('node.kubernetes.io/sla', 'high', 'NoSchedule')],
      false,
    ],
  ])('%s', (_, tolerations, taints, fits) => {
    expect(fitsNode({ tolerations }, node('nodeA', {}, { taints }))).toBe(fits);
  });
});

describe('NodeUnschedulable, as TestNodeUnschedulable lists it', () => {
  it.each<[string, Json[], boolean, boolean]>([
    ['a cordoned Node', [], true, false],
    ['a Node not cordoned', [], false, true],
    [
      'a cordoned Node and the toleration of its taint',
      [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }],
      true,
      true,
    ],
  ])('%s', (_, tolerations, unschedulable, fits) => {
    expect(fitsNode({ tolerations }, node('node', {}, { unschedulable }))).toBe(fits);
  });

  it('says a cordoned Node is cordoned when it is the closest candidate', () => {
    const verdict = Capacity.of({ nodes: [node('node', {}, { unschedulable: true })] }).judge(placementOf({}));
    expect(verdict.closest[0]?.reasons).toEqual([
      'cordoned (spec.unschedulable), and node.kubernetes.io/unschedulable:NoSchedule not tolerated',
    ]);
  });
});

describe('Nodes judged by shape', () => {
  const pool = (name: string, zone: string) =>
    node(name, { 'kubernetes.io/hostname': name, 'example.com/pool': 'merged', 'topology.kubernetes.io/zone': zone });

  it('groups Nodes that differ only in their hostname into one shape, and counts its Nodes', () => {
    const capacity = Capacity.of({ nodes: [pool('a', 'z1'), pool('b', 'z1'), pool('c', 'z2')] });
    expect(capacity.shapes.map((shape) => shape.members.map((member) => member.name))).toEqual([['a', 'b'], ['c']]);
    expect(capacity.nodeCount).toBe(3);
    expect(capacity.judge(placementOf({ nodeSelector: { 'example.com/pool': 'merged' } })).nodes).toBe(3);
  });

  it('judges a Pod pinned to one hostname or one Node name against that Node only', () => {
    const capacity = Capacity.of({ nodes: [pool('a', 'z1'), pool('b', 'z1')] });
    expect(capacity.judge(placementOf({ nodeSelector: { 'kubernetes.io/hostname': 'b' } })).nodes).toBe(1);
    const byName = {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['a'] }] }],
          },
        },
      },
    };
    expect(capacity.judge(placementOf(byName)).nodes).toBe(1);
  });

  it('counts a Node given twice once, as the last one given', () => {
    const capacity = Capacity.of({ nodes: [pool('a', 'z1'), pool('a', 'z2')] });
    expect(capacity.nodeCount).toBe(1);
    expect(capacity.judge(placementOf({ nodeSelector: { 'topology.kubernetes.io/zone': 'z2' } })).nodes).toBe(1);
  });
});
