/** The sync lease over a real DynamoDB: one holder at a time, expiry by the writer's clock, renew and release by the holder only. */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, MalformedInputError, StoreError } from '../../lib/errors/index.ts';
import { type HeldSyncLease, type SyncLeaseAcquisition, type SyncLeaseStore } from '../../lib/store/index.ts';
import { freshClusterId, leasesOf, type PerCluster } from './support.ts';
import { useTestTable } from '../support/dynamo.ts';

const START = Date.parse('2026-12-01T10:00:00.000Z');
const DURATION_MS = 120_000;

const table = useTestTable();

/** A clock standing at `at` until moved; epoch milliseconds. */
function clockAt(at = START): { (): number; set(to: number): void } {
  let now = at;
  return Object.assign(() => now, { set: (to: number) => void (now = to) });
}

/** Two writers of one table, each with its own clock: the Lambda and a workstation. */
function twoWriters() {
  const lambdaClock = clockAt();
  const cliClock = clockAt();
  return {
    lambdaClock,
    cliClock,
    lambda: leasesOf({ client: table.client, tableName: table.tableName, clock: lambdaClock }),
    cli: leasesOf({ client: table.client, tableName: table.tableName, clock: cliClock }),
  };
}

function held(attempt: SyncLeaseAcquisition): HeldSyncLease {
  if (!attempt.acquired) throw new Error(`test setup: the lease is held by ${attempt.holder.owner}`);
  return attempt.lease;
}

async function acquired(leases: PerCluster<SyncLeaseStore>, clusterId: string, owner: string): Promise<HeldSyncLease> {
  return held(await leases(clusterId).acquire(owner));
}

describe('taking the sync lease', () => {
  it('gives a free lease to the first sync, with its owner and an expiry one duration ahead', async () => {
    const { lambda } = twoWriters();
    const clusterId = freshClusterId();

    const attempt = await lambda(clusterId).acquire('lambda:req-1');

    expect(attempt).toEqual({
      acquired: true,
      lease: {
        clusterId,
        holderId: expect.stringMatching(/^[0-9a-f]{16}$/) as unknown,
        owner: 'lambda:req-1',
        expiresAt: '2026-12-01T10:02:00.000Z',
      },
    });
    expect(await lambda(clusterId).read()).toEqual({
      holderId: held(attempt).holderId,
      owner: 'lambda:req-1',
      acquiredAt: '2026-12-01T10:00:00.000Z',
      expiresAt: '2026-12-01T10:02:00.000Z',
      acquisitions: 1,
    });
  });

  it('refuses a second sync while the lease is held, naming the holder and when it expires', async () => {
    const { lambda, cli } = twoWriters();
    const clusterId = freshClusterId();
    const first = await acquired(lambda, clusterId, 'lambda:req-1');

    const second = await cli(clusterId).acquire('cli:laptop:4242');

    expect(second).toEqual({
      acquired: false,
      holder: expect.objectContaining({
        holderId: first.holderId,
        owner: 'lambda:req-1',
        expiresAt: '2026-12-01T10:02:00.000Z',
      }) as unknown,
    });
  });

  it.each([
    { when: 'just taken', afterMs: 0, acquired: false },
    { when: 'a millisecond before its expiry', afterMs: DURATION_MS - 1, acquired: false },
    { when: 'at its expiry', afterMs: DURATION_MS, acquired: false },
    { when: 'a millisecond after its expiry', afterMs: DURATION_MS + 1, acquired: true },
    { when: 'long expired (its holder crashed)', afterMs: 10 * DURATION_MS, acquired: true },
  ])('judges a lease $when by the taker’s clock: acquired $acquired', async ({ afterMs, acquired: expected }) => {
    const { lambda, cli, cliClock } = twoWriters();
    const clusterId = freshClusterId();
    await acquired(lambda, clusterId, 'lambda:req-1');
    cliClock.set(START + afterMs);

    const attempt = await cli(clusterId).acquire('cli:laptop:4242');

    expect(attempt.acquired).toBe(expected);
    expect((await cli(clusterId).read())?.owner).toBe(expected ? 'cli:laptop:4242' : 'lambda:req-1');
  });

  it('counts every acquisition and gives each its own holder id', async () => {
    const { lambda, cli } = twoWriters();
    const clusterId = freshClusterId();
    const first = await acquired(lambda, clusterId, 'lambda:req-1');
    await lambda(first.clusterId).release(first);

    const second = await acquired(cli, clusterId, 'cli:laptop:4242');

    expect(second.holderId).not.toBe(first.holderId);
    expect(await cli(clusterId).read()).toMatchObject({ owner: 'cli:laptop:4242', acquisitions: 2 });
    expect((await cli(clusterId).read())?.releasedAt).toBeUndefined();
  });

  it('keeps the leases of two clusters in one table apart', async () => {
    const { lambda, cli } = twoWriters();
    const [east, west] = [freshClusterId(), freshClusterId()];
    await acquired(lambda, east, 'lambda:req-1');

    const attempt = await cli(west).acquire('cli:laptop:4242');

    expect(attempt.acquired).toBe(true);
  });

  it('has no lease state for a cluster whose lease was never taken', async () => {
    expect(await twoWriters().lambda(freshClusterId()).read()).toBeUndefined();
  });
});

