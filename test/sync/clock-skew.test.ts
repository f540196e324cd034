/**
 * A clock ahead must not freeze publishing: `podmutation sync --once` from a workstation a day ahead is refused,
 * naming the skew; a snapshot or lease such a workstation wrote before the check is replaced by the Lambda's next
 * sync; and a run of skipped syncs that fills RulesStaleAlarm's window counts as no success. The real sync and store
 * over dynalite, with every clock given: the table's (its Date header), the Lambda's and the workstation's.
 */
import { readFileSync } from 'node:fs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type SyncLeaseStore } from '../../lib/store/index.ts';
import { syncOnce, type SyncReport } from '../../lib/sync/index.ts';
import { evaluateAlarm, type Resource } from '../deploy/template.ts';
import {
  clientWithTableClock,
  freshClusterId,
  plantListStart,
  snapshotsOf,
  recordsOf,
  leasesOf,
  type PerCluster,
} from '../store/support.ts';
import { createRecorder, manualClock, useSyncWorld, validSpec, type ManualClock, type Recorder } from './support.ts';

const world = useSyncWorld();

const T = Date.parse('2026-12-01T10:00:00.000Z');
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
// The Lambda's cadence: a sync at once and another 30 s later, every minute.
const SYNC_INTERVAL_MS = 30_000;

const staleAlarm = (
  parse(readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8'), { logLevel: 'error' }) as {
    resources: { Resources: Record<string, Resource> };
  }
).resources.Resources['RulesStaleAlarm']!;
const ALARM_WINDOW_MS =
  Number(
    (staleAlarm.Properties['Metrics'] as { MetricStat?: { Period: number } }[]).find((query) => query.MetricStat)!
      .MetricStat!.Period,
  ) * 1000;

/** One cluster of the fake API server and the table, whose clock is `table`; syncs bring clocks of their own. */
interface Cluster {
  readonly clusterId: string;
  /** The table's clock: DynamoDB's Date header reads it. */
  readonly table: ManualClock;
  /** A sync as the Lambda runs it (owner lambda:…, no wait), by a clock `offsetMs` from the table's. */
  sync(options?: { offsetMs?: number; owner?: string; recorder?: Recorder }): Promise<SyncReport>;
  /** The cluster's sync leases, by a clock `offsetMs` from the table's. */
  leases(offsetMs: number): PerCluster<SyncLeaseStore>;
  /** The pointer's list start set, as a version without the check wrote it from a clock running ahead. */
  plantListStart(listStartedAt: number): Promise<void>;
}

const clients: DynamoDBClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.destroy();
});

function cluster(): Cluster {
  const clusterId = freshClusterId();
  const table = manualClock(T);
  const client = clientWithTableClock({ endpoint: world.dynamo.endpoint }, table);
  clients.push(client);
  const source = world.source();
  const leases = (offsetMs: number) =>
    leasesOf({ client, tableName: world.tableName, clock: () => table() + offsetMs });
  return {
    clusterId,
    table,
    leases,
    sync({ offsetMs = 0, owner = 'lambda:req-1', recorder = createRecorder() } = {}) {
      const clock = () => table() + offsetMs;
      const { tableName } = world;
      return syncOnce({
        source,
        store: snapshotsOf({ client, tableName, clock })(clusterId),
        records: recordsOf({ client, tableName })(clusterId),
        lease: { leases: leases(offsetMs)(clusterId), owner },
        binding: { store: world.bindings(clusterId), owner },
        clusterId,
        logger: recorder.logger,
        metrics: recorder.metrics,
        clock,
      });
    },
    plantListStart: (listStartedAt) => plantListStart(client, world.tableName, clusterId, listStartedAt),
  };
}

describe('`podmutation sync --once` from a workstation a day ahead', () => {
  it('is refused, naming the skew and what to do, publishes nothing and leaves the Lambda’s later syncs publishing', async () => {
    world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('general') });
    const subject = cluster();
    await subject.sync();
    world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('spot') });

    const workstation = await subject.sync({ offsetMs: DAY, owner: 'cli:laptop:4242' });
    const versionAfterIt = (await world.store(subject.clusterId).readPointer())?.version;
    const later: string[] = [];
    // The Lambda's syncs 1, 60 and 600 minutes later.
    for (const minutes of [1, 59, 540]) {
      subject.table.advance(minutes * MINUTE);
      later.push((await subject.sync()).outcome);
    }

    expect(workstation).toMatchObject({ outcome: 'failed', failedStep: 'publish' });
    expect(workstation.error).toContain(
      "this list started at 2026-12-02T10:00:00.000Z, 24.0 h ahead of the table's clock (DynamoDB's Date header), 2026-12-01T10:00:00.000Z",
    );
    expect(workstation.error).toContain(
      'Set the clock of the machine that ran this sync right (turn on NTP) and sync again',
    );
    expect(versionAfterIt).toBe(1);
    expect(later).toEqual(['published', 'unchanged', 'unchanged']);
  });
});

