import { describe, expect, it } from 'vitest';
import { MalformedInputError } from '../../lib/errors/index.ts';
import { parsePlacementPolicy } from '../../lib/placement/index.ts';
import type { Issue } from '../../lib/json/index.ts';

function rejection(input: unknown): MalformedInputError {
  try {
    parsePlacementPolicy(input, 'placements.yaml[0]');
  } catch (error) {
    if (error instanceof MalformedInputError) return error;
    throw error;
  }
  throw new Error('expected the policy to be rejected');
}

describe('a placement policy with several wrong fields', () => {
  it('is rejected once, naming every wrong field', () => {
    const error = rejection({ namespace: 'Shop', kind: 'Deployment', name: 'web', mode: 'Spott', zone: 'a' });

    expect((error.context.issues as readonly Issue[]).map((issue) => issue.field)).toEqual([
      'zone',
      'namespace',
      'mode',
    ]);
    expect(error.message).toBe(
      'placements.yaml[0] Shop/Deployment/web: zone: unknown field; expected one of namespace, kind, name, mode, spotPercent, minOnDemand; ' +
        'namespace: must be a namespace name (DNS-1123 label); mode: must be one of Spot, NonSpot, Diversity (got "Spott")',
    );
  });

  it('keeps the message of a single wrong field as before', () => {
    expect(() =>
      parsePlacementPolicy({ namespace: 'shop', kind: 'Deployment', name: 'web', mode: 'Spot', spotPercent: 5 }, 'p'),
    ).toThrow('p shop/Deployment/web: spotPercent: is only used with mode Diversity');
  });
});
