/** What a verdict says: where a Pod fits, or why it fits nowhere and the closest candidates, always with its caveat. */
import { describe, expect, it } from 'vitest';
import { Capacity, FIT_CAVEAT, type JudgeOptions, type Verdict, type VerdictKind } from '../../lib/capacity/index.ts';
import { node, nodePool, placementOf } from './support.ts';
import { type Candidate } from '../../lib/capacity/verdict.ts';

const POOL = 'karpenter.sh/nodepool';

// The README's migration target: NodePool general, with three Nodes of it, and a tainted GPU NodePool.
const capacity = Capacity.of({
  nodes: ['general-1', 'general-2', 'general-3'].map((name) =>
    node(name, { 'kubernetes.io/hostname': name, [POOL]: 'general', 'karpenter.sh/capacity-type': 'on-demand' }),
  ),
  nodePools: [
    nodePool('general', {
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    }),
    nodePool('gpu', { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] }),
  ],
});

describe('a verdict', () => {
  it('says where a Pod fits: its NodePools and how many Nodes', () => {
    const verdict = capacity.judge(placementOf({ nodeSelector: { [POOL]: 'general' } }));
    expect(verdict.text()).toBe('fits NodePool general; 3 Nodes');
    expect(verdict.lines()).toEqual(['fits NodePool general; 3 Nodes']);
  });

  it('names every NodePool a Pod fits', () => {
    expect(capacity.judge(placementOf({ tolerations: [{ operator: 'Exists' }] })).text()).toBe(
      'fits NodePools general, gpu; 3 Nodes',
    );
  });

  it('says why a Pod pinned to a misspelt NodePool fits nowhere, naming the requirement and the closest candidates', () => {
    const verdict = capacity.judge(placementOf({ nodeSelector: { [POOL]: 'genral' } }));
    expect(verdict.kind).toBe('nowhere');
    expect(verdict.closest.map(({ kind, name, nodes }): Omit<Candidate, 'reasons'> => ({ kind, name, nodes }))).toEqual(
      [
        { kind: 'NodePool', name: 'general', nodes: 0 },
        { kind: 'Node', name: 'general-1', nodes: 3 },
        { kind: 'NodePool', name: 'gpu', nodes: 0 },
      ],
    );
    expect(verdict.lines()).toEqual([
      'fits nowhere: no Node and no NodePool takes it',
      '  closest: NodePool general',
      '    - karpenter.sh/nodepool In [genral] not in karpenter.sh/nodepool In [general]',
      '  closest: Node general-1 (and 2 more Nodes like it)',
      '    - nodeSelector karpenter.sh/nodepool=genral (the Node has karpenter.sh/nodepool=general)',
      '  closest: NodePool gpu',
      '    - karpenter.sh/nodepool In [genral] not in karpenter.sh/nodepool In [gpu]',
      '    - taint nvidia.com/gpu=true:NoSchedule not tolerated',
    ]);
    expect(verdict.text()).toMatch(
      /^fits nowhere: no Node and no NodePool takes it; closest: NodePool general: karpenter.sh\/nodepool In \[genral\] not in/,
    );
  });

  it('names as many candidates as asked, the fewest reasons first', () => {
    const options: JudgeOptions = { closest: 1 };
    const verdict = capacity.judge(placementOf({ nodeSelector: { [POOL]: 'genral' } }), options);
    expect(verdict.closest.map((candidate) => candidate.name)).toEqual(['general']);
  });

  it('says a capacity without Nodes and NodePools holds none', () => {
    const verdict = Capacity.of({}).judge(placementOf({}));
    expect(verdict.text()).toBe('fits nowhere: the capacity holds no Node and no NodePool');
  });

  it('carries what it leaves out', () => {
    const verdict = capacity.judge(placementOf({}));
    expect(verdict.caveat).toBe(FIT_CAVEAT);
    expect(FIT_CAVEAT).toMatch(/free resources, host ports, volumes and inter-Pod \(anti-\)affinity are not checked/);
  });

  it.each([
    ['fits', 'nowhere', true],
    ['unknown', 'nowhere', true],
    ['nowhere', 'nowhere', false],
    ['fits', 'fits', false],
    ['nowhere', 'fits', false],
  ] as const)('before %s and after %s: newly unschedulable is %s', (before, after, expected) => {
    const verdicts: Record<VerdictKind, Verdict> = {
      fits: capacity.judge(placementOf({})),
      nowhere: capacity.judge(placementOf({ nodeSelector: { [POOL]: 'genral' } })),
      unknown: Capacity.unknown().judge(placementOf({})),
    };
    expect(verdicts[after].isNewlyUnschedulable(verdicts[before])).toBe(expected);
  });
});
