/**
 * The intrinsic check: a Pod whose nodeSelector and every required term cannot hold together on any node fits nowhere,
 * with no capacity at all; the verdict says which requirements exclude each other.
 */
import { describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import { placementOf, requiring } from './support.ts';
import { type Contradiction, type TermConflict } from '../../lib/capacity/placement.ts';

type Json = Record<string, unknown>;

const POOL = 'example.com/pool';
const CAPACITY_TYPE = 'karpenter.sh/capacity-type';
const byName = (...fields: Json[]) => ({
  affinity: {
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: fields }] } },
  },
});

describe('a Pod that contradicts itself', () => {
  it.each<[string, Json, string]>([
    [
      'a nodeSelector and a required term on one key (the legacy pool given the merged pool)',
      { nodeSelector: { [POOL]: 'legacy' }, ...requiring([{ key: POOL, operator: 'In', values: ['merged'] }]) },
      'example.com/pool In [merged] and nodeSelector example.com/pool=legacy exclude each other',
    ],
    [
      'managed Spot against a nodeSelector of on-demand',
      {
        nodeSelector: { [CAPACITY_TYPE]: 'on-demand' },
        ...requiring([{ key: CAPACITY_TYPE, operator: 'In', values: ['spot'] }]),
      },
      'karpenter.sh/capacity-type In [spot] and nodeSelector karpenter.sh/capacity-type=on-demand exclude each other',
    ],
    [
      'In and NotIn of the same value in one term',
      requiring([
        { key: POOL, operator: 'In', values: ['merged'] },
        { key: POOL, operator: 'NotIn', values: ['merged'] },
      ]),
      'example.com/pool In [merged] and example.com/pool NotIn [merged] exclude each other',
    ],
    [
      'an empty integer range',
      requiring([
        { key: 'example.com/generation', operator: 'Gt', values: ['6'] },
        { key: 'example.com/generation', operator: 'Lt', values: ['7'] },
      ]),
      'example.com/generation Gt [6] and example.com/generation Lt [7] exclude each other',
    ],
    ['an empty term', requiring([]), 'the term is empty, and an empty term selects no Node'],
    [
      'two Node names',
      byName(
        { key: 'metadata.name', operator: 'In', values: ['a'] },
        { key: 'metadata.name', operator: 'In', values: ['b'] },
      ),
      'metadata.name In [a] and metadata.name In [b] select different Nodes',
    ],
    [
      'a Node name in and out',
      byName(
        { key: 'metadata.name', operator: 'In', values: ['a'] },
        { key: 'metadata.name', operator: 'NotIn', values: ['a'] },
      ),
      'metadata.name In [a] and metadata.name NotIn [a] exclude each other',
    ],
    [
      'a requirement kube-scheduler cannot parse',
      requiring([{ key: POOL, operator: 'Exists', values: ['merged'] }]),
      'example.com/pool Exists [merged] matches no label value',
    ],
  ])('fits nowhere without capacity: %s', (_, spec, reason) => {
    const verdict = Capacity.unknown().judge(placementOf(spec));
    expect(verdict.kind).toBe('nowhere');
    expect(verdict.contradiction?.terms.map((term) => term.reason)).toEqual([reason]);
    expect(verdict.text()).toBe(
      `fits nowhere: its nodeSelector and required node affinity cannot hold on any node: ${reason}`,
    );
  });

  it('needs every required term to contradict itself, and names each', () => {
    const both = requiring(
      [{ key: POOL, operator: 'In', values: ['merged'] }],
      [
        { key: POOL, operator: 'Exists' },
        { key: POOL, operator: 'DoesNotExist' },
      ],
    );
    expect(Capacity.unknown().judge(placementOf({ nodeSelector: { [POOL]: 'merged' }, ...both })).kind).toBe('unknown');
    const verdict = Capacity.unknown().judge(placementOf({ nodeSelector: { [POOL]: 'legacy' }, ...both }));
    const expected: TermConflict[] = [
      { term: 0, reason: 'example.com/pool In [merged] and nodeSelector example.com/pool=legacy exclude each other' },
      {
        term: 1,
        reason:
          'example.com/pool Exists and example.com/pool DoesNotExist and nodeSelector example.com/pool=legacy exclude each other',
      },
    ];
    const contradiction: Contradiction | undefined = verdict.contradiction;
    expect(contradiction?.terms).toEqual(expected);
  });

  it('is found whatever the capacity holds, before any Node or NodePool is judged', () => {
    const spec = {
      nodeSelector: { [POOL]: 'legacy' },
      ...requiring([{ key: POOL, operator: 'In', values: ['merged'] }]),
    };
    const verdict = Capacity.of({ nodes: [] }).judge(placementOf(spec));
    expect(verdict.contradiction).toBeDefined();
  });
});

describe('a Pod that does not contradict itself', () => {
  it.each<[string, Json]>([
    ['no constraint at all', {}],
    ['a nodeSelector alone', { nodeSelector: { [POOL]: 'legacy', [CAPACITY_TYPE]: 'spot' } }],
    [
      'overlapping In sets',
      requiring([
        { key: POOL, operator: 'In', values: ['a', 'b'] },
        { key: POOL, operator: 'In', values: ['b'] },
      ]),
    ],
    [
      'a non-empty integer range',
      requiring([
        { key: 'g', operator: 'Gt', values: ['3'] },
        { key: 'g', operator: 'Lt', values: ['5'] },
      ]),
    ],
    [
      'preferred terms that contradict the nodeSelector',
      {
        nodeSelector: { [POOL]: 'legacy' },
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 100, preference: { matchExpressions: [{ key: POOL, operator: 'In', values: ['merged'] }] } },
            ],
          },
        },
      },
    ],
  ])('is not judged without capacity: %s', (_, spec) => {
    const verdict = Capacity.unknown().judge(placementOf(spec));
    expect(verdict.kind).toBe('unknown');
    expect(verdict.text()).toBe('not judged: no capacity given');
  });
});
