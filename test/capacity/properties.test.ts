/** The laws of the capacity model, over generated Nodes, NodePools and Pods. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Capacity, readCapacityObjects } from '../../lib/capacity/index.ts';

import { nodeObject, nodePool, placementOf } from './support.ts';
import { type CapacityNode, type NodeShape, type ShapeMember } from '../../lib/capacity/nodes.ts';
import { type NodePool } from '../../lib/capacity/node-pools.ts';
import { selectorMatchesNode } from '../../lib/scheduling/semantics.ts';

type Json = Record<string, unknown>;

const KEYS = ['example.com/pool', 'example.com/tier', 'karpenter.sh/capacity-type'];
const VALUES = ['a', 'b', 'spot'];
const NAMES = ['n1', 'n2', 'n3', 'n4'];
const TAINT_KEYS = ['example.com/spot', 'example.com/gpu'];

const taint = fc
  .record({
    key: fc.constantFrom(...TAINT_KEYS),
    value: fc.constantFrom('', 'true'),
    effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule'),
  })
  .map(({ value, ...rest }) => (value === '' ? rest : { ...rest, value }));

/** Nodes of distinct names; many share a shape. */
const nodes: fc.Arbitrary<CapacityNode[]> = fc
  .uniqueArray(
    fc.record({
      name: fc.constantFrom(...NAMES),
      labels: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 2 }),
      taints: fc.uniqueArray(taint, { maxLength: 2, selector: (item) => `${item.key}:${item.effect}` }),
      unschedulable: fc.boolean(),
    }),
    { maxLength: 4, selector: (node) => node.name },
  )
  .map((list) =>
    readCapacityObjects(
      list.map(({ name, labels, taints, unschedulable }) =>
        nodeObject(name, { ...labels, 'kubernetes.io/hostname': name }, { taints, unschedulable }),
      ),
      'generated',
    ).nodes.slice(),
  );

const requirement: fc.Arbitrary<Json> = fc.oneof(
  fc.record({
    key: fc.constantFrom(...KEYS),
    operator: fc.constantFrom('In', 'NotIn'),
    values: fc.uniqueArray(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 2 }),
  }),
  fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
  fc.record({
    key: fc.constant('kubernetes.io/hostname'),
    operator: fc.constantFrom('In', 'NotIn'),
    values: fc.constantFrom(...NAMES).map((name) => [name]),
  }),
);

const term = fc.array(requirement, { minLength: 1, maxLength: 3 }).map((matchExpressions) => ({ matchExpressions }));

const toleration: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ key: fc.constantFrom(...TAINT_KEYS), operator: fc.constant('Exists') }),
  fc.record({
    key: fc.constantFrom(...TAINT_KEYS),
    value: fc.constantFrom('', 'true'),
    effect: fc.constantFrom('NoSchedule', 'NoExecute'),
  }),
  fc.constant({ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }),
);

/** A Pod's spec: a nodeSelector, required terms and tolerations (preferences are added by the laws that need them). */
const pod = fc
  .record({
    nodeSelector: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 2 }),
    required: fc.option(fc.array(term, { minLength: 1, maxLength: 2 }), { nil: undefined }),
    tolerations: fc.array(toleration, { maxLength: 2 }),
  })
  .map(({ nodeSelector, required, tolerations }) => ({ nodeSelector, required, tolerations }));

type PodParts = { nodeSelector: Record<string, string>; required: Json[] | undefined; tolerations: Json[] };

function spec(parts: PodParts, preferred: Json[] = []): Json {
  return {
    nodeSelector: parts.nodeSelector,
    tolerations: parts.tolerations,
    affinity: {
      nodeAffinity: {
        ...(parts.required === undefined
          ? {}
          : { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: parts.required } }),
        preferredDuringSchedulingIgnoredDuringExecution: preferred,
      },
    },
  };
}

const preference = fc.record({ weight: fc.integer({ min: 1, max: 100 }), preference: term });

