/** The enforcement annotation through the sync: from the fake API server into the snapshot and the status. */
import { describe, expect, it } from 'vitest';

import { syncSubject, useSyncWorld, validSpec } from './support.ts';
import { ENFORCEMENT_ANNOTATION } from '../../lib/api/constants.ts';

const world = useSyncWorld();

const audited = (name: string, value = 'audit') => ({
  metadata: { name, annotations: { [ENFORCEMENT_ANNOTATION]: value } },
  spec: validSpec(name),
});

function statusOf(name: string): Record<string, unknown> | undefined {
  return world.server.get(name)?.['status'] as Record<string, unknown> | undefined;
}

describe('the enforcement annotation through the sync', () => {
  it('carries an audited rule into the snapshot as audited', async () => {
    world.server.put(audited('spot-trial'));
    world.server.put({ metadata: { name: 'legacy-pool' }, spec: validSpec('legacy') });
    const subject = syncSubject(world);

    await subject.sync();

    const snapshot = await world.store(subject.clusterId).read();
    expect(snapshot?.rules.map((rule) => [rule.name, rule.enforcement])).toEqual([
      ['legacy-pool', 'enforce'],
      ['spot-trial', 'audit'],
    ]);
  });

  it('writes each valid rule its enforcement in the status', async () => {
    world.server.put(audited('spot-trial'));
    world.server.put({ metadata: { name: 'legacy-pool' }, spec: validSpec('legacy') });

    await syncSubject(world).sync();

    expect(statusOf('spot-trial')?.['enforcement']).toBe('audit');
    expect(statusOf('legacy-pool')?.['enforcement']).toBe('enforce');
  });

  it('writes the status again when only the annotation changed, which leaves the generation as it was', async () => {
    world.server.put(audited('spot-trial'));
    const subject = syncSubject(world);
    await subject.sync();
    const generation = world.server.get('spot-trial')?.['metadata'] as { generation?: number };

    world.server.put(audited('spot-trial', 'enforce'));
    const report = await subject.sync();

    expect((world.server.get('spot-trial')?.['metadata'] as { generation?: number }).generation).toBe(
      generation.generation,
    );
    expect(report.statusPatched).toBe(1);
    expect(statusOf('spot-trial')?.['enforcement']).toBe('enforce');
    expect((await world.store(subject.clusterId).read())?.rules[0]?.enforcement).toBe('enforce');
  });

  it('writes no status when neither the rule nor its enforcement changed', async () => {
    world.server.put(audited('spot-trial'));
    const subject = syncSubject(world);
    await subject.sync();

    const report = await subject.sync();

    expect(report.statusPatched).toBe(0);
  });

  it('skips a rule whose enforcement is a typo, reports the annotation and removes the enforcement from its status', async () => {
    world.server.put(audited('spot-trial'));
    const subject = syncSubject(world);
    await subject.sync();

    world.server.put(audited('spot-trial', 'Audit'));
    await subject.sync();

    const snapshot = await world.store(subject.clusterId).read();
    expect(snapshot?.rules).toEqual([]);
    expect(snapshot?.invalid[0]?.issues[0]?.field).toBe(`metadata.annotations["${ENFORCEMENT_ANNOTATION}"]`);
    expect(statusOf('spot-trial')).not.toHaveProperty('enforcement');
  });

  it('skips a rule whose enforcement key is a typo and writes Accepted=False naming the key and the known one', async () => {
    const key = 'podmutation.agent.cloudpilot.ai/enforcment';
    world.server.put({
      metadata: { name: 'spot-trial', annotations: { [key]: 'audit' } },
      spec: validSpec('spot-trial'),
    });
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(report).toMatchObject({ valid: 0, invalid: 1 });
    expect((await world.store(subject.clusterId).read())?.rules).toEqual([]);
    const condition = (
      statusOf('spot-trial')?.['conditions'] as { type: string; status: string; message: string }[]
    )[0];
    expect(condition).toMatchObject({ type: 'Accepted', status: 'False' });
    expect(condition?.message).toContain(
      `metadata.annotations["${key}"]: unknown annotation under podmutation.agent.cloudpilot.ai/; expected one of ${ENFORCEMENT_ANNOTATION}`,
    );
  });
});
