import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import {
  DeleteItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MalformedInputError, StoreError } from '../../lib/errors/index.ts';
import { serializeContent } from '../../lib/store/codec.ts';
import { createSnapshotTable, type SnapshotStore, type SyncRecordStore } from '../../lib/store/index.ts';
import {
  contentOf,
  countingClient,
  countsSince,
  freshClusterId,
  itemBytes,
  largeContent,
  partSortKey,
  ruleAdding,
  snapshotsOf,
  recordsOf,
  type PerCluster,
} from './support.ts';
import { useTestTable } from '../support/dynamo.ts';
import { EXPIRES_AT_ATTRIBUTE } from '../../lib/store/layout.ts';

type Item = Record<string, AttributeValue>;

const NOW = Date.parse('2026-12-01T10:00:00.000Z');

const table = useTestTable();

function storeWith(options: { partBytes?: number; retentionSeconds?: number } = {}): PerCluster<SnapshotStore> {
  return snapshotsOf({ client: table.client, tableName: table.tableName, clock: () => NOW, snapshots: options });
}

function recordsWith(): PerCluster<SyncRecordStore> {
  return recordsOf({ client: table.client, tableName: table.tableName });
}

async function itemsUnder(clusterId: string, prefix: string): Promise<Item[]> {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await table.client.send(
      new QueryCommand({
        TableName: table.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: `cluster#${clusterId}` }, ':prefix': { S: prefix } },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/** The same JSON value with the keys of every object inserted in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, field]) => [key, reverseKeys(field)]),
  );
}

async function currentPointer(store: PerCluster<SnapshotStore>, clusterId: string) {
  const pointer = await store(clusterId).readPointer();
  if (pointer === undefined) throw new Error('test setup: nothing published');
  return pointer;
}

describe('publishing and reading snapshots', () => {
  it('reads back the published content as version 1 with its content hash', async () => {
    const store = storeWith();
    const clusterId = freshClusterId();
    const content = contentOf([ruleAdding('spot-first', { team: 'a' })]);

    const outcome = await store(clusterId).publish(content);

    expect(outcome).toEqual({
      published: true,
      version: 1,
      contentHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown,
      supersededParts: 0,
    });
    expect(await store(clusterId).read()).toEqual({ ...content, version: 1, contentHash: outcome.contentHash });
  });

  it('assigns version 2 to a second, different publish', async () => {
    const store = storeWith();
    const clusterId = freshClusterId();
    await store(clusterId).publish(contentOf([ruleAdding('a')]));

    const outcome = await store(clusterId).publish(contentOf([ruleAdding('a'), ruleAdding('b')]));

    expect(outcome.version).toBe(2);
    expect((await store(clusterId).read())?.rules.map((rule) => rule.name)).toEqual(['a', 'b']);
  });

  it('reads nothing for a cluster that never published', async () => {
    expect(await storeWith()(freshClusterId()).read()).toBeUndefined();
  });

  it('writes nothing when the same content is published again with its keys in another order', async () => {
    const { client, counts } = countingClient({ endpoint: table.endpoint });
    const store = snapshotsOf({ client, tableName: table.tableName });
    const clusterId = freshClusterId();
    const first = await store(clusterId).publish(contentOf([ruleAdding('a', { x: '1', y: '2' })]));
    const reordered = {
      syncedAt: '2026-12-01T10:00:30.000Z',
      resourceVersion: '101',
      invalid: [],
      rules: [
        {
          mutationAdd: { nodeSelector: { 'example.com/pool': 'general' }, annotations: { y: '2', x: '1' } },
          mutationRemove: {},
          workloadSelector: { namespaces: ['apps'] },
          priority: 0,
          enforcement: 'enforce' as const,
          enable: true,
          name: 'a',
        },
      ],
    };
    const before = counts();

    const second = await store(clusterId).publish(reordered);

    expect(second).toEqual({ published: false, version: 1, contentHash: first.contentHash, supersededParts: 0 });
    expect(countsSince(before, counts())).toEqual({ GetItemCommand: 1 });
    client.destroy();
  });

  it('treats any content with its object keys reordered as unchanged', async () => {
    const store = storeWith();
    const annotations = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 20 }), {
      maxKeys: 6,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(annotations, { minLength: 1, maxLength: 4 }), async (annotationSets) => {
        const clusterId = freshClusterId();
        const content = contentOf(annotationSets.map((set, index) => ruleAdding(`rule-${index}`, set)));
        const first = await store(clusterId).publish(content);

        const second = await store(clusterId).publish(reverseKeys(content) as typeof content);

        expect([second.published, second.contentHash]).toEqual([false, first.contentHash]);
      }),
      { numRuns: 25 },
    );
  });

  it('keeps the snapshots of two clusters in one table apart', async () => {
    const store = storeWith();
    const [east, west] = [freshClusterId(), freshClusterId()];
    await store(east).publish(contentOf([ruleAdding('east-rule')]));
    await store(east).publish(contentOf([ruleAdding('east-rule-2')]));
    await store(west).publish(contentOf([ruleAdding('west-rule')]));

    const [eastSnapshot, westSnapshot] = await Promise.all([store(east).read(), store(west).read()]);

    expect([eastSnapshot?.version, eastSnapshot?.rules[0]?.name]).toEqual([2, 'east-rule-2']);
    expect([westSnapshot?.version, westSnapshot?.rules[0]?.name]).toEqual([1, 'west-rule']);
  });

  it('round-trips a snapshot over 1 MB through several part items each under 400 KB', async () => {
    const store = storeWith();
    const clusterId = freshClusterId();
    const content = largeContent(1_200_000, 40);

    const outcome = await store(clusterId).publish(content);

    const parts = await itemsUnder(clusterId, 'snapshot#');
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) expect(itemBytes(part)).toBeLessThan(400_000);
    expect(await store(clusterId).read()).toEqual({ ...content, version: 1, contentHash: outcome.contentHash });
  });

  it('accepts creating a table that already exists', async () => {
    await expect(createSnapshotTable(table.client, table.tableName)).resolves.toBeUndefined();
  });

  it('rejects a cluster id that cannot be embedded in a key', async () => {
    await expect(storeWith()('bad id#1').read()).rejects.toThrow(MalformedInputError);
  });

  it('rejects content whose syncedAt is not a time', async () => {
    const content = { ...contentOf([]), syncedAt: 'yesterday' };
    await expect(storeWith()(freshClusterId()).publish(content)).rejects.toThrow(
      /syncedAt is "yesterday"; expected an ISO-8601 time/,
    );
  });
});

/** A client whose first pointer read is followed by `winner` publishing the same version: a lost race, on demand. */
function clientRacedBy(winner: PerCluster<SnapshotStore>, clusterId: string): DynamoDBClient {
  let raced = false;
  const { client } = countingClient({ endpoint: table.endpoint });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'GetItemCommand' && !raced) {
        raced = true;
        await winner(clusterId).publish(contentOf([ruleAdding('winner')]));
      }
      return result;
    },
    { step: 'initialize', name: 'raceAfterPointerRead' },
  );
  return client;
}

