/**
 * PodPlacements through the sync: listed beside the PodMutations from the fake API server, published in the same
 * snapshot in dynalite, their Accepted condition written through their own status subresource; a cluster without the
 * PodPlacement CRD keeps syncing its PodMutations, and any other failure to list them publishes nothing.
 */
import { describe, expect, it } from 'vitest';
import { syncSubject, useSyncWorld, validSpec, type SyncSubject } from './support.ts';

const world = useSyncWorld();

/** A PodPlacement spec the validator accepts: every Pod of namespace batch on Spot. */
function placementSpec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { enable: true, workloadSelector: { namespaces: ['batch'] }, mode: 'Spot', ...extra };
}

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
}

interface PlacementStatus {
  readonly conditions?: Condition[];
  readonly observedGeneration?: number;
  readonly lastSyncTime?: string;
}

function placementStatus(name: string): PlacementStatus {
  return world.server.getPlacement(name)?.['status'] ?? {};
}

function acceptedOf(name: string): Condition | undefined {
  return placementStatus(name).conditions?.find((condition) => condition.type === 'Accepted');
}

/** One sync of the subject, and the snapshot current after it. */
async function syncAndRead(subject: SyncSubject) {
  const report = await subject.sync();
  return { report, snapshot: await world.store(subject.clusterId).read() };
}

const placementPatches = () => world.server.statusPatches.filter((patch) => patch.path.includes('/podplacements/'));

describe('a sync of a cluster with PodPlacements', () => {
  it('publishes the valid PodPlacements in the snapshot beside the rules, sorted by name, and counts them', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha') });
    world.server.putPlacement({ metadata: { name: 'to-spot' }, spec: placementSpec() });
    world.server.putPlacement({
      metadata: { name: 'analytics' },
      spec: { enable: true, workloadSelector: { namespaces: ['analytics'] }, mode: 'Diversity', spotPercent: 70 },
    });
    world.server.putPlacement({ metadata: { name: 'misspelt' }, spec: placementSpec({ spotPrecent: 10 }) });

    const { report, snapshot } = await syncAndRead(syncSubject(world));

    expect(report).toMatchObject({
      outcome: 'published',
      valid: 1,
      placements: { crdInstalled: true, resources: 3, valid: 2, invalid: 1 },
    });
    expect(snapshot?.rules.map((rule) => rule.name)).toEqual(['alpha-pool']);
    expect(snapshot?.placements).toEqual([
      {
        name: 'analytics',
        generation: 1,
        enable: true,
        priority: 0,
        workloadSelector: { namespaces: ['analytics'] },
        mode: 'Diversity',
        spotPercent: 70,
        minOnDemand: 0,
      },
      {
        name: 'to-spot',
        generation: 1,
        enable: true,
        priority: 0,
        workloadSelector: { namespaces: ['batch'] },
        mode: 'Spot',
      },
    ]);
    // An invalid PodPlacement is not listed among the invalid rules: its own status names its reasons.
    expect(snapshot?.invalid).toEqual([]);
  });

  it('publishes no placements member when no PodPlacement is valid, so the snapshot stays as it was', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha') });
    const subject = syncSubject(world);
    await subject.sync();
    const before = await world.store(subject.clusterId).read();

    world.server.putPlacement({ metadata: { name: 'misspelt' }, spec: placementSpec({ mdoe: 'Spot' }) });
    const report = await subject.sync();

    expect(before).not.toHaveProperty('placements');
    expect(report).toMatchObject({ outcome: 'unchanged', version: before?.version });
  });

  it('marks a valid PodPlacement Accepted True with its warnings, generation and sync time', async () => {
    const withoutEnable = { workloadSelector: { namespaces: ['batch'] }, mode: 'Spot' };
    world.server.putPlacement({ metadata: { name: 'to-spot' }, spec: withoutEnable });
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(acceptedOf('to-spot')).toMatchObject({
      status: 'True',
      reason: 'Valid',
      observedGeneration: 1,
      message: expect.stringMatching(
        /^the placement passed validation and is published to admission; warning: PodPlacement "to-spot": spec\.enable: is not set, so the placement is disabled/,
      ) as unknown,
    });
    expect(placementStatus('to-spot')).toMatchObject({ observedGeneration: 1, lastSyncTime: report.startedAt });
    expect(placementStatus('to-spot')).not.toHaveProperty('enforcement');
  });

  it('marks a PodPlacement the validator rejects Accepted False, naming the field', async () => {
    world.server.putPlacement({ metadata: { name: 'misspelt' }, spec: placementSpec({ spotPrecent: 10 }) });

    await syncSubject(world).sync();

    expect(acceptedOf('misspelt')).toMatchObject({
      status: 'False',
      reason: 'Invalid',
      message: expect.stringContaining('PodPlacement "misspelt": spec.spotPrecent') as unknown,
    });
  });

  it('writes no PodPlacement status again while its verdict and generation stay the same', async () => {
    world.server.putPlacement({ metadata: { name: 'to-spot' }, spec: placementSpec() });
    const subject = syncSubject(world);
    const before = placementPatches().length;
    await subject.sync();
    const written = placementPatches().length;

    const again = await subject.sync();

    expect(written).toBe(before + 1);
    expect(placementPatches()).toHaveLength(written);
    expect(again).toMatchObject({ outcome: 'unchanged', statusPatched: 0 });
  });

  it('keeps the status of a PodMutation and a PodPlacement of the same name apart', async () => {
    world.server.put({ metadata: { name: 'shared' }, spec: { ...validSpec(), priority: 'high' } });
    world.server.putPlacement({ metadata: { name: 'shared' }, spec: placementSpec() });

    const report = await syncSubject(world).sync();

    const mutation = (world.server.get('shared')?.['status'] as { conditions: Condition[] }).conditions[0];
    expect(report).toMatchObject({ statusPatched: 2 });
    expect(mutation).toMatchObject({
      status: 'False',
      message: expect.stringMatching(/^PodMutation "shared"/) as unknown,
    });
    expect(acceptedOf('shared')).toMatchObject({ status: 'True', reason: 'Valid' });
  });
});

