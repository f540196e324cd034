/** The capacity in a snapshot: published with the rules, part of the content hash, read back as it was published. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import { contentHashOf } from '../../lib/store/codec.ts';
import type { SnapshotContent } from '../../lib/store/index.ts';
import { canonicalJson } from '../../lib/values/index.ts';
import { node, nodePool } from '../capacity/support.ts';
import { contentOf, freshClusterId, ruleAdding, snapshotsOf, useTestTable } from './support.ts';

const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const RULES = contentOf([ruleAdding('move', { team: 'a' })]);

function withNodes(...names: string[]): SnapshotContent {
  const capacity = Capacity.of({
    nodes: names.map((name) => node(name, { 'example.com/pool': 'general' })),
    nodePools: [nodePool('general')],
  });
  return { ...RULES, capacity: capacity.published()! };
}

const table = useTestTable();

const store = () => snapshotsOf({ client: table.client(), tableName: table.tableName(), clock: () => NOW });

describe('the capacity in a snapshot', () => {
  it('reads back the capacity published with the rules', async () => {
    const clusterId = freshClusterId();
    const content = withNodes('n1', 'n2');

    const outcome = await store()(clusterId).publish(content);

    expect(await store()(clusterId).read()).toEqual({ ...content, version: 1, contentHash: outcome.contentHash });
  });

  it('publishes a new version when only the capacity changed, and none when nothing did', async () => {
    const clusterId = freshClusterId();
    await store()(clusterId).publish(withNodes('n1'));

    const joined = await store()(clusterId).publish(withNodes('n1', 'n2'));
    const again = await store()(clusterId).publish(withNodes('n1', 'n2'));

    expect([joined.published, joined.version]).toEqual([true, 2]);
    expect([again.published, again.version]).toEqual([false, 2]);
  });

  it('hashes a snapshot without a capacity as snapshots were hashed before they carried one', () => {
    const before = `{"invalid":${canonicalJson(RULES.invalid)},"rules":${canonicalJson(RULES.rules)}}`;

    expect(contentHashOf(RULES)).toBe(`sha256:${createHash('sha256').update(before).digest('hex')}`);
    expect(contentHashOf(withNodes('n1'))).not.toBe(contentHashOf(RULES));
  });
});