describe('publish races', () => {
  it('fails a stale publisher with a StoreError and leaves the winner as the pointer', async () => {
    const clusterId = freshClusterId();
    const winner = storeWith();
    const client = clientRacedBy(winner, clusterId);
    const stale = snapshotsOf({ client, tableName: table.tableName, clock: () => NOW });

    await expect(stale(clusterId).publish(contentOf([ruleAdding('stale')]))).rejects.toThrow(
      /another publisher won: the pointer of cluster ".*" .* is already at version 1 or later/,
    );
    expect((await winner(clusterId).read())?.rules.map((rule) => rule.name)).toEqual(['winner']);
    client.destroy();
  });

  it('lets the parts of a lost publish expire', async () => {
    const clusterId = freshClusterId();
    const winner = storeWith();
    const client = clientRacedBy(winner, clusterId);
    const stale = snapshotsOf({
      client,
      tableName: table.tableName,
      clock: () => NOW,
      snapshots: { retentionSeconds: 60 },
    });
    await expect(stale(clusterId).publish(contentOf([ruleAdding('stale')]))).rejects.toThrow(StoreError);
    const winnerPointer = await currentPointer(winner, clusterId);

    const parts = await itemsUnder(clusterId, 'snapshot#');

    const losing = parts.filter((part) => part.publishId?.S !== winnerPointer.publishId);
    expect(losing.length).toBeGreaterThan(0);
    expect(losing.map((part) => part[EXPIRES_AT_ATTRIBUTE]?.N)).toEqual(losing.map(() => String(NOW / 1000 + 60)));
    client.destroy();
  });
});

