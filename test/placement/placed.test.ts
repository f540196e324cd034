/** Whether a Pod's required node affinity already carries what its placement adds (isPlaced). */
import { describe, expect, it } from 'vitest';
import type { PlacementMode } from '../../lib/api/index.ts';
import { isPlaced, type CapacityFlavour } from '../../lib/placement/index.ts';
import { termFromKubernetes } from '../../lib/scheduling/index.ts';

const capacity = (values: string[], key = 'karpenter.sh/capacity-type', operator = 'In') => ({
  key,
  operator,
  values,
});
const zone = { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['eu-west-1a'] };

/** Required terms from their matchExpressions. */
const terms = (...expressions: (typeof zone)[][]) =>
  expressions.map((matchExpressions) => termFromKubernetes({ matchExpressions }));

describe('a Pod placed as its placement says', () => {
  it.each<{
    case: string;
    required: ReturnType<typeof terms> | undefined;
    mode: PlacementMode;
    placed: boolean;
    flavour?: CapacityFlavour;
  }>([
    { case: 'Spot in its one term', required: terms([capacity(['spot'])]), mode: 'Spot', placed: true },
    {
      case: 'Spot in every term',
      required: terms([capacity(['spot']), zone], [capacity(['spot'])]),
      mode: 'Spot',
      placed: true,
    },
    {
      case: 'Spot in one term of two',
      required: terms([capacity(['spot']), zone], [zone]),
      mode: 'Spot',
      placed: false,
    },
    { case: 'on-demand under Spot', required: terms([capacity(['on-demand'])]), mode: 'Spot', placed: false },
    {
      case: 'either value under Spot',
      required: terms([capacity(['spot', 'on-demand'])]),
      mode: 'Spot',
      placed: false,
    },
    {
      case: 'NotIn on-demand under Spot',
      required: terms([capacity(['on-demand'], undefined, 'NotIn')]),
      mode: 'Spot',
      placed: false,
    },
    { case: 'no required affinity', required: undefined, mode: 'Spot', placed: false },
    { case: 'on-demand under NonSpot', required: terms([capacity(['on-demand'])]), mode: 'NonSpot', placed: true },
    { case: 'Spot under NonSpot', required: terms([capacity(['spot'])]), mode: 'NonSpot', placed: false },
    { case: 'Spot under Diversity', required: terms([capacity(['spot'])]), mode: 'Diversity', placed: true },
    { case: 'on-demand under Diversity', required: terms([capacity(['on-demand'])]), mode: 'Diversity', placed: true },
    { case: 'a zone alone under Diversity', required: terms([zone]), mode: 'Diversity', placed: false },
    {
      case: "the eks flavour's label under Spot",
      required: terms([capacity(['SPOT'], 'eks.amazonaws.com/capacityType')]),
      mode: 'Spot',
      placed: true,
      flavour: 'eks',
    },
    {
      case: "karpenter's label under the eks flavour",
      required: terms([capacity(['spot'])]),
      mode: 'Spot',
      placed: false,
      flavour: 'eks',
    },
  ])('reads $case as placed: $placed', ({ required, mode, placed, flavour }) => {
    expect(isPlaced(required, mode, flavour ?? 'karpenter')).toBe(placed);
  });
});
