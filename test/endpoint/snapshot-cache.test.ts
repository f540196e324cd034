import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RuleSnapshot } from '../../lib/api/index.ts';
import { ConfigurationError, StoreError } from '../../lib/errors/index.ts';

import { createDynamoClient, type SnapshotStore } from '../../lib/store/index.ts';
import {
  closedEndpoint,
  contentOf,
  countingClient,
  countsSince,
  freshClusterId,
  partSortKey,
  ruleAdding,
  startLink,
  type CommandCounts,
  type Link,
  snapshotsOf,
  type PerCluster,
} from '../store/support.ts';
import { useTestTable } from '../support/dynamo.ts';
import { type SnapshotCache, createSnapshotCache } from '../../lib/endpoint/snapshot-cache.ts';

const START = Date.parse('2026-12-01T10:00:00.000Z');
const REFRESH_SECONDS = 30;
const MAX_STALE_SECONDS = 300;

const table = useTestTable();
let publisher: PerCluster<SnapshotStore>;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  publisher = snapshotsOf({ client: table.client, tableName: table.tableName });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The served value in these tests: the rule names of the snapshot. */
function ruleNames(snapshot: RuleSnapshot): readonly string[] {
  return snapshot.rules.map((rule) => rule.name);
}

interface Harness {
  readonly cache: SnapshotCache<readonly string[]>;
  readonly clusterId: string;
  readonly counts: () => CommandCounts;
  readonly link: Link;
  readonly advance: (seconds: number) => void;
}

/** A cache reading through a cuttable link with one attempt per call, on a fake clock. */
async function harness(
  options: {
    compile?: (snapshot: RuleSnapshot) => readonly string[];
    clusterId?: string;
    deadlineMs?: number;
    requestTimeoutMs?: number;
    onRefreshFailure?: (error: StoreError) => void;
  } = {},
): Promise<Harness> {
  const link = await startLink(table.endpoint);
  const { client, counts } = countingClient({
    endpoint: link.endpoint,
    maxAttempts: 1,
    requestTimeoutMs: options.requestTimeoutMs ?? 1_000,
  });
  cleanups.push(
    () => client.destroy(),
    () => link.close(),
  );
  let now = START;
  const clusterId = options.clusterId ?? freshClusterId();
  const cache = createSnapshotCache({
    store: snapshotsOf({ client, tableName: table.tableName })(clusterId),
    clusterId,
    refreshSeconds: REFRESH_SECONDS,
    maxStaleSeconds: MAX_STALE_SECONDS,
    compile: options.compile ?? ruleNames,
    clock: () => now,
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    ...(options.onRefreshFailure === undefined ? {} : { onRefreshFailure: options.onRefreshFailure }),
  });
  return { cache, clusterId, counts, link, advance: (seconds) => void (now += seconds * 1000) };
}

describe('cold start', () => {
  it('rejects with a StoreError when the store is unreachable', async () => {
    const client = createDynamoClient({ endpoint: await closedEndpoint(), maxAttempts: 1, requestTimeoutMs: 500 });
    cleanups.push(() => client.destroy());
    const clusterId = freshClusterId();
    const cache = createSnapshotCache({
      store: snapshotsOf({ client, tableName: table.tableName })(clusterId),
      clusterId,
      refreshSeconds: REFRESH_SECONDS,
      maxStaleSeconds: MAX_STALE_SECONDS,
      compile: ruleNames,
    });

    await expect(cache.get()).rejects.toThrow(/DynamoDB GetItem on table ".*" for cluster ".*" failed/);
  });

  it('backs off before the first good read too: gets during the backoff reject with the last failure, without a read', async () => {
    const { cache, link, counts, advance } = await harness();
    link.cut();
    await expect(cache.get()).rejects.toThrow(StoreError);
    const before = counts();

    const failures = await Promise.all(Array.from({ length: 50 }, () => cache.get().catch((error: unknown) => error)));
    advance(0.49);
    failures.push(await cache.get().catch((error: unknown) => error));

    expect(countsSince(before, counts())).toEqual({});
    expect(new Set(failures).size).toBe(1);
    expect(failures[0]).toBeInstanceOf(StoreError);
  });

  it('rejects a cold get at its deadline while the store is silent', async () => {
    const { cache, clusterId, link } = await harness({ deadlineMs: 50, requestTimeoutMs: 20_000 });
    link.hang();

    await expect(cache.get()).rejects.toThrow(
      `reading the rule snapshot of cluster "${clusterId}" gave no answer within 50 ms`,
    );
    expect(link.held()).toBe(1);
  });

  it('rejects with a StoreError when nothing was published yet', async () => {
    const { cache, clusterId } = await harness();

    await expect(cache.get()).rejects.toThrow(`no rule snapshot has been published for cluster "${clusterId}"`);
  });

  it('serves the compiled snapshot with its provenance', async () => {
    const clusterId = freshClusterId();
    const outcome = await publisher(clusterId).publish(contentOf([ruleAdding('a'), ruleAdding('b')]));
    const { cache } = await harness({ clusterId });

    expect(await cache.get()).toEqual({
      value: ['a', 'b'],
      version: 1,
      contentHash: outcome.contentHash,
      syncedAt: '2026-12-01T10:00:00.000Z',
      ageSeconds: 0,
      stale: false,
    });
  });
});

