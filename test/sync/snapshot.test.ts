import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DuplicateRuleError, MalformedInputError } from '../../lib/errors/index.ts';
import { buildSnapshotContent } from '../../lib/sync/index.ts';
import { invalidSpec, validSpec } from './support.ts';

const NOW = Date.parse('2026-12-01T10:00:00.000Z');

function resource(name: string, spec: unknown, generation = 1): Record<string, unknown> {
  return { apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodMutation', metadata: { name, generation }, spec };
}

describe('building snapshot content from a cluster list', () => {
  it('keeps valid rules normalized and sorted by name', () => {
    const list = {
      items: [resource('zeta', validSpec('b')), resource('alpha', validSpec('a'), 3)],
      resourceVersion: '42',
    };

    const content = buildSnapshotContent(list, NOW);

    expect(content.rules).toEqual([
      {
        name: 'alpha',
        generation: 3,
        enable: true,
        enforcement: 'enforce',
        priority: 0,
        workloadSelector: { namespaces: ['apps'] },
        mutationRemove: {},
        mutationAdd: { nodeSelector: { 'example.com/pool': 'a' } },
      },
      expect.objectContaining({ name: 'zeta', mutationAdd: { nodeSelector: { 'example.com/pool': 'b' } } }),
    ]);
  });

  it('keeps invalid rules with their issues, sorted by name', () => {
    const list = {
      items: [resource('wrong-b', invalidSpec()), resource('ok', validSpec()), resource('wrong-a', {})],
      resourceVersion: '7',
    };

    const content = buildSnapshotContent(list, NOW);

    expect(content.invalid.map((rule) => rule.name)).toEqual(['wrong-a', 'wrong-b']);
    expect(content.invalid[1]?.issues).toEqual([
      { field: 'spec.priority', reason: 'must be a 32-bit integer (got "high")' },
    ]);
    expect(content.rules.map((rule) => rule.name)).toEqual(['ok']);
  });

  it('records the list resourceVersion and the sync time', () => {
    const content = buildSnapshotContent({ items: [], resourceVersion: '9001' }, NOW);

    expect(content).toEqual({ rules: [], invalid: [], resourceVersion: '9001', syncedAt: '2026-12-01T10:00:00.000Z' });
  });

  it('gives the same content whatever order the list holds its items in', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    const items = names.map((name, index) => resource(name, index % 3 === 0 ? invalidSpec() : validSpec(name)));
    const expected = buildSnapshotContent({ items, resourceVersion: '1' }, NOW);
    fc.assert(
      fc.property(fc.shuffledSubarray(items, { minLength: items.length }), (shuffled) => {
        expect(buildSnapshotContent({ items: shuffled, resourceVersion: '1' }, NOW)).toEqual(expected);
      }),
    );
  });

  it('rejects a list that holds one name twice as a duplicate rule', () => {
    const list = {
      items: [resource('twice', validSpec()), resource('other', validSpec()), resource('twice', validSpec())],
      resourceVersion: '3',
    };

    expect(() => buildSnapshotContent(list, NOW)).toThrow(DuplicateRuleError);
    expect(() => buildSnapshotContent(list, NOW)).toThrow(
      'PodMutation "twice" is defined more than once (list item 0, list item 2)',
    );
  });

  it('rejects a list item without metadata.name as malformed', () => {
    const list = { items: [resource('named', validSpec()), { spec: validSpec() }], resourceVersion: '3' };

    expect(() => buildSnapshotContent(list, NOW)).toThrow(MalformedInputError);
    expect(() => buildSnapshotContent(list, NOW)).toThrow('list item 1 has no metadata.name');
  });
});
