import { describe, expect, it } from 'vitest';
import { createSyncHandler, type SyncReport } from '../../lib/sync/index.ts';
import { manualClock, type ManualClock } from './support.ts';
import { runSyncWindow } from '../../lib/sync/window.ts';

const START = Date.parse('2026-12-01T10:00:00.000Z');

/** A simulated sync: records when it started (ms since START) and takes `durations[n]` ms of the manual clock. */
function simulatedSyncs(clock: ManualClock, durations: readonly number[] | number) {
  const starts: number[] = [];
  const syncOnce = (): Promise<SyncReport> => {
    const duration = typeof durations === 'number' ? durations : (durations[starts.length] ?? 0);
    starts.push(clock() - START);
    clock.advance(duration);
    return Promise.resolve({
      outcome: 'unchanged',
      startedAt: new Date(clock() - duration).toISOString(),
      listStartedAt: new Date(clock() - duration).toISOString(),
      resourceVersion: '1',
      resources: 0,
      valid: 0,
      invalid: 0,
      version: 1,
      durationMs: duration,
      statusPatched: 0,
      statusFailed: 0,
      statusSkipped: 0,
    });
  };
  const sleeps: number[] = [];
  const sleep = (milliseconds: number): Promise<void> => {
    sleeps.push(milliseconds);
    clock.advance(milliseconds);
    return Promise.resolve();
  };
  return { syncOnce, sleep, starts, sleeps };
}

describe('the sync window of one invocation', () => {
  it('syncs at 0 s and 30 s in a 60 s window with a 30 s interval', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 1_000);

    const reports = await runSyncWindow({ ...syncs, clock, intervalSeconds: 30, deadline: START + 60_000 });

    expect(syncs.starts).toEqual([0, 30_000]);
    expect(reports).toHaveLength(2);
  });

  it('does not start a third sync at 60 s even when syncs take no time', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 0);

    await runSyncWindow({ ...syncs, clock, intervalSeconds: 30, deadline: START + 60_000 });

    expect(syncs.starts).toEqual([0, 30_000]);
  });

  it('measures the wait from the start of the previous sync, so a slow sync shortens it', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, [12_000, 1_000]);

    await runSyncWindow({ ...syncs, clock, intervalSeconds: 30, deadline: START + 60_000 });

    expect(syncs.sleeps).toEqual([18_000]);
    expect(syncs.starts).toEqual([0, 30_000]);
  });

  it('starts the next sync at once when a sync took longer than the interval', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, [12_000, 1_000, 1_000]);

    await runSyncWindow({ ...syncs, clock, intervalSeconds: 10, deadline: START + 60_000 });

    expect(syncs.starts.slice(0, 3)).toEqual([0, 12_000, 22_000]);
  });

  it('starts no sync that could not finish before the deadline, judged by the slowest sync so far', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 20_000);

    await runSyncWindow({ ...syncs, clock, intervalSeconds: 30, deadline: START + 45_000 });

    expect(syncs.starts).toEqual([0]);
  });

  it('runs twelve syncs in a minute with a 5 s interval', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 500);

    await runSyncWindow({ ...syncs, clock, intervalSeconds: 5, deadline: START + 60_000 });

    expect(syncs.starts).toEqual(Array.from({ length: 12 }, (_, index) => index * 5_000));
  });

  it('always runs the first sync, even past the deadline', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 1_000);

    await runSyncWindow({ ...syncs, clock, intervalSeconds: 30, deadline: START - 1 });

    expect(syncs.starts).toEqual([0]);
  });
});

describe('the sync handler', () => {
  const scheduledEvent = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };

  it('syncs once and returns the report for a manual invocation', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 1_000);
    const handler = createSyncHandler({ ...syncs, clock, intervalSeconds: 30 });

    const result = await handler({}, { getRemainingTimeInMillis: () => 70_000 });

    expect(syncs.starts).toEqual([0]);
    expect(result).toMatchObject({ outcome: 'unchanged', durationMs: 1_000 });
  });

  it('runs a one-minute window for a scheduled event with a 70 s timeout', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 1_000);
    const handler = createSyncHandler({ ...syncs, clock, intervalSeconds: 30 });

    const result = await handler(scheduledEvent, { getRemainingTimeInMillis: () => 70_000 });

    expect(syncs.starts).toEqual([0, 30_000]);
    expect(result).toHaveLength(2);
  });

  it('hands the invocation context to every sync of a window, so each names its lease after the request', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 1_000);
    const requestIds: (string | undefined)[] = [];
    const handler = createSyncHandler({
      ...syncs,
      syncOnce: (context) => {
        requestIds.push(context.awsRequestId);
        return syncs.syncOnce();
      },
      clock,
      intervalSeconds: 30,
    });

    await handler(scheduledEvent, { getRemainingTimeInMillis: () => 70_000, awsRequestId: 'req-1' });

    expect(requestIds).toEqual(['req-1', 'req-1']);
  });

  it('shortens the window to the remaining time less the safety margin', async () => {
    const clock = manualClock(START);
    const syncs = simulatedSyncs(clock, 1_000);
    const handler = createSyncHandler({ ...syncs, clock, intervalSeconds: 30, safetyMarginMs: 5_000 });

    await handler(scheduledEvent, { getRemainingTimeInMillis: () => 35_000 });

    expect(syncs.starts).toEqual([0]);
  });
});
