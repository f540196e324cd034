/** The report's capacity: each distinct placement judged once, with the verdict the capacity itself gives. */
import { describe, expect, it } from 'vitest';
import { Capacity, type Placement } from '../../lib/capacity/index.ts';
import { RememberedCapacity } from '../../lib/report/remembered-capacity.ts';
import { node, nodePool, placementOf, requiring } from '../capacity/support.ts';

const CAPACITY = Capacity.of({
  nodes: [
    node('legacy-1', { pool: 'legacy' }),
    node('tainted-1', { pool: 'gpu' }, { taints: [{ key: 'gpu', effect: 'NoSchedule' }] }),
  ],
  nodePools: [nodePool('merged', {}, { labels: { pool: 'merged' } })],
});

const PLACEMENTS: readonly [string, Placement][] = [
  ['a nodeSelector a Node takes', placementOf({ nodeSelector: { pool: 'legacy' } })],
  ['a required term a NodePool takes', placementOf(requiring([{ key: 'pool', operator: 'In', values: ['merged'] }]))],
  ['a misspelt pool', placementOf({ nodeSelector: { pool: 'mergd' } })],
  ['an untolerated taint', placementOf({ nodeSelector: { pool: 'gpu' } })],
  [
    'a contradiction',
    placementOf({
      nodeSelector: { pool: 'legacy' },
      ...requiring([{ key: 'pool', operator: 'In', values: ['merged'] }]),
    }),
  ],
];

/** The capacity, counting what it is asked. */
function counted() {
  const calls = { judge: 0, kindOf: 0 };
  return {
    calls,
    capacity: {
      judge: (placement: Placement) => ((calls.judge += 1), CAPACITY.judge(placement)),
      kindOf: (placement: Placement) => ((calls.kindOf += 1), CAPACITY.kindOf(placement)),
    },
  };
}

describe('RememberedCapacity', () => {
  it.each(PLACEMENTS)('gives the kind and verdict the capacity gives: %s', (_name, placement) => {
    const remembered = new RememberedCapacity(CAPACITY);

    expect(remembered.kindOf(placement)).toBe(CAPACITY.kindOf(placement));
    expect(remembered.judge(placement).text()).toBe(CAPACITY.judge(placement).text());
  });

  it('judges equal placements of different Pods once', () => {
    const { calls, capacity } = counted();
    const remembered = new RememberedCapacity(capacity);

    for (let pod = 0; pod < 3; pod += 1) {
      remembered.kindOf(placementOf({ nodeSelector: { pool: 'mergd' } }));
      remembered.judge(placementOf({ nodeSelector: { pool: 'mergd' } }));
    }

    expect(calls).toEqual({ judge: 1, kindOf: 1 });
  });

  it('takes the kind of a verdict it already holds, without asking the capacity', () => {
    const { calls, capacity } = counted();
    const remembered = new RememberedCapacity(capacity);

    remembered.judge(placementOf({ nodeSelector: { pool: 'legacy' } }));

    expect(remembered.kindOf(placementOf({ nodeSelector: { pool: 'legacy' } }))).toBe('fits');
    expect(calls).toEqual({ judge: 1, kindOf: 0 });
  });

  it('tells placements apart by their tolerations', () => {
    const tolerating = placementOf({
      nodeSelector: { pool: 'gpu' },
      tolerations: [{ key: 'gpu', operator: 'Exists' }],
    });
    const remembered = new RememberedCapacity(CAPACITY);

    expect([remembered.kindOf(PLACEMENTS[3]![1]), remembered.kindOf(tolerating)]).toEqual(['nowhere', 'fits']);
  });
});
