/**
 * Two syncs of one cluster (the scheduled Lambda and `podmutation sync --once`) never let an older list win: the
 * sync lease keeps a second sync from listing while the first holds it, and the store refuses a list that started
 * before the published one. Lists are held open by a gate, never by a sleep; clocks are manual.
 */
import { describe, expect, it } from 'vitest';
import type { PodMutationList, PodMutationSource } from '../../lib/cluster/index.ts';
import { type HeldSyncLease, type SyncLeaseStore } from '../../lib/store/index.ts';
import { syncOnce, type SyncDependencies, type SyncReport } from '../../lib/sync/index.ts';
import { freshClusterId, leasesOf, type PerCluster } from '../store/support.ts';
import { createRecorder, manualClock, useSyncWorld, validSpec, type ManualClock, type Recorder } from './support.ts';

const world = useSyncWorld();

const START = Date.parse('2026-12-01T10:00:00.000Z');
const LEASE_MS = 120_000;

/** A source whose list, once read from the cluster, waits for `open()` before it returns: a sync paused mid-list. */
interface GatedSource {
  readonly source: PodMutationSource;
  /** Resolves when the list has been read (the sync is paused after it). */
  readonly listed: Promise<PodMutationList>;
  open(): void;
}

function gated(source: PodMutationSource): GatedSource {
  let open = (): void => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let listed: (list: PodMutationList) => void = () => undefined;
  const wasListed = new Promise<PodMutationList>((resolve) => (listed = resolve));
  return {
    source: {
      async listPodMutations() {
        const list = await source.listPodMutations();
        listed(list);
        await gate;
        return list;
      },
      listPodPlacements: () => source.listPodPlacements(),
      patchStatus: (name, status, kind) => source.patchStatus(name, status, kind),
      readClusterUid: () => source.readClusterUid(),
    },
    listed: wasListed,
    open: () => open(),
  };
}

/** One cluster synced by several syncs sharing a manual clock and the table. */
interface Cluster {
  readonly clusterId: string;
  readonly clock: ManualClock;
  readonly leases: PerCluster<SyncLeaseStore>;
  /** A sync of this cluster with its own recorder; `lease` names its owner, with optional waiting. */
  sync(options?: {
    owner?: string;
    waitMs?: number;
    pollMs?: number;
    sleep?: (ms: number) => Promise<void>;
    source?: PodMutationSource;
    recorder?: Recorder;
  }): Promise<SyncReport>;
}

function cluster(): Cluster {
  const clusterId = freshClusterId();
  const clock = manualClock(START);
  const leases = leasesOf({ client: world.client, tableName: world.tableName, clock });
  const source = world.source();
  return {
    clusterId,
    clock,
    leases,
    sync(options = {}) {
      const recorder = options.recorder ?? createRecorder();
      const deps: SyncDependencies = {
        source: options.source ?? source,
        store: world.store(clusterId),
        records: world.records(clusterId),
        binding: { store: world.bindings(clusterId), owner: options.owner ?? 'serve:1' },
        clusterId,
        logger: recorder.logger,
        metrics: recorder.metrics,
        clock,
        ...(options.owner === undefined
          ? {}
          : {
              lease: {
                leases: leases(clusterId),
                owner: options.owner,
                ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }),
                ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
                ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
              },
            }),
      };
      return syncOnce(deps);
    },
  };
}

/** A sleep that moves the manual clock and records each wait. */
function fakeSleep(clock: ManualClock, onSleep: () => Promise<void> = () => Promise.resolve()) {
  const sleeps: number[] = [];
  const sleep = async (milliseconds: number): Promise<void> => {
    sleeps.push(milliseconds);
    clock.advance(milliseconds);
    await onSleep();
  };
  return { sleep, sleeps };
}

function heldLease(attempt: Awaited<ReturnType<SyncLeaseStore['acquire']>>): HeldSyncLease {
  if (!attempt.acquired) throw new Error(`test setup: the lease is held by ${attempt.holder.owner}`);
  return attempt.lease;
}

