/** parseJsonExact: JSON text parsed with every integer a double cannot hold kept as its digits. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  isRawInteger,
  objectList,
  optionalInt64,
  optionalObject,
  parseJsonExact,
  previewInput,
} from '../../lib/json/index.ts';

describe('parseJsonExact', () => {
  it.each([
    ["int64's maximum", '{"seconds":9223372036854775807}'],
    ['a negative integer beyond 2^53', '[-9007199254740993,1]'],
    ['an integer of 30 digits', '{"a":[{"b":123456789012345678901234567890}]}'],
    ['whitespace before the number', '{"a": \n 9223372036854775807}'],
  ])('writes back %s as it came', (_case, text) => {
    expect(JSON.stringify(parseJsonExact(text))).toBe(text.replace(/\s+/g, ''));
  });

  it.each([
    ['safe integers', '{"a":9007199254740991,"b":-1}'],
    ['a fraction and an exponent beyond 2^53', '{"a":12345678901234567.5,"b":1e300}'],
    ['a string of digits', '{"uid":"12345678901234567890"}'],
  ])('reads %s as JSON.parse does', (_case, text) => {
    expect(parseJsonExact(text)).toEqual(JSON.parse(text));
  });

  it('writes back the text JSON.stringify wrote, with any integer spliced in', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), (value, integer) => {
        const text = JSON.stringify({ value, integer: 0 }).replace(/"integer":0}$/, `"integer":${integer}}`);
        expect(JSON.stringify(parseJsonExact(text))).toBe(text);
      }),
    );
  });

  it('throws as JSON.parse does', () => {
    expect(() => parseJsonExact('{"a":12345678901234567890')).toThrow(SyntaxError);
  });
});

describe('an integer kept as its digits', () => {
  const raw = (parseJsonExact('[9223372036854775807]') as unknown[])[0];

  it('is one', () => {
    expect(isRawInteger(raw)).toBe(true);
  });

  it('is an int64 to optionalInt64', () => {
    expect(optionalInt64(raw, 'seconds')).toBe(raw);
  });

  it.each([
    ['an object', () => optionalObject(raw, 'spec')],
    ['a list item', () => objectList([raw], 'tolerations')],
  ])('is refused where %s is read, as the number it is', (_case, read) => {
    expect(read).toThrow(/: expected an object, got a number$/);
  });

  it('is previewed and written canonically as its digits', () => {
    expect(previewInput(raw)).toBe('9223372036854775807');
    expect(canonicalJson({ b: raw, a: 1 })).toBe('{"a":1,"b":9223372036854775807}');
  });
});