const nodePools: fc.Arbitrary<NodePool[]> = fc
  .array(
    fc.record({
      requirements: fc.array(
        fc.oneof(
          fc.record({
            key: fc.constantFrom('example.com/pool', 'karpenter.sh/capacity-type'),
            operator: fc.constantFrom('In', 'NotIn'),
            values: fc.constantFrom(['a'], ['spot'], ['a', 'b']),
          }),
          fc.record({ key: fc.constant('example.com/tier'), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
        ),
        { maxLength: 2 },
      ),
      taints: fc.uniqueArray(taint, { maxLength: 2, selector: (item) => `${item.key}:${item.effect}` }),
    }),
    { maxLength: 3 },
  )
  .map((list) => list.map((template, index) => nodePool(`pool-${index}`, template)));

describe('the capacity model', () => {
  it('counts the Nodes a Pod fits as the sum of the Nodes it fits one by one: a Pod fits a Node iff it fits its shape', () => {
    fc.assert(
      fc.property(nodes, pod, (all, parts) => {
        const placement = placementOf(spec(parts));
        const verdict = Capacity.of({ nodes: all }).judge(placement);
        const oneByOne = all.filter((node) => Capacity.of({ nodes: [node] }).judge(placement).fits).length;
        expect(verdict.nodes).toBe(oneByOne);
      }),
    );
  });

  it('keeps every Node in exactly one shape, whose labels with its hostname are the Node’s', () => {
    fc.assert(
      fc.property(nodes, (all) => {
        const { shapes } = Capacity.of({ nodes: all });
        const members = shapes.flatMap((shape: NodeShape) =>
          shape.members.map((member: ShapeMember) => ({ shape, member })),
        );
        expect(members.map(({ member }) => member.name).sort()).toEqual(all.map((node) => node.name).sort());
        for (const { shape, member } of members) {
          const original = all.find((node) => node.name === member.name)!;
          expect({ ...shape.labels, 'kubernetes.io/hostname': member.hostname }).toEqual(original.labels);
          expect(shape.taints).toEqual(original.taints);
        }
      }),
    );
  });

  it('never changes a Node verdict for a preferred term', () => {
    fc.assert(
      fc.property(nodes, pod, fc.array(preference, { minLength: 1, maxLength: 2 }), (all, parts, preferred) => {
        const capacity = Capacity.of({ nodes: all });
        const without = capacity.judge(placementOf(spec(parts)));
        const withPreferences = capacity.judge(placementOf(spec(parts, preferred)));
        expect([withPreferences.kind, withPreferences.nodes]).toEqual([without.kind, without.nodes]);
      }),
    );
  });

  it('never changes a NodePool verdict for a preferred term that does not name karpenter.sh/nodepool', () => {
    fc.assert(
      fc.property(nodePools, pod, fc.array(preference, { minLength: 1, maxLength: 2 }), (pools, parts, preferred) => {
        const capacity = Capacity.of({ nodePools: pools });
        const without = capacity.judge(placementOf(spec(parts)));
        const withPreferences = capacity.judge(placementOf(spec(parts, preferred)));
        expect([withPreferences.kind, withPreferences.nodePools]).toEqual([without.kind, without.nodePools]);
      }),
    );
  });

  it('never makes a fitting Pod unfit for an added toleration', () => {
    fc.assert(
      fc.property(nodes, nodePools, pod, toleration, (all, pools, parts, added) => {
        const capacity = Capacity.of({ nodes: all, nodePools: pools });
        const before = capacity.judge(placementOf(spec(parts)));
        const after = capacity.judge(placementOf(spec({ ...parts, tolerations: [...parts.tolerations, added] })));
        expect(after.nodes).toBeGreaterThanOrEqual(before.nodes);
        for (const name of before.nodePools) expect(after.nodePools).toContain(name);
        if (before.fits) expect(after.fits).toBe(true);
      }),
    );
  });

  it('calls a Pod contradictory only when no Node could take its nodeSelector and required terms', () => {
    fc.assert(
      fc.property(nodes, pod, (all, parts) => {
        const placement = placementOf(spec(parts));
        if (placement.contradiction() === undefined) return;
        for (const node of all) {
          const selected = Object.entries(parts.nodeSelector).every(([key, value]) => node.labels[key] === value);
          expect(selected && selectorMatchesNode(placement.required, node)).toBe(false);
        }
      }),
    );
  });

  it('judges a Pod without capacity only when it contradicts itself', () => {
    fc.assert(
      fc.property(pod, (parts) => {
        const placement = placementOf(spec(parts));
        expect(Capacity.unknown().judge(placement).kind).toBe(
          placement.contradiction() === undefined ? 'unknown' : 'nowhere',
        );
      }),
    );
  });

  it('judges every Pod alike against a capacity and against its published form read back from JSON', () => {
    fc.assert(
      fc.property(nodes, nodePools, pod, (all, pools, parts) => {
        const capacity = Capacity.of({ nodes: all, nodePools: pools });
        const stored: unknown = JSON.parse(JSON.stringify(capacity.published()));
        const placement = placementOf(spec(parts));
        expect(Capacity.fromPublished(stored, 'capacity').judge(placement)).toEqual(capacity.judge(placement));
      }),
    );
  });
});