describe('two syncs that race without a lease', () => {
  it('publishes nothing from the sync whose list started first when the later list was published before it', async () => {
    const { server } = world;
    server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('general') });
    const subject = cluster();
    const older = gated(world.source());
    const olderRecorder = createRecorder();
    const olderSync = subject.sync({ source: older.source, recorder: olderRecorder });
    await older.listed;
    server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('spot') });
    subject.clock.advance(1_000);
    const newer = await subject.sync();
    const newerSnapshot = await world.store(subject.clusterId).read();
    const patchesBefore = server.statusPatches.length;

    older.open();
    const report = await olderSync;

    expect(newer).toMatchObject({ outcome: 'published', version: 1 });
    expect(report).toMatchObject({ outcome: 'skipped', skipReason: 'superseded', version: 1, statusPatched: 0 });
    expect(report.error).toMatch(
      /a newer list is already published: version 1 .* started at 2026-12-01T10:00:01\.000Z, after this one \(started at 2026-12-01T10:00:00\.000Z\)/,
    );
    expect(await world.store(subject.clusterId).read()).toEqual(newerSnapshot);
    expect(newerSnapshot?.rules[0]?.mutationAdd.nodeSelector).toEqual({ 'example.com/pool': 'spot' });
    expect(server.statusPatches.length).toBe(patchesBefore);
    expect(await world.records(subject.clusterId).readSyncStatus()).toMatchObject({
      lastStatus: 'published',
      lastAttemptAt: '2026-12-01T10:00:01.000Z',
    });
    expect(olderRecorder.emitted).toEqual(
      expect.arrayContaining([
        { name: 'SyncSkipped', unit: 'Count', value: 1 },
        { name: 'SyncErrors', unit: 'Count', value: 0 },
        { name: 'SnapshotPublished', unit: 'Count', value: 0 },
      ]),
    );
    expect(olderRecorder.logs.map((entry) => [entry.level, entry.message])).toEqual([
      ['warn', 'sync skipped: a list that started after this one is already published'],
    ]);
  });
});

describe('two syncs under the sync lease', () => {
  it('skips the second sync while the first holds the lease, naming the holder and the expiry', async () => {
    world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec() });
    const subject = cluster();
    const first = gated(world.source());
    const firstSync = subject.sync({ owner: 'lambda:req-1', source: first.source });
    await first.listed;
    const recorder = createRecorder();

    const second = await subject.sync({ owner: 'cli:laptop:4242', recorder });

    expect(second).toMatchObject({
      outcome: 'skipped',
      skipReason: 'leaseHeld',
      leaseHolder: 'lambda:req-1',
      leaseExpiresAt: '2026-12-01T10:02:00.000Z',
      resources: 0,
      statusPatched: 0,
    });
    expect(recorder.logs).toEqual([
      {
        level: 'warn',
        message: 'sync skipped: another sync holds the sync lease of the cluster; the next sync retries',
        fields: expect.objectContaining({
          clusterId: subject.clusterId,
          leaseHolder: 'lambda:req-1',
          skipReason: 'leaseHeld',
        }) as unknown,
      },
    ]);
    expect(recorder.emitted).toContainEqual({ name: 'SyncErrors', unit: 'Count', value: 0 });
    expect(recorder.emitted).toContainEqual({ name: 'SyncSkipped', unit: 'Count', value: 1 });
    expect(await world.records(subject.clusterId).readSyncStatus()).toBeUndefined();
    first.open();
    expect(await firstSync).toMatchObject({ outcome: 'published', version: 1 });
  });

  it('lets a waiting sync take the lease once the holder released it, and list what the cluster holds after the holder', async () => {
    const { server } = world;
    server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('general') });
    const subject = cluster();
    const first = gated(world.source());
    const firstSync = subject.sync({ owner: 'lambda:req-1', source: first.source });
    await first.listed;
    server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('spot') });
    const waiting = fakeSleep(subject.clock, async () => {
      first.open();
      await firstSync;
    });

    const second = await subject.sync({ owner: 'cli:laptop:4242', waitMs: 10_000, sleep: waiting.sleep });

    expect(await firstSync).toMatchObject({ outcome: 'published', version: 1 });
    expect(waiting.sleeps).toEqual([1_000]);
    expect(second).toMatchObject({
      outcome: 'published',
      version: 2,
      startedAt: '2026-12-01T10:00:00.000Z',
      listStartedAt: '2026-12-01T10:00:01.000Z',
    });
    expect((await world.store(subject.clusterId).read())?.rules[0]?.mutationAdd.nodeSelector).toEqual({
      'example.com/pool': 'spot',
    });
    expect(await subject.leases(subject.clusterId).read()).toMatchObject({
      owner: 'cli:laptop:4242',
      releasedAt: '2026-12-01T10:00:01.000Z',
    });
  });

  it.each([
    { name: 'skips at once without a wait', waitMs: 0, pollMs: undefined, sleeps: [], outcome: 'skipped' },
    {
      name: 'polls every second until the wait is over',
      waitMs: 2_500,
      pollMs: undefined,
      sleeps: [1_000, 1_000, 500],
      outcome: 'skipped',
    },
    {
      name: 'wakes when the holder’s lease runs out, and takes it',
      waitMs: 200_000,
      pollMs: 60_000,
      sleeps: [60_000, 60_000, 1],
      outcome: 'published',
    },
  ])('waiting for a lease held by a crashed sync $name', async ({ waitMs, pollMs, sleeps, outcome }) => {
    const subject = cluster();
    await subject.leases(subject.clusterId).acquire('lambda:crashed');
    const waiting = fakeSleep(subject.clock);

    const report = await subject.sync({
      owner: 'cli:laptop:4242',
      waitMs,
      ...(pollMs === undefined ? {} : { pollMs }),
      sleep: waiting.sleep,
    });

    expect(waiting.sleeps).toEqual(sleeps);
    expect(report.outcome).toBe(outcome);
    if (outcome === 'skipped')
      expect(report).toMatchObject({
        leaseHolder: 'lambda:crashed',
        leaseExpiresAt: '2026-12-01T10:02:00.000Z',
        durationMs: waitMs,
      });
  });

  it('takes over the lease of a sync that crashed once it has expired', async () => {
    const subject = cluster();
    await subject.leases(subject.clusterId).acquire('lambda:crashed');
    subject.clock.advance(LEASE_MS + 1);

    const report = await subject.sync({ owner: 'lambda:req-2' });

    expect(report).toMatchObject({ outcome: 'published', version: 1 });
    expect(await subject.leases(subject.clusterId).read()).toMatchObject({ owner: 'lambda:req-2', acquisitions: 2 });
  });

  it('publishes nothing when another sync took the lease during a list that outlasted it', async () => {
    const subject = cluster();
    const slow = gated(world.source());
    const recorder = createRecorder();
    const slowSync = subject.sync({ owner: 'lambda:req-1', source: slow.source, recorder });
    await slow.listed;
    subject.clock.advance(LEASE_MS + 1);
    const taker = heldLease(await subject.leases(subject.clusterId).acquire('cli:laptop:4242'));

    slow.open();
    const report = await slowSync;

    expect(report).toMatchObject({ outcome: 'failed', failedStep: 'lease', statusPatched: 0 });
    expect(report.error).toBe(
      `the sync lease of cluster "${subject.clusterId}" in table "${world.tableName}" is no longer held by lambda:req-1: cli:laptop:4242 took it (until ${taker.expiresAt})`,
    );
    expect(await world.store(subject.clusterId).read()).toBeUndefined();
    expect(recorder.logs.map((entry) => [entry.level, entry.message])).toEqual([
      ['error', 'sync failed; nothing was published and the last snapshot stays current'],
      ['warn', 'the sync lease was taken over before this sync released it; the sync outlasted its lease'],
    ]);
    expect(await subject.leases(subject.clusterId).read()).toMatchObject({
      owner: 'cli:laptop:4242',
      expiresAt: taker.expiresAt,
    });
  });
});

