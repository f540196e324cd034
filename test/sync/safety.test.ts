/**
 * Every way a list can fail must leave the last good snapshot exactly as it was: same pointer, same content,
 * and the sync item shows the failure while the last success stays where it was.
 */
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { RuleSnapshot } from '../../lib/api/index.ts';
import type { PodMutationSource } from '../../lib/cluster/index.ts';

import type { FakeApiServer } from '../cluster/fake-api-server.ts';
import { manualClock, syncSubject, useSyncWorld, validSpec, type SyncSubject } from './support.ts';
import { snapshotsOf, recordsOf } from '../store/support.ts';
import { type SnapshotPointer } from '../../lib/store/snapshot-parts.ts';
import { type SyncStatus } from '../../lib/store/sync-records.ts';

const world = useSyncWorld();

/** Five rules, so a list with pages of two spans three requests. */
function putGoodRules(server: FakeApiServer): void {
  for (const name of ['rule-a', 'rule-b', 'rule-c', 'rule-d', 'rule-e'])
    server.put({ metadata: { name }, spec: validSpec(name) });
}

/** What the store holds for a cluster: the pointer, the snapshot it names and the sync item. */
interface StoredState {
  readonly pointer: SnapshotPointer | undefined;
  readonly snapshot: RuleSnapshot | undefined;
  readonly sync: SyncStatus | undefined;
}

async function storedState(clusterId: string): Promise<StoredState> {
  return {
    pointer: await world.store(clusterId).readPointer(),
    snapshot: await world.store(clusterId).read(),
    sync: await world.records(clusterId).readSyncStatus(),
  };
}

/** A cluster with a good snapshot of five rules published at 10:00; the clock then stands at 10:01. */
async function withGoodSnapshot(): Promise<{
  subject: SyncSubject;
  good: StoredState;
  clock: ReturnType<typeof manualClock>;
}> {
  putGoodRules(world.server);
  const clock = manualClock(Date.parse('2026-12-01T10:00:00.000Z'));
  const subject = syncSubject(world, { clock });
  const first = await subject.sync();
  expect(first.outcome).toBe('published');
  const good = await storedState(subject.clusterId);
  expect(good.snapshot?.rules).toHaveLength(5);
  clock.advance(60_000);
  return { subject, good, clock };
}

async function closedPortUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `https://127.0.0.1:${port}`;
}

interface FaultCase {
  readonly name: string;
  /** Breaks the cluster or returns a broken source; runs after the good snapshot is published. */
  readonly arrange: (server: FakeApiServer) => Promise<PodMutationSource | undefined> | PodMutationSource | undefined;
  readonly error: RegExp;
  readonly reason: string;
}

const FAULTS: readonly FaultCase[] = [
  {
    name: 'the connection is reset (network error)',
    arrange: (server) => void server.fail({ kind: 'reset' }, { on: 'list' }),
    error: /could not reach https:\/\/127\.0\.0\.1:\d+/,
    reason: 'network',
  },
  {
    name: 'the API server is down (connection refused)',
    arrange: async () => world.source({}, { server: await closedPortUrl() }),
    error: /could not reach https:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED/,
    reason: 'network',
  },
  {
    name: 'the API server never answers (timeout)',
    arrange: (server) => void server.fail({ kind: 'hang' }, { on: 'list' }),
    error: /no complete answer from https:\/\/127\.0\.0\.1:\d+ within 400 ms/,
    reason: 'timeout',
  },
  {
    name: 'the token is rejected (401)',
    arrange: () => world.source({}, { token: 'not-the-token' }),
    error: /401 Unauthorized/,
    reason: 'unauthorized',
  },
  {
    name: 'the identity may not list (403)',
    arrange: (server) => void server.fail({ kind: 'status', code: 403, reason: 'Forbidden' }, { on: 'list' }),
    error: /403 Forbidden/,
    reason: 'forbidden',
  },
  {
    name: 'the CRD is missing (404)',
    arrange: (server) => void server.fail({ kind: 'status', code: 404, reason: 'NotFound' }, { on: 'list' }),
    error: /404 Not Found: the PodMutation CRD \(podmutations\.agent\.cloudpilot\.ai\) is not installed/,
    reason: 'notFound',
  },
  {
    name: 'the API server fails (500)',
    arrange: (server) => void server.fail({ kind: 'status', code: 500 }, { on: 'list' }),
    error: /500 Internal Server Error/,
    reason: 'server',
  },
  {
    name: 'the continue token keeps expiring beyond the restarts (410)',
    // maxListRestarts is 1: the first list and its one restart both meet an expired token.
    arrange: (server) => void server.expireContinueTokens(2),
    error: /continue token expired 2 times in a row/,
    reason: 'gone',
  },
  {
    name: 'the answer is not JSON (malformed response)',
    arrange: (server) => void server.fail({ kind: 'raw', body: '<html>proxy error</html>' }, { on: 'list' }),
    error: /could not be decoded as JSON/,
    reason: 'malformed',
  },
  {
    name: 'the answer is a list without items (malformed response)',
    arrange: (server) =>
      void server.fail(
        { kind: 'raw', body: JSON.stringify({ kind: 'PodMutationList', metadata: { resourceVersion: '9' } }) },
        { on: 'list' },
      ),
    error: /has an items field that is not an array/,
    reason: 'malformed',
  },
  {
    name: 'a later page fails after the first succeeded',
    arrange: (server) => void server.fail({ kind: 'status', code: 500 }, { on: 'continue' }),
    error: /500 Internal Server Error/,
    reason: 'server',
  },
  {
    name: 'a later page never answers',
    arrange: (server) => void server.fail({ kind: 'hang' }, { on: 'continue' }),
    error: /within 400 ms/,
    reason: 'timeout',
  },
];

