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

describe('the content hash of a decoded snapshot with a capacity', () => {
  const withCapacity = (notReadyReason: string): SnapshotContent => ({
    ...published,
    capacity: {
      format: 1,
      nodeShapes: [{ labels: { 'example.com/pool': 'a' }, taints: [], unschedulable: false, nodes: ['n1'] }],
      nodePools: [{ metadata: { name: 'p' }, status: { conditions: [{ type: 'Ready', message: notReadyReason }] } }],
    },
  });

  it.each([
    ['a plain capacity', withCapacity('')],
    [
      'a capacity whose text holds the frame that follows it',
      withCapacity(`,"invalid":${JSON.stringify(published.invalid)},"resourceVersion":"100","rules":`),
    ],
  ])('is the hash the publisher computed, for %s', (_, content) => {
    expect(decodedContentHash(decodedText(storedText(content)))).toBe(contentHashOf(content));
  });

  it('never matches the published hash when the capacity was changed', () => {
    const content = withCapacity('');
    const tampered = storedText(content).replace('"n1"', '"n2"');
    expect(decodedContentHash(decodedText(tampered))).not.toBe(contentHashOf(content));
  });
});