describe('refreshing', () => {
  async function warmHarness(): Promise<Harness> {
    const clusterId = freshClusterId();
    await publisher(clusterId).publish(contentOf([ruleAdding('first')]));
    const warm = await harness({ clusterId });
    await warm.cache.get();
    return warm;
  }

  it('does no I/O while the value is younger than refreshSeconds', async () => {
    const { cache, counts, advance } = await warmHarness();
    const before = counts();
    advance(REFRESH_SECONDS - 1);

    const served = await cache.get();

    expect(countsSince(before, counts())).toEqual({});
    expect(served.ageSeconds).toBe(REFRESH_SECONDS - 1);
  });

  it('costs exactly one GetItem when the version has not changed', async () => {
    const { cache, counts, advance } = await warmHarness();
    const before = counts();
    advance(REFRESH_SECONDS);

    const served = await cache.get();

    expect(countsSince(before, counts())).toEqual({ GetItemCommand: 1 });
    expect([served.ageSeconds, served.stale]).toEqual([0, false]);
  });

  it('loads and compiles a newer version', async () => {
    const { cache, clusterId, advance } = await warmHarness();
    await publisher(clusterId).publish(contentOf([ruleAdding('second')]));
    advance(REFRESH_SECONDS);

    const served = await cache.get();

    expect([served.version, served.value]).toEqual([2, ['second']]);
  });

  it('shares one refresh among concurrent gets', async () => {
    const { cache, clusterId, counts, advance } = await warmHarness();
    await publisher(clusterId).publish(contentOf([ruleAdding('second')]));
    const before = counts();
    advance(REFRESH_SECONDS);

    const served = await Promise.all(Array.from({ length: 10 }, () => cache.get()));

    expect(countsSince(before, counts())).toEqual({ GetItemCommand: 1, QueryCommand: 1 });
    expect(served.map((snapshot) => snapshot.version)).toEqual(served.map(() => 2));
    expect(cache.stats()).toEqual({ refreshes: 2, reloads: 2, refreshFailures: 0, consecutiveFailures: 0 });
  });
});

