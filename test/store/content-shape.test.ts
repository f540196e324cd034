import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeContent } from '../../lib/store/codec.ts';

function decoded(value: unknown) {
  return decodeContent([gzipSync(Buffer.from(JSON.stringify(value)))]);
}

describe('the shape check of decoded snapshot content', () => {
  it('names every misshapen field at its path, not only the first', () => {
    const result = decoded({
      rules: [{ name: '', enable: 'yes', priority: 1, workloadSelector: {}, mutationRemove: {}, mutationAdd: {} }],
      invalid: [{ name: 'x', issues: [{ field: 'spec' }] }],
      resourceVersion: '1',
      syncedAt: '2026-12-02T00:00:00.000Z',
    });

    expect(result).toEqual({
      problem:
        'content.rules[0].name must be a non-empty string; content.rules[0].enable must be a boolean; ' +
        'content.invalid[0].issues[0] must be an object with string field and reason',
    });
  });

  it('bounds the report of a hugely damaged snapshot', () => {
    const result = decoded({
      rules: Array.from({ length: 1000 }, () => 'not a rule'),
      invalid: [],
      resourceVersion: '1',
      syncedAt: 'now',
    });

    expect('problem' in result && result.problem.split('; ')).toHaveLength(9);
    expect('problem' in result && result.problem).toMatch(/; and 992 more issues$/);
  });

  it("accepts content of a snapshot's shape", () => {
    const content = { rules: [], invalid: [], resourceVersion: '7', syncedAt: '2026-12-02T00:00:00.000Z' };

    expect(decoded(content)).toEqual({ content, text: JSON.stringify(content) });
  });
});