describe('a sync whose list fails keeps the last good snapshot', () => {
  it.each(FAULTS)('when $name', async ({ arrange, error, reason }) => {
    const { subject, good } = await withGoodSnapshot();
    const brokenSource = await arrange(world.server);

    const report = await subject.sync(brokenSource === undefined ? {} : { source: brokenSource });

    expect(report).toMatchObject({
      outcome: 'failed',
      failedStep: 'list',
      error: expect.stringMatching(error) as unknown,
    });
    const after = await storedState(subject.clusterId);
    expect(after.pointer).toEqual(good.pointer);
    expect(after.snapshot).toEqual(good.snapshot);
    expect(after.sync).toEqual({
      lastAttemptAt: '2026-12-01T10:01:00.000Z',
      lastStatus: 'failed',
      lastSuccessAt: good.sync?.lastSuccessAt,
      lastVersion: good.sync?.lastVersion,
      lastError: expect.stringMatching(error) as unknown,
    });
    expect(subject.recorder.logs.at(-1)).toMatchObject({ level: 'error', fields: { errorReason: reason } });
  });
});

describe('a sync that cannot publish', () => {
  it('fails at validation and publishes nothing when the list names one resource twice', async () => {
    const { subject, good } = await withGoodSnapshot();
    const item = world.server.get('rule-a');
    const duplicated = {
      kind: 'PodMutationList',
      metadata: { resourceVersion: '99' },
      items: [item, world.server.get('rule-b'), item],
    };
    world.server.fail({ kind: 'raw', body: JSON.stringify(duplicated) }, { on: 'list' });

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'failed', failedStep: 'validate', resources: 3 });
    expect(report.error).toContain('PodMutation "rule-a" is defined more than once');
    expect(await storedState(subject.clusterId)).toMatchObject({
      pointer: good.pointer,
      snapshot: good.snapshot,
      sync: { lastStatus: 'failed', lastSuccessAt: good.sync?.lastSuccessAt },
    });
  });

  it('writes no status when the list fails', async () => {
    const { subject } = await withGoodSnapshot();
    world.server.put({ metadata: { name: 'rule-new' }, spec: validSpec() });
    world.server.fail({ kind: 'status', code: 500 }, { on: 'continue' });
    const patchesBefore = world.server.statusPatches.length;

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'failed', statusPatched: 0 });
    expect(world.server.statusPatches.length).toBe(patchesBefore);
  });

  it('reports a failed publish and logs that recording the attempt failed too', async () => {
    putGoodRules(world.server);
    const missingTable = { client: world.client, tableName: 'podmutation-no-such-table' };
    const subject = syncSubject(world, (clusterId) => ({
      store: snapshotsOf(missingTable)(clusterId),
      records: recordsOf(missingTable)(clusterId),
    }));

    const report = await subject.sync();

    expect(report).toMatchObject({
      outcome: 'failed',
      failedStep: 'publish',
      resources: 5,
      valid: 5,
      statusPatched: 0,
    });
    expect(report.error).toMatch(/DynamoDB .* on table "podmutation-no-such-table"/);
    expect(subject.recorder.logs.map((entry) => [entry.level, entry.message])).toEqual([
      ['error', 'recording the sync attempt failed; the sync item (last success time) is out of date'],
      ['error', 'sync failed; nothing was published and the last snapshot stays current'],
    ]);
  });

  it('counts a failed sync in SyncErrors', async () => {
    const { subject } = await withGoodSnapshot();
    world.server.fail({ kind: 'status', code: 403 }, { on: 'list' });
    subject.recorder.emitted.length = 0;

    await subject.sync();

    expect(subject.recorder.emitted).toEqual(
      expect.arrayContaining([
        { name: 'SyncErrors', unit: 'Count', value: 1 },
        { name: 'SnapshotPublished', unit: 'Count', value: 0 },
      ]),
    );
    expect(subject.recorder.emitted.map((metric) => metric.name)).not.toContain('RulesSynced');
  });

  it('publishes again and clears the error once the cluster recovers', async () => {
    const { subject, good } = await withGoodSnapshot();
    world.server.fail({ kind: 'status', code: 500 }, { on: 'list', times: 1 });
    await subject.sync();
    world.server.put({ metadata: { name: 'rule-f' }, spec: validSpec() });

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', version: (good.pointer?.version ?? 0) + 1 });
    const sync = await world.records(subject.clusterId).readSyncStatus();
    expect(sync).toMatchObject({ lastStatus: 'published', lastSuccessAt: '2026-12-01T10:01:00.000Z' });
    expect(sync?.lastError).toBeUndefined();
  });
});