describe('refresh failures', () => {
  async function warmHarness(compile?: (snapshot: RuleSnapshot) => readonly string[]): Promise<Harness> {
    const clusterId = freshClusterId();
    await publisher(clusterId).publish(contentOf([ruleAdding('good')]));
    const warm = await harness({ clusterId, ...(compile ? { compile } : {}) });
    await warm.cache.get();
    return warm;
  }

  it('serves the last good value marked stale when the store goes down', async () => {
    const { cache, link, advance } = await warmHarness();
    link.cut();
    advance(REFRESH_SECONDS);

    const served = await cache.get();

    expect([served.value, served.stale, served.ageSeconds]).toEqual([['good'], true, REFRESH_SECONDS]);
    expect(served.refreshError).toBeInstanceOf(StoreError);
    expect(cache.stats()).toMatchObject({ refreshFailures: 1, consecutiveFailures: 1 });
  });

  it('rejects once the value is older than maxStaleSeconds with the store still down', async () => {
    const { cache, link, advance } = await warmHarness();
    link.cut();
    advance(REFRESH_SECONDS);
    await cache.get();
    advance(MAX_STALE_SECONDS - REFRESH_SECONDS + 1);

    await expect(cache.get()).rejects.toThrow(
      /rules of cluster ".*" were last confirmed 301 s ago, above the maximum staleness of 300 s; last refresh failed: DynamoDB GetItem/,
    );
  });

  it('backs off a failed refresh: no read within half a second, one read once a second has passed', async () => {
    const { cache, link, counts, advance } = await warmHarness();
    link.cut();
    advance(REFRESH_SECONDS);
    await cache.get();
    const before = counts();

    advance(0.49);
    await cache.get();
    expect(countsSince(before, counts())).toEqual({});

    advance(0.51);
    await cache.get();
    expect(countsSince(before, counts())).toEqual({ GetItemCommand: 1 });
  });

  it('serves the last good value at its deadline while the store is silent, and reports the timeout', async () => {
    const clusterId = freshClusterId();
    await publisher(clusterId).publish(contentOf([ruleAdding('good')]));
    const failures: StoreError[] = [];
    // The client would wait 20 s: only the cache's deadline can end the get sooner.
    const { cache, link, advance } = await harness({
      clusterId,
      deadlineMs: 50,
      requestTimeoutMs: 20_000,
      onRefreshFailure: (error) => failures.push(error),
    });
    await cache.get();
    link.hang();
    advance(REFRESH_SECONDS);

    const served = await cache.get();

    expect([served.value, served.stale]).toEqual([['good'], true]);
    expect(link.held()).toBe(1);
    expect(failures.map((error) => error.message)).toEqual([
      `reading the rule snapshot of cluster "${clusterId}" gave no answer within 50 ms`,
    ]);
  });

  it('is fresh again after the store comes back', async () => {
    const { cache, link, advance } = await warmHarness();
    link.cut();
    advance(REFRESH_SECONDS);
    await cache.get();
    link.restore();
    advance(REFRESH_SECONDS);

    const served = await cache.get();

    expect([served.stale, served.ageSeconds, served.refreshError]).toEqual([false, 0, undefined]);
  });

  it('keeps the last good value when compiling a newer snapshot throws', async () => {
    const { cache, clusterId, advance } = await warmHarness((snapshot) => {
      if (snapshot.version > 1) throw new Error('rule "bad" does not compile');
      return ruleNames(snapshot);
    });
    await publisher(clusterId).publish(contentOf([ruleAdding('bad')]));
    advance(REFRESH_SECONDS);

    const served = await cache.get();

    expect([served.value, served.version, served.stale]).toEqual([['good'], 1, true]);
    expect(served.refreshError?.message).toMatch(
      /compiling snapshot version 2 of cluster ".*" failed: rule "bad" does not compile/,
    );
  });

  it('keeps the last good value when a newer snapshot is corrupted', async () => {
    const { cache, clusterId, advance } = await warmHarness();
    await publisher(clusterId).publish(contentOf([ruleAdding('newer')]));
    const pointer = await publisher(clusterId).readPointer();
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: `cluster#${clusterId}` }, sk: { S: partSortKey(2, pointer!.publishId, 0) } },
        UpdateExpression: 'SET body = :body',
        ExpressionAttributeValues: { ':body': { B: new Uint8Array([1, 2, 3]) } },
      }),
    );
    advance(REFRESH_SECONDS);

    const served = await cache.get();

    expect([served.value, served.version, served.stale]).toEqual([['good'], 1, true]);
    expect(served.refreshError?.message).toMatch(/snapshot version 2 .* is unusable: part 0 of 1 is corrupted/);
  });
});

describe('cache options', () => {
  it('rejects a maximum staleness shorter than the refresh interval', () => {
    expect(() =>
      createSnapshotCache({
        store: publisher('default'),
        clusterId: 'default',
        refreshSeconds: 30,
        maxStaleSeconds: 10,
        compile: ruleNames,
      }),
    ).toThrow(ConfigurationError);
  });
});
