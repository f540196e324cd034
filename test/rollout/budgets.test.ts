import { describe, expect, it } from 'vitest';
import { MalformedInputError } from '../../lib/errors/index.ts';
import { blockingBudgets, parseLabelSelector, selects } from '../../lib/rollout/index.ts';

function pdb(name: string, selector: unknown, disruptionsAllowed?: number): unknown {
  return {
    metadata: { name },
    spec: { minAvailable: 1, selector },
    ...(disruptionsAllowed === undefined ? {} : { status: { disruptionsAllowed } }),
  };
}

const LABELS = { app: 'vault', tier: 'db' };

describe('blockingBudgets', () => {
  it.each([
    { case: 'matchLabels that match, 0 allowed', budget: pdb('a', { matchLabels: { app: 'vault' } }, 0), blocks: true },
    {
      case: 'matchLabels that match, 1 allowed',
      budget: pdb('a', { matchLabels: { app: 'vault' } }, 1),
      blocks: false,
    },
    { case: 'matchLabels of another app', budget: pdb('a', { matchLabels: { app: 'web' } }, 0), blocks: false },
    { case: 'an empty selector (every Pod of the namespace)', budget: pdb('a', {}, 0), blocks: true },
    { case: 'no selector (no Pod)', budget: pdb('a', undefined, 0), blocks: false },
    { case: 'no status yet (counted as 0)', budget: pdb('a', { matchLabels: { app: 'vault' } }), blocks: true },
    {
      case: 'an In expression that matches',
      budget: pdb('a', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['db', 'cache'] }] }, 0),
      blocks: true,
    },
    {
      case: 'a NotIn expression that excludes',
      budget: pdb('a', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, 0),
      blocks: false,
    },
    {
      case: 'an Exists expression',
      budget: pdb('a', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, 0),
      blocks: true,
    },
    {
      case: 'a DoesNotExist expression',
      budget: pdb('a', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, 0),
      blocks: false,
    },
  ])('with $case: blocks $blocks', ({ budget, blocks }) => {
    expect(blockingBudgets([budget], LABELS)).toEqual(blocks ? ['a'] : []);
  });

  it('names the field of a budget that is not well formed', () => {
    expect(() => blockingBudgets([pdb('a', { matchLabels: { app: 1 } }, 0)], LABELS, 'pdbs')).toThrow(
      'pdbs[0].spec.selector.matchLabels.app: expected a string, got',
    );
  });
});

describe('parseLabelSelector', () => {
  it.each([
    { selector: 'app=vault', selected: true },
    { selector: 'app==vault,tier=db', selected: true },
    { selector: 'app!=vault', selected: false },
    { selector: 'tier in (db, cache)', selected: true },
    { selector: 'tier notin (db)', selected: false },
    { selector: 'app', selected: true },
    { selector: '!app', selected: false },
    { selector: 'missing', selected: false },
  ])('reads $selector as kubectl -l does (selects {app: vault, tier: db}: $selected)', ({ selector, selected }) => {
    expect(selects(parseLabelSelector(selector), LABELS)).toBe(selected);
  });

  it('refuses a requirement it cannot read', () => {
    expect(() => parseLabelSelector('a=b=c')).toThrow(MalformedInputError);
  });
});