describe('superseded snapshots', () => {
  it('gives the parts of the superseded version a TTL and leaves the current parts without one', async () => {
    const store = storeWith({ partBytes: 1024, retentionSeconds: 600 });
    const clusterId = freshClusterId();
    await store(clusterId).publish(largeContent(3000, 2));

    const outcome = await store(clusterId).publish(largeContent(3000, 2));

    const first = await itemsUnder(clusterId, 'snapshot#0000000001#');
    const second = await itemsUnder(clusterId, 'snapshot#0000000002#');
    expect(outcome.supersededParts).toBe(first.length);
    expect(first.map((part) => part[EXPIRES_AT_ATTRIBUTE]?.N)).toEqual(first.map(() => String(NOW / 1000 + 600)));
    expect(second.length).toBeGreaterThan(1);
    expect(second.filter((part) => part[EXPIRES_AT_ATTRIBUTE] !== undefined)).toEqual([]);
  });

  it('lets a reader that read the old pointer finish reading after a newer publish', async () => {
    const store = storeWith();
    const clusterId = freshClusterId();
    const old = contentOf([ruleAdding('old')]);
    await store(clusterId).publish(old);
    const oldPointer = await currentPointer(store, clusterId);
    await store(clusterId).publish(contentOf([ruleAdding('new')]));

    const snapshot = await store(clusterId).readSnapshot(oldPointer);

    expect(snapshot).toEqual({ ...old, version: 1, contentHash: oldPointer.contentHash });
  });
});

describe('reading a damaged snapshot', () => {
  async function publishThreeParts(): Promise<{
    store: PerCluster<SnapshotStore>;
    clusterId: string;
    publishId: string;
  }> {
    const store = storeWith({ partBytes: 1024 });
    const clusterId = freshClusterId();
    await store(clusterId).publish(largeContent(3300, 1));
    const pointer = await currentPointer(store, clusterId);
    expect(pointer.partCount).toBe(3);
    return { store, clusterId, publishId: pointer.publishId };
  }

  function partKey(clusterId: string, publishId: string, part: number): Item {
    return { pk: { S: `cluster#${clusterId}` }, sk: { S: partSortKey(1, publishId, part) } };
  }

  it('rejects a part whose body was altered, naming the part', async () => {
    const { store, clusterId, publishId } = await publishThreeParts();
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: partKey(clusterId, publishId, 1),
        UpdateExpression: 'SET body = :body',
        ExpressionAttributeValues: { ':body': { B: new Uint8Array(1024).fill(7) } },
      }),
    );

    await expect(store(clusterId).read()).rejects.toThrow(
      /snapshot version 1 of cluster ".*" .* is unusable: part 1 of 3 is corrupted: its body does not match its digest/,
    );
  });

  it('rejects a snapshot with a missing part, naming the part', async () => {
    const { store, clusterId, publishId } = await publishThreeParts();
    await table.client.send(
      new DeleteItemCommand({ TableName: table.tableName, Key: partKey(clusterId, publishId, 2) }),
    );

    await expect(store(clusterId).read()).rejects.toThrow(/is unusable: part 2 of 3 is missing/);
  });

  it('rejects a snapshot with an extra part', async () => {
    const { store, clusterId, publishId } = await publishThreeParts();
    const [part] = await itemsUnder(clusterId, partSortKey(1, publishId, 0));
    await table.client.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: { ...part, ...partKey(clusterId, publishId, 3), part: { N: '3' } },
      }),
    );

    await expect(store(clusterId).read()).rejects.toThrow(/is unusable: unexpected part 3; the pointer names 3 parts/);
  });

  it('rejects a part rewritten with a consistent digest when the parts no longer decompress', async () => {
    const { store, clusterId, publishId } = await publishThreeParts();
    const garbage = new Uint8Array(1024).fill(42);
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: partKey(clusterId, publishId, 0),
        UpdateExpression: 'SET body = :body, partDigest = :digest',
        ExpressionAttributeValues: {
          ':body': { B: garbage },
          ':digest': { S: `sha256:${createHash('sha256').update(garbage).digest('hex')}` },
        },
      }),
    );

    await expect(store(clusterId).read()).rejects.toThrow(/is unusable: the reassembled parts are not valid gzip data/);
  });

  it('rejects a snapshot whose only part was rewritten with other rules and a consistent digest, by its content hash', async () => {
    const store = storeWith();
    const clusterId = freshClusterId();
    await store(clusterId).publish(contentOf([ruleAdding('good', { 'example.com/a': 'b' })]));
    const { publishId } = await currentPointer(store, clusterId);
    const [forged] = serializeContent(contentOf([ruleAdding('good', { 'example.com/a': 'forged' })])).encode(1 << 20);
    await table.client.send(
      new UpdateItemCommand({
        TableName: table.tableName,
        Key: partKey(clusterId, publishId, 0),
        UpdateExpression: 'SET body = :body, partDigest = :digest',
        ExpressionAttributeValues: {
          ':body': { B: forged! },
          ':digest': { S: `sha256:${createHash('sha256').update(forged!).digest('hex')}` },
        },
      }),
    );

    await expect(store(clusterId).read()).rejects.toThrow(
      /is unusable: content hashes to sha256:[0-9a-f]{64}, but the pointer says sha256:/,
    );
  });

  it('rejects a pointer whose version is not a number', async () => {
    const store = storeWith();
    const clusterId = freshClusterId();
    await table.client.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: { pk: { S: `cluster#${clusterId}` }, sk: { S: 'pointer' }, version: { S: 'seven' } },
      }),
    );

    await expect(store(clusterId).read()).rejects.toThrow(
      /pointer of cluster ".*" in table ".*" is malformed: version must be a number attribute holding an integer from 1 to 9999999999/,
    );
  });

  it('rejects intact parts whose content is not a snapshot', async () => {
    const store = storeWith();
    const clusterId = freshClusterId();
    const body = gzipSync(Buffer.from(JSON.stringify({ rules: 'all of them', invalid: [] })));
    const contentHash = `sha256:${'0'.repeat(64)}`;
    const publishId = '0123456789abcdef';
    const shared = {
      version: { N: '1' },
      partCount: { N: '1' },
      contentHash: { S: contentHash },
      publishId: { S: publishId },
    };
    await table.client.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: {
          ...partKey(clusterId, publishId, 0),
          ...shared,
          part: { N: '0' },
          partDigest: { S: `sha256:${createHash('sha256').update(body).digest('hex')}` },
          body: { B: body },
        },
      }),
    );
    await table.client.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: { pk: { S: `cluster#${clusterId}` }, sk: { S: 'pointer' }, ...shared },
      }),
    );

    await expect(store(clusterId).read()).rejects.toThrow(/is unusable: content.rules must be an array/);
  });
});

