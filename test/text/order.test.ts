/** The one order of text: by UTF-16 code unit, never by locale. */
import { describe, expect, it } from 'vitest';
import { compareCodeUnits } from '../../lib/text/index.ts';

describe('compareCodeUnits', () => {
  it.each([
    { name: 'an upper-case letter before every lower-case one', left: 'Zone', right: 'apps', order: -1 },
    { name: 'a hyphen before a letter, where locale order would skip it', left: 'a-z', right: 'ab', order: -1 },
    { name: 'a prefix before the longer string', left: 'web', right: 'web-1', order: -1 },
    {
      name: 'a character past U+FFFF by its first surrogate, before U+FF5E',
      left: '\u{1F600}',
      right: '\uFF5E',
      order: -1,
    },
    { name: 'equal strings as equal', left: 'payments', right: 'payments', order: 0 },
  ])('orders $name', ({ left, right, order }) => {
    expect(compareCodeUnits(left, right)).toBe(order);
    expect(compareCodeUnits(right, left)).toBe(order === 0 ? 0 : -order);
  });

  it('sorts as Array.prototype.sort does without a comparator', () => {
    const names = ['web-1', 'Zone', 'ab', '\uFF5E', 'a-z', '\u{1F600}', 'web', 'apps'];

    expect([...names].sort(compareCodeUnits)).toEqual([...names].sort());
  });
});
