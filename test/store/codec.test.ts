/**
 * The snapshot encoding: canonical JSON and the hash and parts made from it. Stored snapshots carry the hash of their
 * content, so these laws pin the bytes: a change of the encoding would republish every cluster's unchanged rules.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serializeContent } from '../../lib/store/codec.ts';
import { canonicalJson } from '../../lib/json/index.ts';
import { compareCodeUnits } from '../../lib/text/index.ts';
import type { SnapshotContent } from '../../lib/store/index.ts';

/** The definition: keys sorted by code units at every depth, undefined fields dropped, undefined items null. */
function definition(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((item: unknown) => (item === undefined ? 'null' : definition(item))).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, field]) => field !== undefined);
    entries.sort(([left], [right]) => compareCodeUnits(left, right));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${definition(field)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

// JSON values with keys that JavaScript objects reorder (integer-like "10" before "9") and fields left undefined.
const key = fc.oneof(fc.string(), fc.constantFrom('9', '10', '0', 'a', 'B', 'é', '\u{1F600}'));
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), tie('array'), tie('object')),
  array: fc.array(fc.oneof(tie('value'), fc.constant(undefined)), { maxLength: 4 }),
  object: fc.dictionary(key, fc.oneof(tie('value'), fc.constant(undefined)), { maxKeys: 5 }),
})).value;

const content = fc.record({
  rules: fc.array(fc.dictionary(key, json, { maxKeys: 4 }), { maxLength: 4 }),
  invalid: fc.array(fc.dictionary(key, json, { maxKeys: 3 }), { maxLength: 3 }),
  resourceVersion: fc.string(),
  syncedAt: fc.string(),
}) as unknown as fc.Arbitrary<SnapshotContent>;

describe('the snapshot encoding', () => {
  it('writes canonical JSON exactly as its definition does, whatever the keys and undefined fields', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(canonicalJson(value)).toBe(definition(value));
      }),
    );
  });

  it('writes the same JSON for objects that differ only in key order', () => {
    fc.assert(
      fc.property(fc.dictionary(key, json, { maxKeys: 6 }), (record) => {
        const reversed = Object.fromEntries(Object.entries(record).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(record));
      }),
    );
  });

  it('refuses a value JSON cannot hold', () => {
    expect(() => canonicalJson(undefined)).toThrow('a undefined cannot be stored as JSON');
    expect(() => canonicalJson({ rules: [() => 1] })).toThrow('a function cannot be stored as JSON');
  });

  it('hashes the canonical JSON of rules and invalid, and stores that of the whole content, serializing each once', () => {
    fc.assert(
      fc.property(content, fc.integer({ min: 1, max: 64 }), (value, partBytes) => {
        const serialized = serializeContent(value);
        const hashed = definition({ rules: value.rules, invalid: value.invalid });
        const stored = gunzipSync(Buffer.concat(serialized.encode(partBytes))).toString('utf8');

        expect(serialized.contentHash).toBe(`sha256:${createHash('sha256').update(hashed).digest('hex')}`);
        expect(stored).toBe(definition(value));
      }),
    );
  });

  it('cuts the gzipped content into parts of at most the part size, all full but the last', () => {
    fc.assert(
      fc.property(content, fc.integer({ min: 1, max: 64 }), (value, partBytes) => {
        const sizes = serializeContent(value)
          .encode(partBytes)
          .map((part) => part.byteLength);

        expect(sizes.slice(0, -1).every((size) => size === partBytes)).toBe(true);
        expect(sizes.at(-1)).toBeGreaterThan(0);
        expect(sizes.at(-1)).toBeLessThanOrEqual(partBytes);
      }),
    );
  });
});
