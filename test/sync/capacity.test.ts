/** The capacity through the sync: read beside the PodMutations, published in the snapshot, never failing the sync. */
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_BUDGET } from '../../lib/api/index.ts';
import { Capacity, readCapacityObjects, type CapacityObjects } from '../../lib/capacity/index.ts';
import { nodeObject, nodePoolObject, placementOf } from '../capacity/support.ts';
import { syncSubject, useSyncWorld, validSpec } from './support.ts';

const world = useSyncWorld();

/** A reader of these Nodes and NodePools, as the cluster lists them. */
function reading(...objects: Record<string, unknown>[]) {
  return { read: (): Promise<CapacityObjects> => Promise.resolve(readCapacityObjects(objects, 'cluster')) };
}

const GENERAL = [
  nodeObject('n1', { 'example.com/pool': 'general' }),
  nodePoolObject('general', {}, { labels: { 'example.com/pool': 'general' } }),
];

describe('the capacity through the sync', () => {
  it('publishes the Nodes and NodePools in the snapshot, judged alike once read back', async () => {
    world.server.put({ metadata: { name: 'move' }, spec: validSpec('general') });
    const subject = syncSubject(world, { capacity: reading(...GENERAL) });

    const report = await subject.sync();

    expect(report.outcome).toBe('published');
    const snapshot = await world.store(subject.clusterId).read();
    const stored = Capacity.fromPublished(snapshot?.capacity, 'capacity');
    expect(stored.judge(placementOf({ nodeSelector: { 'example.com/pool': 'general' } })).text()).toBe(
      'fits NodePool general; 1 Node',
    );
    expect(subject.recorder.emitted.filter((metric) => metric.name === 'CapacityUnpublished')).toEqual([]);
  });

  it('publishes a new snapshot when a Node joins, the rules unchanged', async () => {
    world.server.put({ metadata: { name: 'move' }, spec: validSpec('general') });
    const subject = syncSubject(world);
    await subject.sync({ capacity: reading(...GENERAL) });

    const unchanged = await subject.sync({ capacity: reading(...GENERAL) });
    const joined = await subject.sync({ capacity: reading(...GENERAL, nodeObject('n2', { 'example.com/pool': 'b' })) });

    expect([unchanged.outcome, joined.outcome]).toEqual(['unchanged', 'published']);
  });

  it('publishes the rules without a capacity when the Nodes cannot be read, and warns and counts it', async () => {
    world.server.put({ metadata: { name: 'move' }, spec: validSpec('general') });
    const failing = { read: () => Promise.reject(new Error('nodes is forbidden')) };
    const subject = syncSubject(world, { capacity: failing });

    const report = await subject.sync();

    expect(report.outcome).toBe('published');
    const snapshot = await world.store(subject.clusterId).read();
    expect(snapshot?.rules.map((rule) => rule.name)).toEqual(['move']);
    expect(snapshot).not.toHaveProperty('capacity');
    expect(subject.recorder.logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining('reading the Nodes and NodePools failed') as unknown,
      }),
    );
    expect(subject.recorder.emitted).toContainEqual({ name: 'CapacityUnpublished', unit: 'Count', value: 1 });
  });

  it('publishes no capacity for a listing of no Node and no NodePool, in which every Pod would fit nowhere', async () => {
    world.server.put({ metadata: { name: 'move' }, spec: validSpec('general') });
    const subject = syncSubject(world, { capacity: reading() });

    await subject.sync();

    expect(await world.store(subject.clusterId).read()).not.toHaveProperty('capacity');
    expect(subject.recorder.logs).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: expect.stringMatching(/^the cluster listed no Node and no NodePool; /) as unknown,
      }),
    );
    expect(subject.recorder.emitted).toContainEqual({ name: 'CapacityUnpublished', unit: 'Count', value: 1 });
  });

  it('publishes no capacity above the snapshot budget, and says how big it was', async () => {
    world.server.put({ metadata: { name: 'move' }, spec: validSpec('general') });
    // Each Node of its own shape, with twenty long labels: about 1.5 MB in all.
    const labels = (index: number) =>
      Object.fromEntries(
        Array.from({ length: 20 }, (_, key) => [`example.com/label-${key}`, `${index}`.padStart(63, 'x')]),
      );
    const wide = Array.from({ length: 800 }, (_, index) => nodeObject(`node-${index}`, labels(index)));
    const subject = syncSubject(world, { capacity: reading(...wide) });

    await subject.sync();

    expect(await world.store(subject.clusterId).read()).not.toHaveProperty('capacity');
    const warning = subject.recorder.logs.find((log) => log.message.includes('above the snapshot budget'));
    expect(warning?.fields).toMatchObject({ maxCapacityBytes: SNAPSHOT_BUDGET.maxCapacityBytes });
    expect(warning?.fields['capacityBytes']).toBeGreaterThan(SNAPSHOT_BUDGET.maxCapacityBytes);
  });
});
