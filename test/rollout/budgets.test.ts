import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MalformedInputError } from '../../lib/errors/index.ts';
import { parseLabelSelector, selects } from '../../lib/rollout/index.ts';
import { coveringBudgets, createWaveBudgets } from '../../lib/rollout/budgets.ts';

function pdb(
  name: string,
  selector: unknown,
  disruptionsAllowed?: number,
  generations = { spec: 1, observed: 1 },
): unknown {
  return {
    metadata: { name, generation: generations.spec },
    spec: { minAvailable: 1, selector },
    ...(disruptionsAllowed === undefined
      ? {}
      : { status: { disruptionsAllowed, observedGeneration: generations.observed } }),
  };
}

const LABELS = { app: 'vault', tier: 'db' };

describe('coveringBudgets', () => {
  it.each([
    { case: 'matchLabels that match, 0 allowed', budget: pdb('a', { matchLabels: { app: 'vault' } }, 0), allowed: 0 },
    { case: 'matchLabels that match, 2 allowed', budget: pdb('a', { matchLabels: { app: 'vault' } }, 2), allowed: 2 },
    { case: 'matchLabels of another app', budget: pdb('a', { matchLabels: { app: 'web' } }, 0), allowed: undefined },
    { case: 'an empty selector (every Pod of the namespace)', budget: pdb('a', {}, 1), allowed: 1 },
    { case: 'no selector (no Pod)', budget: pdb('a', undefined, 0), allowed: undefined },
    { case: 'no status yet (counted as 0)', budget: pdb('a', { matchLabels: { app: 'vault' } }), allowed: 0 },
    {
      case: 'a status of an older spec (counted as 0, as the eviction API counts it)',
      budget: pdb('a', { matchLabels: { app: 'vault' } }, 3, { spec: 2, observed: 1 }),
      allowed: 0,
    },
    {
      case: 'an In expression that matches',
      budget: pdb('a', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['db', 'cache'] }] }, 1),
      allowed: 1,
    },
    {
      case: 'a NotIn expression that excludes',
      budget: pdb('a', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, 0),
      allowed: undefined,
    },
    {
      case: 'an Exists expression',
      budget: pdb('a', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, 0),
      allowed: 0,
    },
    {
      case: 'a DoesNotExist expression',
      budget: pdb('a', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, 0),
      allowed: undefined,
    },
  ])('with $case: covers with $allowed allowed', ({ budget, allowed }) => {
    expect(coveringBudgets([budget], LABELS)).toEqual(allowed === undefined ? [] : [{ name: 'a', allowed }]);
  });

  it('names the field of a budget that is not well formed', () => {
    expect(() => coveringBudgets([pdb('a', { matchLabels: { app: 1 } }, 0)], LABELS, 'pdbs')).toThrow(
      'pdbs[0].spec.selector.matchLabels.app: expected a string, got',
    );
  });
});

describe('createWaveBudgets', () => {
  it('lets the second workload a budget allowing 1 covers start only once the first gives its disruption back', () => {
    const wave = createWaveBudgets();
    const shared = [{ name: 'shared', allowed: 1 }];
    const first = wave.take(shared);

    expect(wave.short(shared)).toEqual([{ name: 'shared', allowed: 1, taken: 1 }]);
    wave.release(first);
    expect(wave.short(shared)).toEqual([]);
  });

  it('keeps the least allowance read while workloads are under way: a mid-restart reading that counts surge Pods does not let another start', () => {
    const wave = createWaveBudgets();
    wave.take([{ name: 'shared', allowed: 1 }]);

    expect(wave.short([{ name: 'shared', allowed: 2 }])).toEqual([{ name: 'shared', allowed: 2, taken: 1 }]);
  });

  it('lets a workload evict under its own disruption while the budget, read again, allows one', () => {
    const wave = createWaveBudgets();
    const own = wave.take([{ name: 'vault', allowed: 1 }]);

    expect(wave.short([{ name: 'vault', allowed: 1 }], own)).toEqual([]);
    expect(wave.short([{ name: 'vault', allowed: 0 }], own)).toEqual([{ name: 'vault', allowed: 0, taken: 0 }]);
  });

  it('never has more workloads under way than any covering budget allowed at each of their starts', () => {
    // Each step: a workload covered by some of three budgets asks to start (with the allowances read then), or one
    // under way ends. Those whose budgets are short wait; the law holds at every step.
    const step = fc.oneof(
      fc.record({
        start: fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { minLength: 1 }),
        allowed: fc.record({ a: fc.nat(3), b: fc.nat(3), c: fc.nat(3) }),
      }),
      fc.record({ end: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const wave = createWaveBudgets();
        const underWay: { names: ReadonlySet<string>; allowed: { a: number; b: number; c: number } }[] = [];
        for (const next of steps) {
          if ('end' in next) {
            if (underWay.length > 0) wave.release(underWay.splice(next.end % underWay.length, 1)[0]!.names);
            continue;
          }
          const allowances = next.start.map((name) => ({ name, allowed: next.allowed[name] }));
          if (wave.short(allowances).length > 0) continue;
          underWay.push({ names: wave.take(allowances), allowed: next.allowed });
          for (const name of ['a', 'b', 'c'] as const) {
            const covered = underWay.filter(({ names }) => names.has(name));
            const least = Math.min(...covered.map(({ allowed }) => allowed[name]));
            expect(covered.length).toBeLessThanOrEqual(covered.length === 0 ? 0 : least);
          }
        }
      }),
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
