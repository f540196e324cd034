import { describe, expect, it } from 'vitest';
import { invalidSpec, manualClock, syncSubject, useSyncWorld, validSpec } from './support.ts';

const world = useSyncWorld();

describe('a sync of a healthy cluster', () => {
  it('publishes the valid rules normalized and sorted, the invalid ones with reasons, and the list resourceVersion', async () => {
    const { server } = world;
    server.put({ metadata: { name: 'zeta-pool' }, spec: validSpec('zeta') });
    server.put({ metadata: { name: 'broken' }, spec: invalidSpec() });
    server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha') });
    const listedVersion = server.resourceVersion;
    const subject = syncSubject(world);

    const report = await subject.sync();

    const snapshot = await world.store(subject.clusterId).read();
    expect(report).toMatchObject({
      outcome: 'published',
      resources: 3,
      valid: 2,
      invalid: 1,
      version: 1,
      resourceVersion: listedVersion,
    });
    expect(snapshot?.rules).toEqual([
      {
        name: 'alpha-pool',
        generation: 1,
        enable: true,
        enforcement: 'enforce',
        priority: 0,
        workloadSelector: { namespaces: ['apps'] },
        mutationRemove: {},
        mutationAdd: { nodeSelector: { 'example.com/pool': 'alpha' } },
      },
      expect.objectContaining({ name: 'zeta-pool', mutationAdd: { nodeSelector: { 'example.com/pool': 'zeta' } } }),
    ]);
    expect(snapshot?.invalid).toEqual([
      {
        name: 'broken',
        generation: 1,
        issues: [{ field: 'spec.priority', reason: 'must be a 32-bit integer (got "high")' }],
      },
    ]);
    expect(snapshot?.resourceVersion).toBe(listedVersion);
  });

  it('stamps the snapshot and the sync item with the time the sync started', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    const clock = manualClock(Date.parse('2026-12-01T12:00:00.000Z'));
    const subject = syncSubject(world, { clock });

    await subject.sync();

    expect((await world.store(subject.clusterId).read())?.syncedAt).toBe('2026-12-01T12:00:00.000Z');
    expect(await world.records(subject.clusterId).readSyncStatus()).toEqual({
      lastAttemptAt: '2026-12-01T12:00:00.000Z',
      lastStatus: 'published',
      lastSuccessAt: '2026-12-01T12:00:00.000Z',
      lastVersion: 1,
    });
  });

  it('reports a second sync with no change as unchanged and keeps the version', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    const subject = syncSubject(world);
    await subject.sync();
    const first = await world.store(subject.clusterId).read();

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'unchanged', version: 1 });
    expect(await world.store(subject.clusterId).read()).toEqual(first);
    expect((await world.records(subject.clusterId).readSyncStatus())?.lastStatus).toBe('unchanged');
  });

  it('publishes a new version when a resource is added', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    const subject = syncSubject(world);
    await subject.sync();
    world.server.put({ metadata: { name: 'beta-pool' }, spec: validSpec('beta') });

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', version: 2, valid: 2 });
    expect((await world.store(subject.clusterId).read())?.rules.map((rule) => rule.name)).toEqual([
      'alpha-pool',
      'beta-pool',
    ]);
  });

  it('publishes a new version when a resource spec changes', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('general') });
    const subject = syncSubject(world);
    await subject.sync();
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('spot') });

    const report = await subject.sync();

    const snapshot = await world.store(subject.clusterId).read();
    expect(report).toMatchObject({ outcome: 'published', version: 2 });
    expect(snapshot?.rules).toEqual([
      expect.objectContaining({
        name: 'alpha-pool',
        generation: 2,
        mutationAdd: { nodeSelector: { 'example.com/pool': 'spot' } },
      }),
    ]);
  });

  it('publishes a new version without the resource when it is deleted', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    world.server.put({ metadata: { name: 'beta-pool' }, spec: validSpec() });
    const subject = syncSubject(world);
    await subject.sync();
    world.server.remove('alpha-pool');

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', version: 2, resources: 1 });
    expect((await world.store(subject.clusterId).read())?.rules.map((rule) => rule.name)).toEqual(['beta-pool']);
  });

  it('publishes an empty set when the cluster has no resources', async () => {
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', resources: 0, valid: 0, invalid: 0, version: 1 });
    expect(await world.store(subject.clusterId).read()).toMatchObject({ rules: [], invalid: [], version: 1 });
  });

  it('publishes an empty set when the last resource is deleted', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    const subject = syncSubject(world);
    await subject.sync();
    world.server.remove('alpha-pool');

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', resources: 0, version: 2 });
    expect(await world.store(subject.clusterId).read()).toMatchObject({ rules: [], invalid: [], version: 2 });
  });

  it('logs one line with what the sync saw and did', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    world.server.put({ metadata: { name: 'broken' }, spec: invalidSpec() });
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(subject.recorder.logs).toEqual([
      {
        level: 'info',
        message: 'sync published a new snapshot',
        fields: expect.objectContaining({
          clusterId: subject.clusterId,
          outcome: 'published',
          resources: 2,
          valid: 1,
          invalid: 1,
          version: 1,
          durationMs: report.durationMs,
          statusPatched: 2,
          statusFailed: 0,
        }) as unknown,
      },
    ]);
  });

  it('emits the rule counts, the duration, no error and one publish as metrics', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec() });
    world.server.put({ metadata: { name: 'broken' }, spec: invalidSpec() });
    const clock = manualClock();
    const subject = syncSubject(world, { clock });

    await subject.sync();

    expect(subject.recorder.emitted).toEqual(
      expect.arrayContaining([
        { name: 'RulesSynced', unit: 'Count', value: 1 },
        { name: 'RulesInvalid', unit: 'Count', value: 1 },
        { name: 'SyncErrors', unit: 'Count', value: 0 },
        { name: 'SyncDurationMs', unit: 'Milliseconds', value: 0 },
        { name: 'SnapshotPublished', unit: 'Count', value: 1 },
      ]),
    );
  });

  it('emits SnapshotPublished 0 when the snapshot was unchanged', async () => {
    const subject = syncSubject(world);
    await subject.sync();
    subject.recorder.emitted.length = 0;

    await subject.sync();

    expect(subject.recorder.emitted).toContainEqual({ name: 'SnapshotPublished', unit: 'Count', value: 0 });
  });
});
