/**
 * Writers whose clocks run ahead, over a real DynamoDB whose clock (its responses' Date header) the test sets: a list
 * start more than the bound ahead of the table's clock is refused, and one already written that far ahead (by a
 * version without the check) no longer orders publishes, so the next sync of a right clock replaces it. The sync
 * lease likewise: an expiry further ahead than a holder in step with the taker can set is taken over.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../lib/errors/index.ts';
import { type SnapshotStore } from '../../lib/store/index.ts';
import {
  clientWithTableClock,
  contentOf,
  freshClusterId,
  plantListStart as plantOn,
  ruleAdding,
  snapshotsOf,
  leasesOf,
  type PerCluster,
} from './support.ts';
import { useTestTable } from '../support/dynamo.ts';

const T = Date.parse('2026-12-01T10:00:00.000Z');
const SECOND = 1_000;
const DAY = 24 * 3600 * SECOND;

const table = useTestTable();
// The table's clock stands at T; DynamoDB's Date header says so on every response.
let atT: DynamoDBClient;
let noDateHeader: DynamoDBClient;

beforeAll(() => {
  atT = clientWithTableClock({ endpoint: table.endpoint }, () => T);
  noDateHeader = clientWithTableClock({ endpoint: table.endpoint }, undefined);
});

afterAll(() => {
  atT.destroy();
  noDateHeader.destroy();
});

/** A publisher whose own clock reads `now`. */
function storeAt(now: number, client: DynamoDBClient = atT): PerCluster<SnapshotStore> {
  return snapshotsOf({ client, tableName: table.tableName, clock: () => now });
}

const current = contentOf([ruleAdding('current')], '100');
const next = contentOf([ruleAdding('next')], '200');

/** A cluster whose snapshot a right clock published from a list started a second before T. */
const plantListStart = (clusterId: string, listStartedAt: number) =>
  plantOn(atT, table.tableName, clusterId, listStartedAt);

async function publishedCluster(): Promise<string> {
  const clusterId = freshClusterId();
  await storeAt(T)(clusterId).publish(current, { listStartedAt: T - SECOND });
  return clusterId;
}

describe('a publish from a clock ahead of the table’s', () => {
  it.each([
    { ahead: DAY, shown: '24.0 h' },
    { ahead: 121 * SECOND, shown: '121 s' },
  ])('is refused $shown ahead, naming the skew and what to do, and writes nothing', async ({ ahead, shown }) => {
    const clusterId = await publishedCluster();
    const before = await storeAt(T)(clusterId).readPointer();

    const refused = storeAt(T + ahead)(clusterId).publish(next, { listStartedAt: T + ahead });

    await expect(refused).rejects.toThrow(StoreError);
    await expect(refused).rejects.toThrow(
      `refused to publish for cluster "${clusterId}" in table "${table.tableName}": this list started at ${new Date(T + ahead).toISOString()}, ${shown} ahead of ` +
        "the table's clock (DynamoDB's Date header), 2026-12-01T10:00:00.000Z; a list start more than 120 s ahead would hold back every later sync, " +
        'so nothing was published. Set the clock of the machine that ran this sync right (turn on NTP) and sync again',
    );
    await expect(refused).rejects.toMatchObject({ context: { reason: 'clockAhead', aheadMs: ahead } });
    expect(await storeAt(T)(clusterId).readPointer()).toEqual(before);
  });

  it('is refused for unchanged content too, so the list start of the snapshot stays where it was', async () => {
    const clusterId = await publishedCluster();

    await expect(storeAt(T + DAY)(clusterId).publish(current, { listStartedAt: T + DAY })).rejects.toMatchObject({
      context: { reason: 'clockAhead' },
    });

    expect((await storeAt(T)(clusterId).readPointer())?.listStartedAt).toBe(T - SECOND);
  });

  it('publishes a list that started within the bound ahead: the skew the sync lease tolerates', async () => {
    const clusterId = await publishedCluster();

    const outcome = await storeAt(T + 119 * SECOND)(clusterId).publish(next, { listStartedAt: T + 119 * SECOND });

    expect(outcome).toMatchObject({ published: true, version: 2 });
  });

  it('is refused ahead of the publisher’s own clock when DynamoDB sends no Date header', async () => {
    const clusterId = await publishedCluster();

    const refused = storeAt(T, noDateHeader)(clusterId).publish(next, { listStartedAt: T + DAY });

    await expect(refused).rejects.toThrow("24.0 h ahead of this process's clock, 2026-12-01T10:00:00.000Z");
  });
});

