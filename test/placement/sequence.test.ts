import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spotCount, sequenceChoice, type SplitTarget } from '../../lib/placement/sequence.ts';

const targets: fc.Arbitrary<SplitTarget> = fc.record({
  spotPercent: fc.integer({ min: 0, max: 100 }),
  minOnDemand: fc.integer({ min: 0, max: 20 }),
});

/** The Spot Pods among sequence numbers from..to-1, counted choice by choice. */
function spotsIn(from: number, to: number, target: SplitTarget): number {
  let spots = 0;
  for (let k = from; k < to; k += 1) if (sequenceChoice(k, target) === 'spot') spots += 1;
  return spots;
}

describe('the Diversity sequence rule', () => {
  it('gives every prefix of the sequence exactly spotCount Spot Pods', () => {
    fc.assert(
      fc.property(targets, fc.integer({ min: 0, max: 300 }), (target, length) => {
        expect(spotsIn(0, length, target)).toBe(spotCount(length, target));
      }),
    );
  });

  it('makes spotCount the target split: floor(N * spotPercent / 100), less what minOnDemand keeps on-demand', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 10, 50].map((n) => spotCount(n, { spotPercent: 70, minOnDemand: 2 }))).toEqual([
      0, 0, 0, 1, 2, 3, 4, 4, 7, 35,
    ]);
  });

  it('keeps at least minOnDemand Pods of every prefix of that length or longer on on-demand', () => {
    fc.assert(
      fc.property(targets, fc.integer({ min: 0, max: 300 }), (target, extra) => {
        const length = target.minOnDemand + extra;
        expect(length - spotsIn(0, length, target)).toBeGreaterThanOrEqual(target.minOnDemand);
      }),
    );
  });

  it('puts the first minOnDemand Pods on on-demand', () => {
    fc.assert(
      fc.property(targets, (target) => {
        expect(spotsIn(0, target.minOnDemand, target)).toBe(0);
      }),
    );
  });

  it('gives any window of n Pods floor(n * spotPercent / 100) Spot Pods or one more, once minOnDemand no longer binds', () => {
    fc.assert(
      fc.property(targets, fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 300 }), (target, skip, n) => {
        const { spotPercent, minOnDemand } = target;
        // From the first number `from` with from - floor(from * p / 100) >= minOnDemand on, the minimum holds by itself.
        let from = skip;
        while (spotPercent < 100 && from - Math.floor((from * spotPercent) / 100) < minOnDemand) from += 1;
        if (spotPercent === 100) from = Math.max(from, minOnDemand);
        const spots = spotsIn(from, from + n, target);
        const floor = Math.floor((n * spotPercent) / 100);
        expect(spots === floor || spots === floor + 1).toBe(true);
      }),
    );
  });

  it('can put more than one Pod above the window bound while minOnDemand still binds (70 %, 2: numbers 2 to 5 all Spot)', () => {
    const target = { spotPercent: 70, minOnDemand: 2 };
    expect([0, 1, 2, 3, 4, 5, 6].map((k) => sequenceChoice(k, target))).toEqual([
      'on-demand',
      'on-demand',
      'spot',
      'spot',
      'spot',
      'spot',
      'on-demand',
    ]);
  });
});
