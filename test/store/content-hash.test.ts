import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SnapshotContent } from '../../lib/store/index.ts';
import { contentHashOf, decodeContent, decodedContentHash, serializeContent } from '../../lib/store/codec.ts';
import { randomRules } from '../support/arbitraries.ts';
import { contentOf, ruleAdding } from './support.ts';

/** Decodes content stored as the given text, as a reader does. */
function decodedText(text: string) {
  const decoded = decodeContent([gzipSync(Buffer.from(text, 'utf8'))]);
  if ('problem' in decoded) throw new Error(`test setup: ${decoded.problem}`);
  return decoded;
}

/** The text serializeContent stores for the content. */
function storedText(content: SnapshotContent): string {
  return gunzipSync(Buffer.concat(serializeContent(content).encode(1 << 20))).toString('utf8');
}

const published: SnapshotContent = {
  ...contentOf([ruleAdding('good', { 'example.com/a': 'b' })]),
  invalid: [{ name: 'broken', issues: [{ field: 'spec', reason: 'sets no dimension' }] }],
};
const evil = ruleAdding('good', { 'example.com/a': 'evil' });

describe('the content hash of a decoded snapshot', () => {
  it('is the hash the publisher computed, for every content the publisher writes', () => {
    fc.assert(
      fc.property(randomRules, fc.string(), (rules, resourceVersion) => {
        const content = contentOf(rules, resourceVersion);
        expect(decodedContentHash(decodedText(storedText(content)))).toBe(contentHashOf(content));
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    ['with whitespace', (content: SnapshotContent) => JSON.stringify(content, undefined, 2)],
    [
      'with its keys in another order',
      (content: SnapshotContent) =>
        JSON.stringify({
          syncedAt: content.syncedAt,
          rules: content.rules,
          resourceVersion: content.resourceVersion,
          invalid: content.invalid,
        }),
    ],
    [
      'with label keys that look like array indexes',
      () => storedText({ ...published, rules: [ruleAdding('good', { '10': 'a', '9': 'b' })] }),
    ],
  ])("is still the content's canonical hash for a text written %s", (_, write) => {
    const decoded = decodedText(write(published));
    expect(decodedContentHash(decoded)).toBe(contentHashOf(decoded.content));
  });

  it.each([
    ['a rule changed', () => storedText({ ...published, rules: [evil] })],
    [
      'a second "rules" key inside the slice the fast path hashes',
      () => storedText(published).replace(',"syncedAt":', `,"rules":${JSON.stringify([evil])},"syncedAt":`),
    ],
    ['an invalid rule dropped', () => storedText({ ...published, invalid: [] })],
  ])('never matches the published hash when the text has %s', (_, tamper) => {
    const decoded = decodedText(tamper());
    expect(decoded.content).not.toEqual(published);
    expect(decodedContentHash(decoded)).not.toBe(contentHashOf(published));
  });
});