describe('releasing the sync lease', () => {
  it('frees the lease at once for a sync whose clock is behind the holder’s', async () => {
    const { lambda, cli, lambdaClock, cliClock } = twoWriters();
    const clusterId = freshClusterId();
    lambdaClock.set(START + 60_000);
    const lease = await acquired(lambda, clusterId, 'lambda:req-1');
    cliClock.set(START);

    expect(await lambda(lease.clusterId).release(lease)).toBe(true);

    expect(await cli(clusterId).read()).toMatchObject({
      owner: 'lambda:req-1',
      releasedAt: '2026-12-01T10:01:00.000Z',
      expiresAt: '1970-01-01T00:00:00.000Z',
    });
    expect((await cli(clusterId).acquire('cli:laptop:4242')).acquired).toBe(true);
  });

  it('releases only for the holder: an earlier holder whose lease was taken over changes nothing', async () => {
    const { lambda, cli, lambdaClock, cliClock } = twoWriters();
    const clusterId = freshClusterId();
    const stale = await acquired(lambda, clusterId, 'lambda:req-1');
    cliClock.set(START + DURATION_MS + 1);
    const current = await acquired(cli, clusterId, 'cli:laptop:4242');
    lambdaClock.set(START + DURATION_MS + 1);

    const released = await lambda(stale.clusterId).release(stale);

    expect(released).toBe(false);
    expect(await cli(clusterId).read()).toMatchObject({
      holderId: current.holderId,
      owner: 'cli:laptop:4242',
      expiresAt: current.expiresAt,
    });
    expect(await lambda(clusterId).acquire('lambda:req-2')).toMatchObject({
      acquired: false,
      holder: { owner: 'cli:laptop:4242' },
    });
  });

  it('answers false to a second release by the same holder', async () => {
    const { lambda } = twoWriters();
    const clusterId = freshClusterId();
    const lease = await acquired(lambda, clusterId, 'lambda:req-1');
    await lambda(lease.clusterId).release(lease);

    expect(await lambda(lease.clusterId).release(lease)).toBe(false);
  });
});

describe('renewing the sync lease', () => {
  it('extends the lease by one duration from the renewal', async () => {
    const { lambda, lambdaClock } = twoWriters();
    const clusterId = freshClusterId();
    const lease = await acquired(lambda, clusterId, 'lambda:req-1');
    lambdaClock.set(START + 30_000);

    const renewed = await lambda(lease.clusterId).renew(lease);

    expect(renewed).toEqual({ ...lease, expiresAt: '2026-12-01T10:02:30.000Z' });
    expect((await lambda(clusterId).read())?.expiresAt).toBe('2026-12-01T10:02:30.000Z');
  });

  it('renews a lease that expired while nobody took it: no other sync can have run', async () => {
    const { lambda, lambdaClock } = twoWriters();
    const clusterId = freshClusterId();
    const lease = await acquired(lambda, clusterId, 'lambda:req-1');
    lambdaClock.set(START + 2 * DURATION_MS);

    await expect(lambda(lease.clusterId).renew(lease)).resolves.toMatchObject({ holderId: lease.holderId });
  });

  it('refuses to renew for a holder whose lease was taken over, naming the new holder', async () => {
    const { lambda, cli, lambdaClock, cliClock } = twoWriters();
    const clusterId = freshClusterId();
    const stale = await acquired(lambda, clusterId, 'lambda:req-1');
    cliClock.set(START + DURATION_MS + 1);
    const current = await acquired(cli, clusterId, 'cli:laptop:4242');
    lambdaClock.set(START + DURATION_MS + 1);

    const renewal = lambda(stale.clusterId).renew(stale);

    await expect(renewal).rejects.toThrow(StoreError);
    await expect(renewal).rejects.toThrow(
      `the sync lease of cluster "${clusterId}" in table "${table.tableName}" is no longer held by lambda:req-1: cli:laptop:4242 took it (until ${current.expiresAt})`,
    );
    await expect(renewal).rejects.toMatchObject({ context: { reason: 'leaseLost', holder: 'cli:laptop:4242' } });
    expect((await cli(clusterId).read())?.expiresAt).toBe(current.expiresAt);
  });

  it('refuses to renew a released lease', async () => {
    const { lambda } = twoWriters();
    const clusterId = freshClusterId();
    const lease = await acquired(lambda, clusterId, 'lambda:req-1');
    await lambda(lease.clusterId).release(lease);

    await expect(lambda(lease.clusterId).renew(lease)).rejects.toThrow(
      /is no longer held by lambda:req-1: it was released/,
    );
  });
});

describe('sync lease arguments', () => {
  it.each([
    { owner: '', why: 'empty' },
    { owner: 'x'.repeat(201), why: 'longer than 200 characters' },
    { owner: 'cli:host\n:1', why: 'holding a control character' },
  ])('rejects an owner that is $why', async ({ owner }) => {
    await expect(twoWriters().lambda(freshClusterId()).acquire(owner)).rejects.toThrow(MalformedInputError);
  });

  it('rejects a cluster id that cannot be embedded in a key', async () => {
    await expect(twoWriters().lambda('bad id#1').acquire('lambda:req-1')).rejects.toThrow(MalformedInputError);
  });

  it.each([0, 9, 3601, 1.5])('rejects a lease duration of %s seconds', (durationSeconds) => {
    expect(() => leasesOf({ client: table.client, tableName: table.tableName, leases: { durationSeconds } })).toThrow(
      ConfigurationError,
    );
  });

  it('fails with a StoreError naming the table when the table does not exist', async () => {
    const leases = leasesOf({ client: table.client, tableName: 'podmutation-no-such-table' });

    await expect(leases(freshClusterId()).acquire('lambda:req-1')).rejects.toThrow(
      /DynamoDB UpdateItem on table "podmutation-no-such-table"/,
    );
  });
});