describe('a pointer whose list start a clock ahead wrote', () => {
  it('is replaced by the next list of other content, which reports how far ahead it lay', async () => {
    const clusterId = await publishedCluster();
    await plantListStart(clusterId, T + DAY);

    const outcome = await storeAt(T)(clusterId).publish(next, { listStartedAt: T });

    expect(outcome).toMatchObject({
      published: true,
      version: 2,
      untrustedListStart: { listStartedAt: '2026-12-02T10:00:00.000Z', aheadMs: DAY },
    });
    expect(await storeAt(T)(clusterId).readPointer()).toMatchObject({ version: 2, listStartedAt: T });
  });

  it('is moved back to the list start of a list of the same content', async () => {
    const clusterId = await publishedCluster();
    await plantListStart(clusterId, T + DAY);

    const outcome = await storeAt(T)(clusterId).publish(current, { listStartedAt: T });

    expect(outcome).toMatchObject({ published: false, version: 1, untrustedListStart: { aheadMs: DAY } });
    expect((await storeAt(T)(clusterId).readPointer())?.listStartedAt).toBe(T);
  });

  it('orders publishes again once replaced: a list older than the replacement is superseded', async () => {
    const clusterId = await publishedCluster();
    await plantListStart(clusterId, T + DAY);
    await storeAt(T)(clusterId).publish(next, { listStartedAt: T });

    const older = storeAt(T)(clusterId).publish(current, { listStartedAt: T - 500 });

    await expect(older).rejects.toMatchObject({ context: { reason: 'superseded', version: 2 } });
  });

  it('still orders publishes while it lies within the bound, saying how far ahead it is and when syncs publish again', async () => {
    const clusterId = await publishedCluster();
    await plantListStart(clusterId, T + 90 * SECOND);

    const superseded = storeAt(T)(clusterId).publish(next, { listStartedAt: T });

    await expect(superseded).rejects.toMatchObject({ context: { reason: 'superseded' } });
    await expect(superseded).rejects.toThrow(
      "nothing was published; that list start lies 90 s ahead of the table's clock, so the clock of the sync that listed it runs ahead: " +
        "syncs publish again once the table's clock passes it, within 120 s",
    );
  });
});

describe('a sync lease a clock ahead took', () => {
  const LEASE_MS = 120 * SECOND;
  const leasesAt = (now: number) => leasesOf({ client: atT, tableName: table.tableName, clock: () => now });

  it('is taken over once its expiry lies beyond the lease’s length and the bound, naming its holder', async () => {
    const clusterId = freshClusterId();
    await leasesAt(T + DAY)(clusterId).acquire('cli:laptop:4242');

    const attempt = await leasesAt(T)(clusterId).acquire('lambda:req-1');

    expect(attempt).toMatchObject({
      acquired: true,
      lease: { owner: 'lambda:req-1', expiresAt: new Date(T + LEASE_MS).toISOString() },
      untrusted: { owner: 'cli:laptop:4242', expiresAt: new Date(T + DAY + LEASE_MS).toISOString(), aheadMs: DAY },
    });
  });

  it('is honoured while its holder’s clock is within the bound of the taker’s', async () => {
    const clusterId = freshClusterId();
    await leasesAt(T + 100 * SECOND)(clusterId).acquire('cli:laptop:4242');

    const attempt = await leasesAt(T)(clusterId).acquire('lambda:req-1');

    expect(attempt).toMatchObject({ acquired: false, holder: { owner: 'cli:laptop:4242' } });
  });
});