describe('a sync of a cluster without the PodPlacement CRD', () => {
  it('publishes the PodMutations, says so in its report and warns once', async () => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha') });
    world.server.setPlacementsInstalled(false);
    const subject = syncSubject(world);

    const { report, snapshot } = await syncAndRead(subject);

    expect(report).toMatchObject({
      outcome: 'published',
      valid: 1,
      placements: { crdInstalled: false, resources: 0, valid: 0, invalid: 0 },
    });
    expect(snapshot?.rules.map((rule) => rule.name)).toEqual(['alpha-pool']);
    expect(snapshot).not.toHaveProperty('placements');
    const warnings = subject.recorder.logs.filter((entry) => entry.level === 'warn');
    expect(warnings.map((entry) => entry.message)).toEqual([expect.stringContaining('no PodPlacement CRD')]);
  });
});

describe('a sync that cannot list the PodPlacements', () => {
  it.each([
    { failure: '500', fault: { kind: 'status', code: 500 } as const },
    { failure: '403', fault: { kind: 'status', code: 403, reason: 'Forbidden' } as const },
    { failure: 'a reset connection', fault: { kind: 'reset' } as const },
  ])('fails on $failure and keeps the published PodPlacements', async ({ fault }) => {
    world.server.put({ metadata: { name: 'alpha-pool' }, spec: validSpec('alpha') });
    world.server.putPlacement({ metadata: { name: 'to-spot' }, spec: placementSpec() });
    const subject = syncSubject(world);
    await subject.sync();
    const published = await world.store(subject.clusterId).read();

    world.server.removePlacement('to-spot');
    world.server.fail(fault, { resource: 'podplacements' });
    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'failed', failedStep: 'list' });
    expect(report.error).toContain('podplacements.agent.cloudpilot.ai');
    expect(await world.store(subject.clusterId).read()).toEqual(published);
    expect(published?.placements?.map((placement) => placement.name)).toEqual(['to-spot']);
  });

  it('publishes the PodPlacements removed once the list succeeds again', async () => {
    world.server.putPlacement({ metadata: { name: 'to-spot' }, spec: placementSpec() });
    const subject = syncSubject(world);
    await subject.sync();

    world.server.removePlacement('to-spot');
    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published' });
    expect(await world.store(subject.clusterId).read()).not.toHaveProperty('placements');
  });
});
