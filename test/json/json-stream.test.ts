/**
 * streamJson gives what parsing the whole text gives, however the text is cut into chunks: each top-level value, and
 * a List's items one by one followed by the rest of the List.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunksOf } from '../support/chunks.ts';
import { streamJson, type StreamedJson } from '../../lib/json/index.ts';

async function read(text: string, offsets: readonly number[] = []): Promise<StreamedJson[]> {
  const values: StreamedJson[] = [];
  for await (const value of streamJson(chunksOf(text, offsets), 'input.json')) values.push(value);
  return values;
}

/** What streamJson should give for these top-level values: a List's items, then its envelope; any other value whole. */
function expected(values: readonly unknown[]): StreamedJson[] {
  return values.flatMap((value, index): StreamedJson[] => {
    const document = index + 1;
    const record = value as { kind?: unknown; items?: unknown };
    const list = typeof value === 'object' && value !== null && !Array.isArray(value) && Array.isArray(record.items);
    if (!list) return [{ type: 'value', document, value }];
    const { items, ...envelope } = record as { items: unknown[] };
    return [
      ...items.map((item, at): StreamedJson => ({ type: 'item', document, item: at, value: item })),
      { type: 'envelope', document, value: envelope, items: items.length },
    ];
  });
}

const json = fc.jsonValue({ maxDepth: 4 });
const list = fc.record({
  apiVersion: fc.constant('v1'),
  items: fc.array(json, { maxLength: 6 }),
  kind: fc.constant('List'),
  metadata: fc.record({ resourceVersion: fc.string() }),
});
const offsets = (text: string) => fc.array(fc.integer({ min: 0, max: text.length }), { maxLength: 8 });

describe('streamJson', () => {
  it('gives each top-level value as parsing the whole text gives it, however the text is cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(json, list), { minLength: 1, maxLength: 3 }).chain((values) => {
          const text = values.map((value, index) => JSON.stringify(value, null, index % 2 === 0 ? 2 : 0)).join('\n');
          return fc.tuple(fc.constant(values), fc.constant(text), offsets(text));
        }),
        async ([values, text, at]) => {
          // Compared as JSON text: an integer beyond 2^53 is kept as its digits, which JSON.parse would round.
          expect(JSON.stringify(await read(text, at))).toBe(JSON.stringify(expected(values)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("streams a List's items one at a time, then the List's other members", async () => {
    const text = JSON.stringify({ apiVersion: 'v1', items: [{ a: 1 }, { b: '}"]' }], kind: 'List', metadata: {} });

    expect(await read(text, [5, 30])).toEqual([
      { type: 'item', document: 1, item: 0, value: { a: 1 } },
      { type: 'item', document: 1, item: 1, value: { b: '}"]' } },
      { type: 'envelope', document: 1, value: { apiVersion: 'v1', kind: 'List', metadata: {} }, items: 2 },
    ]);
  });

  it('keeps the items of an object whose kind, read first, is no List', async () => {
    const value = { kind: 'Inventory', items: [1, 2] };

    expect(await read(JSON.stringify(value))).toEqual([{ type: 'value', document: 1, value }]);
  });

  it('keeps integers beyond 2^53 as their digits', async () => {
    const [item] = await read('{"items":[{"seconds":9223372036854775807}],"kind":"List"}');

    expect(JSON.stringify(item?.type === 'item' ? item.value : undefined)).toBe('{"seconds":9223372036854775807}');
  });

  it.each([
    [
      'a text that ends inside a value',
      '{"items":[{"a":1}',
      'input.json:1: not valid JSON: the text ends inside a JSON value',
    ],
    ['a trailing comma among items', '{"items":[1,],"kind":"List"}', 'input.json:1: not valid JSON: unexpected ]'],
    ['a trailing comma among members', '{"kind":"List",}', 'input.json:1: not valid JSON: unexpected }'],
    ['a member without a colon', '{"kind" "List"}', 'input.json:1: not valid JSON: unexpected "'],
    [
      'a bad item, named by its index',
      '{"items":[{"a":1},{"a":tru}]}',
      'input.json: document 1: items[1]: not valid JSON',
    ],
    ['a bad member, named by its key', '{\n"kind": Lis\n}', 'input.json: document 1: kind: not valid JSON'],
  ])('rejects %s, saying where', async (_case, text, message) => {
    await expect(read(text)).rejects.toThrow(message);
  });
});
