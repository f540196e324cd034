/**
 * What a snapshot carries beside the rules, the capacity and the PodPlacements: published with the rules, part of the
 * content hash, read back as published.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import type { NormalizedPlacement } from '../../lib/api/index.ts';
import { contentHashOf, decodeContent, decodedContentHash, serializeContent } from '../../lib/store/codec.ts';
import { type SnapshotContent } from '../../lib/store/index.ts';
import { canonicalJson } from '../../lib/json/index.ts';
import { node, nodePool } from '../capacity/support.ts';
import { contentOf, freshClusterId, ruleAdding, snapshotsOf } from './support.ts';
import { useTestTable } from '../support/dynamo.ts';

const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const RULES = contentOf([ruleAdding('move', { team: 'a' })]);

function withNodes(...names: string[]): SnapshotContent {
  const capacity = Capacity.of({
    nodes: names.map((name) => node(name, { 'example.com/pool': 'general' })),
    nodePools: [nodePool('general')],
  });
  return { ...RULES, capacity: capacity.published()! };
}

function placement(name: string, spotPercent = 70): NormalizedPlacement {
  return {
    name,
    enable: true,
    priority: 0,
    workloadSelector: { namespaces: ['batch'] },
    mode: 'Diversity',
    spotPercent,
    minOnDemand: 1,
  };
}

function withPlacements(...placements: NormalizedPlacement[]): SnapshotContent {
  return { ...RULES, placements };
}

/** The text serializeContent stores for the content, decoded as a reader decodes it. */
function storedAndDecoded(content: SnapshotContent, tamper: (text: string) => string = (text) => text) {
  const text = gunzipSync(Buffer.concat(serializeContent(content).encode(1 << 20))).toString('utf8');
  const decoded = decodeContent([gzipSync(Buffer.from(tamper(text), 'utf8'))]);
  if ('problem' in decoded) throw new Error(`test setup: ${decoded.problem}`);
  return decoded;
}

const table = useTestTable();

const store = () => snapshotsOf({ client: table.client, tableName: table.tableName, clock: () => NOW });

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

describe('the PodPlacements in a snapshot', () => {
  it('reads back the PodPlacements published with the rules', async () => {
    const clusterId = freshClusterId();
    const content = withPlacements(placement('analytics'), placement('batch'));

    const outcome = await store()(clusterId).publish(content);

    expect(await store()(clusterId).read()).toEqual({ ...content, version: 1, contentHash: outcome.contentHash });
  });

  it('publishes a new version when only a PodPlacement changed, and none when nothing did', async () => {
    const clusterId = freshClusterId();
    await store()(clusterId).publish(withPlacements(placement('batch', 70)));

    const changed = await store()(clusterId).publish(withPlacements(placement('batch', 80)));
    const again = await store()(clusterId).publish(withPlacements(placement('batch', 80)));

    expect([changed.published, changed.version]).toEqual([true, 2]);
    expect([again.published, again.version]).toEqual([false, 2]);
  });

  it('hashes and stores a snapshot without PodPlacements as snapshots were before they carried them', () => {
    expect(contentHashOf(withPlacements())).toBe(contentHashOf(RULES));
    expect(storedAndDecoded(withPlacements()).content).not.toHaveProperty('placements');
    expect(contentHashOf(withPlacements(placement('batch')))).not.toBe(contentHashOf(RULES));
  });

  it('gives the decoded content the hash the publisher computed, and another when a PodPlacement was changed', () => {
    const content = withPlacements(placement('batch', 70));

    expect(decodedContentHash(storedAndDecoded(content))).toBe(contentHashOf(content));
    const tampered = storedAndDecoded(content, (text) => text.replace('"spotPercent":70', '"spotPercent":100'));
    expect(decodedContentHash(tampered)).not.toBe(contentHashOf(content));
  });

  it('refuses content whose placements are no list', () => {
    const text = JSON.stringify({ ...RULES, placements: { name: 'batch' } });

    expect(decodeContent([gzipSync(Buffer.from(text, 'utf8'))])).toMatchObject({
      problem: 'content.placements must be an array',
    });
  });
});
