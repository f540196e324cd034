/**
 * The PodPlacements in a snapshot: stored through DynamoDB's wire protocol (dynalite) beside the rules and the capacity,
 * part of the content hash, read back as published; a snapshot without them hashes, stores and reads as before.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { NormalizedPlacement } from '../../lib/api/index.ts';
import { Capacity } from '../../lib/capacity/index.ts';
import { contentHashOf, decodeContent, decodedContentHash, serializeContent } from '../../lib/store/codec.ts';
import type { SnapshotContent } from '../../lib/store/index.ts';
import { canonicalJson } from '../../lib/values/index.ts';
import { node, nodePool } from '../capacity/support.ts';
import { contentOf, freshClusterId, ruleAdding, snapshotsOf, useTestTable } from './support.ts';

const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const RULES = contentOf([ruleAdding('move', { team: 'a' })]);

const TO_SPOT: NormalizedPlacement = {
  name: 'batch-to-spot',
  generation: 1,
  enable: true,
  priority: 0,
  workloadSelector: { namespaces: ['batch'] },
  mode: 'Spot',
};
const DIVERSITY: NormalizedPlacement = {
  name: 'analytics-diversity',
  generation: 3,
  enable: true,
  priority: 10,
  workloadSelector: { namespaces: ['analytics'], kinds: ['Deployment'] },
  mode: 'Diversity',
  spotPercent: 70,
  minOnDemand: 2,
};

function withPlacements(...placements: NormalizedPlacement[]): SnapshotContent {
  return { ...RULES, placements };
}

const CAPACITY = Capacity.of({
  nodes: [node('n1', { 'example.com/pool': 'general' })],
  nodePools: [nodePool('general')],
}).published()!;

const table = useTestTable();

const store = () => snapshotsOf({ client: table.client(), tableName: table.tableName(), clock: () => NOW });

/** The text serializeContent stores for the content. */
function storedText(content: SnapshotContent): string {
  return gunzipSync(Buffer.concat(serializeContent(content).encode(1 << 20))).toString('utf8');
}

describe('the PodPlacements in a snapshot', () => {
  it.each([
    { with: 'rules', content: withPlacements(DIVERSITY, TO_SPOT) },
    { with: 'rules and a capacity', content: { ...withPlacements(DIVERSITY, TO_SPOT), capacity: CAPACITY } },
  ])('read back as published with $with', async ({ content }) => {
    const clusterId = freshClusterId();

    const outcome = await store()(clusterId).publish(content);

    expect(await store()(clusterId).read()).toEqual({ ...content, version: 1, contentHash: outcome.contentHash });
  });

  it('publish a new version when only the PodPlacements changed, and none when nothing did', async () => {
    const clusterId = freshClusterId();
    await store()(clusterId).publish(withPlacements(TO_SPOT));

    const changed = await store()(clusterId).publish(withPlacements(TO_SPOT, DIVERSITY));
    const again = await store()(clusterId).publish(withPlacements(TO_SPOT, DIVERSITY));

    expect([changed.published, changed.version]).toEqual([true, 2]);
    expect([again.published, again.version]).toEqual([false, 2]);
  });

  it('leave a snapshot without them hashed as snapshots were before they carried any', () => {
    const before = `{"invalid":${canonicalJson(RULES.invalid)},"rules":${canonicalJson(RULES.rules)}}`;

    expect(contentHashOf(RULES)).toBe(`sha256:${createHash('sha256').update(before).digest('hex')}`);
    expect(contentHashOf(withPlacements(TO_SPOT))).not.toBe(contentHashOf(RULES));
  });

  it('leave a snapshot stored without them readable, with no placements member', async () => {
    const clusterId = freshClusterId();

    await store()(clusterId).publish(RULES);

    expect(await store()(clusterId).read()).not.toHaveProperty('placements');
  });

  it.each([
    { content: withPlacements(TO_SPOT) },
    { content: { ...withPlacements(TO_SPOT, DIVERSITY), capacity: CAPACITY } },
  ])('hash as the publisher hashed them when read back from the stored text', ({ content }) => {
    const decoded = decodeContent([gzipSync(Buffer.from(storedText(content), 'utf8'))]);
    if ('problem' in decoded) throw new Error(decoded.problem);

    expect(decodedContentHash(decoded)).toBe(contentHashOf(content));
  });

  it('hash a stored text whose PodPlacement was changed to another hash than the publisher’s', () => {
    const published = withPlacements(TO_SPOT);
    const altered = storedText(published).replace('"mode":"Spot"', '"mode":"NonSpot"');
    const decoded = decodeContent([gzipSync(Buffer.from(altered, 'utf8'))]);
    if ('problem' in decoded) throw new Error(decoded.problem);

    expect(decodedContentHash(decoded)).not.toBe(contentHashOf(published));
  });

  it.each([
    { placements: 'all', problem: 'content.placements must be an array' },
    { placements: [{ mode: 'Spot' }], problem: 'content.placements[0].name must be a non-empty string' },
    { placements: [7], problem: 'content.placements[0] must be an object' },
  ])('make a snapshot whose placements are $placements unreadable', ({ placements, problem }) => {
    const text = JSON.stringify({ ...RULES, placements });

    expect(decodeContent([gzipSync(Buffer.from(text, 'utf8'))])).toMatchObject({ problem });
  });
});