describe('the lease of one sync', () => {
  it.each([
    { name: 'it published', fault: false, outcome: 'published' },
    { name: 'its list failed', fault: true, outcome: 'failed' },
  ])('is released when $name, so the next sync takes it at once', async ({ fault, outcome }) => {
    if (fault) world.server.fail({ kind: 'status', code: 500 }, { on: 'list' });
    const subject = cluster();

    const report = await subject.sync({ owner: 'lambda:req-1' });
    const next = await subject.leases(subject.clusterId).acquire('cli:laptop:4242');

    expect(report.outcome).toBe(outcome);
    expect(next.acquired).toBe(true);
  });

  it('is taken again by each sync of a window, one after the other', async () => {
    const subject = cluster();

    const reports = [await subject.sync({ owner: 'lambda:req-1' }), await subject.sync({ owner: 'lambda:req-1' })];

    expect(reports.map((report) => report.outcome)).toEqual(['published', 'unchanged']);
    expect(await subject.leases(subject.clusterId).read()).toMatchObject({ owner: 'lambda:req-1', acquisitions: 2 });
  });

  it('makes a sync fail at the lease step, publishing nothing, when the lease cannot be written', async () => {
    const subject = cluster();
    const missing = leasesOf({ client: world.client, tableName: 'podmutation-no-such-table' });
    const recorder = createRecorder();

    const report = await syncOnce({
      source: world.source(),
      store: world.store(subject.clusterId),
      records: world.records(subject.clusterId),
      lease: { leases: missing(subject.clusterId), owner: 'lambda:req-1' },
      binding: { store: world.bindings(subject.clusterId), owner: 'lambda:req-1' },
      clusterId: subject.clusterId,
      logger: recorder.logger,
      metrics: recorder.metrics,
    });

    expect(report).toMatchObject({ outcome: 'failed', failedStep: 'lease', resources: 0 });
    expect(report.error).toMatch(/DynamoDB UpdateItem on table "podmutation-no-such-table"/);
    expect(await world.store(subject.clusterId).read()).toBeUndefined();
    expect(recorder.emitted).toContainEqual({ name: 'SyncErrors', unit: 'Count', value: 1 });
  });
});