describe('a snapshot a workstation a day ahead published before the check', () => {
  it.each([1, 60, 600])(
    'is replaced by the Lambda’s sync %i minutes later, which logs how far ahead it lay',
    async (minutes) => {
      world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('general') });
      const subject = cluster();
      await subject.sync();
      await subject.plantListStart(T + DAY);
      world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('spot') });
      subject.table.advance(minutes * MINUTE);
      const recorder = createRecorder();

      const report = await subject.sync({ recorder });

      expect(report).toMatchObject({ outcome: 'published', version: 2 });
      expect(await world.store(subject.clusterId).readPointer()).toMatchObject({
        version: 2,
        listStartedAt: T + minutes * MINUTE,
      });
      expect(recorder.logs).toContainEqual({
        level: 'warn',
        message:
          "replaced a snapshot whose list start lay too far ahead of the table's clock; the clock of the sync that published it runs ahead",
        fields: expect.objectContaining({
          untrustedListStartedAt: '2026-12-02T10:00:00.000Z',
          aheadMs: DAY - minutes * MINUTE,
        }) as unknown,
      });
    },
  );
});

describe('a sync lease a workstation a day ahead left held (killed mid-sync)', () => {
  it('is taken over by the Lambda’s next sync, which publishes and logs whose lease it took', async () => {
    const subject = cluster();
    await subject.leases(DAY)(subject.clusterId).acquire('cli:laptop:4242');
    subject.table.advance(MINUTE);
    const recorder = createRecorder();

    const report = await subject.sync({ recorder });

    expect(report.outcome).toBe('published');
    expect(recorder.logs).toContainEqual({
      level: 'warn',
      message:
        'took over a sync lease whose expiry lay too far ahead to honour; the clock of the sync that took it runs ahead',
      fields: expect.objectContaining({
        leaseHolder: 'cli:laptop:4242',
        leaseExpiresAt: '2026-12-02T10:02:00.000Z',
      }) as unknown,
    });
  });
});

describe('RulesStaleAlarm over the metrics of skipped syncs', () => {
  /** The Lambda's syncs every 30 s through one alarm window, by a clock `offsetMs` from the table's; what each emitted. */
  async function windowOfSyncs(
    subject: Cluster,
    offsetMs: number,
  ): Promise<{ outcomes: string[]; emitted: Recorder['emitted'] }> {
    const recorder = createRecorder();
    const outcomes: string[] = [];
    for (let elapsed = 0; elapsed < ALARM_WINDOW_MS; elapsed += SYNC_INTERVAL_MS) {
      outcomes.push((await subject.sync({ offsetMs, recorder })).outcome);
      subject.table.advance(SYNC_INTERVAL_MS);
    }
    return { outcomes, emitted: recorder.emitted };
  }

  it('counts skips that fill its window as no successful sync, so it fires', async () => {
    world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('general') });
    const subject = cluster();
    // A right clock publishes; then a rule changes, which a Lambda whose clock is 10 minutes behind never publishes.
    await subject.sync({ owner: 'cli:laptop:4242' });
    world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('spot') });

    const { outcomes, emitted } = await windowOfSyncs(subject, -10 * MINUTE);

    expect(new Set(outcomes)).toEqual(new Set(['skipped']));
    expect(evaluateAlarm(staleAlarm, emitted)).toEqual({ value: 0, breaching: true });
  });

  it('does not fire for skips that end within its window: a snapshot listed 90 s ahead', async () => {
    world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('general') });
    const subject = cluster();
    await subject.sync({ offsetMs: 90_000, owner: 'cli:laptop:4242' });
    world.server.put({ metadata: { name: 'pool-rule' }, spec: validSpec('spot') });

    const { outcomes, emitted } = await windowOfSyncs(subject, 0);

    expect(outcomes.slice(0, 4)).toEqual(['skipped', 'skipped', 'skipped', 'published']);
    expect(evaluateAlarm(staleAlarm, emitted)).toEqual({ value: outcomes.length - 3, breaching: false });
  });
});
