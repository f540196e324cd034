import jsonPatch, { type Operation } from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { diffJson, escapePointerToken } from '../../lib/patch/index.ts';

describe('diffJson', () => {
  it('escapes keys per RFC 6901 ("~" as "~0", "/" as "~1")', () => {
    expect(escapePointerToken('example.com/a~b')).toBe('example.com~1a~0b');
    expect(
      diffJson({ metadata: { annotations: {} } }, { metadata: { annotations: { 'example.com/a~b': 'x' } } }),
    ).toEqual([{ op: 'add', path: '/metadata/annotations/example.com~1a~0b', value: 'x' }]);
  });

  it('creates a missing parent whole instead of writing into it', () => {
    const operations = diffJson({ spec: {} }, { spec: { affinity: { nodeAffinity: { x: 1 } } } });
    expect(operations).toEqual([{ op: 'add', path: '/spec/affinity', value: { nodeAffinity: { x: 1 } } }]);
  });

  it('replaces arrays and atomic subtrees whole', () => {
    const before = { spec: { tolerations: [{ key: 'a' }], affinity: { nodeAffinity: { required: 1, preferred: 2 } } } };
    const after = {
      spec: { tolerations: [{ key: 'a' }, { key: 'b' }], affinity: { nodeAffinity: { required: 3, preferred: 2 } } },
    };
    expect(diffJson(before, after, new Set(['/spec/affinity/nodeAffinity']))).toEqual([
      { op: 'replace', path: '/spec/tolerations', value: after.spec.tolerations },
      { op: 'replace', path: '/spec/affinity/nodeAffinity', value: after.spec.affinity.nodeAffinity },
    ]);
  });

  it('removes members that are gone and emits nothing for equal documents', () => {
    expect(diffJson({ a: { b: 1, c: 2 } }, { a: { b: 1 } })).toEqual([{ op: 'remove', path: '/a/c' }]);
    expect(diffJson({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([]);
  });

  it('replaces a null parent rather than adding under it', () => {
    const before = { metadata: { annotations: null } };
    const after = { metadata: { annotations: { a: 'b' } } };
    const operations = diffJson(before, after);
    expect(
      jsonPatch.applyPatch(structuredClone(before), JSON.parse(JSON.stringify(operations)) as Operation[], true, false)
        .newDocument,
    ).toEqual(after);
  });
});