describe('sync status', () => {
  it('has no sync status before the first recorded sync', async () => {
    expect(await recordsWith()(freshClusterId()).readSyncStatus()).toBeUndefined();
  });

  it('keeps the last success time when a later sync fails', async () => {
    const store = recordsWith();
    const clusterId = freshClusterId();
    await store(clusterId).recordSync({ at: '2026-12-01T10:00:00.000Z', outcome: { status: 'published', version: 4 } });

    await store(clusterId).recordSync({
      at: '2026-12-01T10:00:30.000Z',
      outcome: { status: 'failed', error: 'listing PodMutations failed: 503' },
    });

    expect(await store(clusterId).readSyncStatus()).toEqual({
      lastAttemptAt: '2026-12-01T10:00:30.000Z',
      lastStatus: 'failed',
      lastSuccessAt: '2026-12-01T10:00:00.000Z',
      lastVersion: 4,
      lastError: 'listing PodMutations failed: 503',
    });
  });

  it('clears the last error when a sync succeeds again', async () => {
    const store = recordsWith();
    const clusterId = freshClusterId();
    await store(clusterId).recordSync({
      at: '2026-12-01T10:00:00.000Z',
      outcome: { status: 'failed', error: 'timeout' },
    });

    await store(clusterId).recordSync({ at: '2026-12-01T10:00:30.000Z', outcome: { status: 'unchanged', version: 4 } });

    expect(await store(clusterId).readSyncStatus()).toEqual({
      lastAttemptAt: '2026-12-01T10:00:30.000Z',
      lastStatus: 'unchanged',
      lastSuccessAt: '2026-12-01T10:00:30.000Z',
      lastVersion: 4,
    });
  });
});
