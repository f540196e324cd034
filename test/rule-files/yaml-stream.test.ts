/**
 * streamYaml gives what parsing the whole YAML text gives, however it is cut into chunks: each document of a stream,
 * and a List's items (as `kubectl get -o yaml` and the yaml package print them) one by one, then the rest of the List.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunksOf } from '../support/chunks.ts';
import { stringify } from 'yaml';
import { parseYamlDocuments, streamYaml } from '../../lib/rule-files/index.ts';
import type { StreamedJson } from '../../lib/json/index.ts';

async function read(text: string, offsets: readonly number[] = []): Promise<StreamedJson[]> {
  const values: StreamedJson[] = [];
  for await (const value of streamYaml(chunksOf(text, offsets), 'input.yaml')) values.push(value);
  return values;
}

/** What streamYaml should give: the whole text's documents, a List's items apart and then its other members. */
function expected(text: string): unknown[] {
  return parseYamlDocuments(text, 'input.yaml').flatMap((value, index) => {
    const document = index + 1;
    const record = value as { items?: unknown };
    if (typeof value !== 'object' || value === null || !Array.isArray(record.items) || record.items.length === 0)
      return [{ type: 'value', document, value }];
    const { items, ...envelope } = record as { items: unknown[] };
    return [
      ...items.map((item, at) => ({ type: 'item', document, item: at, value: item })),
      { type: 'envelope', document, value: envelope, items: items.length },
    ];
  });
}

// Objects as Kubernetes prints them: names, nested maps and lists, multi-line strings.
const key = fc.stringMatching(/^[a-z][a-zA-Z0-9./-]{0,12}$/);
const scalar = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant('line one\nline two\n'));
const object = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('map'), fc.array(tie('map'), { maxLength: 3 })),
  map: fc.dictionary(key, tie('value'), { minKeys: 1, maxKeys: 4 }),
})).map;
const list = fc.record({
  apiVersion: fc.constant('v1'),
  items: fc.array(object, { minLength: 1, maxLength: 5 }),
  kind: fc.constant('List'),
  metadata: fc.record({ resourceVersion: fc.constant('') }),
});

describe('streamYaml', () => {
  it('gives what the whole text gives, for Lists printed with and without indented entries, however cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(list, object), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (documents, indentSeq, at) => {
          const text = documents.map((document) => stringify(document, { indentSeq })).join('---\n');
          const offsets = at.map((offset) => offset % (text.length + 1));

          expect(JSON.stringify(await read(text, offsets))).toBe(JSON.stringify(expected(text)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("reads kubectl's List, its entries unindented, item by item", async () => {
    const text = [
      'apiVersion: v1',
      'items:',
      '- apiVersion: v1',
      '  kind: Pod',
      '  metadata:',
      '    name: web-0',
      '- apiVersion: v1',
      '  kind: Pod',
      '  metadata:',
      '    name: web-1',
      'kind: List',
      'metadata:',
      '  resourceVersion: ""',
      '',
    ].join('\n');

    expect(await read(text)).toEqual([
      { type: 'item', document: 1, item: 0, value: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0' } } },
      { type: 'item', document: 1, item: 1, value: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1' } } },
      {
        type: 'envelope',
        document: 1,
        value: { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' } },
        items: 2,
      },
    ]);
  });

  it('names the item of a List that does not parse', async () => {
    await expect(read('items:\n- a: 1\n- b: [unclosed\nkind: List\n')).rejects.toThrow(
      'input.yaml: document 1: items[1]:',
    );
  });
});
