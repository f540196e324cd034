/**
 * Publishes ordered by when their list started, not by when they reach the table: a list older than the current
 * snapshot's never replaces it, whether the publish sees the newer pointer first or loses to it at the switch.
 */
import {
  PutItemCommand,
  QueryCommand,
  type AttributeValue,
  type DynamoDBClient,
  type PutItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { MalformedInputError, StoreError } from '../../lib/errors/index.ts';
import { createDynamoClient, type SnapshotStore } from '../../lib/store/index.ts';
import {
  contentOf,
  countingClient,
  countsSince,
  freshClusterId,
  ruleAdding,
  snapshotsOf,
  type PerCluster,
} from './support.ts';
import { useTestTable } from '../support/dynamo.ts';
import { EXPIRES_AT_ATTRIBUTE } from '../../lib/store/layout.ts';

const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const T1 = Date.parse('2026-12-01T09:59:00.000Z');
const T2 = Date.parse('2026-12-01T09:59:30.000Z');
const T3 = Date.parse('2026-12-01T09:59:45.000Z');

const table = useTestTable();

function storeOn(client: DynamoDBClient = table.client): PerCluster<SnapshotStore> {
  return snapshotsOf({ client, tableName: table.tableName, clock: () => NOW, snapshots: { retentionSeconds: 60 } });
}

const older = contentOf([ruleAdding('older-list')], '100');
const newer = contentOf([ruleAdding('newer-list')], '200');

async function ruleNames(store: PerCluster<SnapshotStore>, clusterId: string): Promise<string[] | undefined> {
  return (await store(clusterId).read())?.rules.map((rule) => rule.name);
}

describe('publishing in list order', () => {
  it('records when the list started on the pointer', async () => {
    const store = storeOn();
    const clusterId = freshClusterId();

    await store(clusterId).publish(newer, { listStartedAt: T2 });

    expect(await store(clusterId).readPointer()).toMatchObject({ version: 1, listStartedAt: T2 });
  });

  it('refuses a list that started before the current snapshot’s, naming both times, and keeps the snapshot', async () => {
    const store = storeOn();
    const clusterId = freshClusterId();
    await store(clusterId).publish(newer, { listStartedAt: T2 });
    const before = await store(clusterId).read();

    const stale = store(clusterId).publish(older, { listStartedAt: T1 });

    await expect(stale).rejects.toThrow(StoreError);
    await expect(stale).rejects.toThrow(
      `a newer list is already published: version 1 of cluster "${clusterId}" in table "${table.tableName}" comes from a list started at ` +
        '2026-12-01T09:59:30.000Z, after this one (started at 2026-12-01T09:59:00.000Z); nothing was published',
    );
    await expect(stale).rejects.toMatchObject({ context: { reason: 'superseded', version: 1 } });
    expect(await store(clusterId).read()).toEqual(before);
  });

  it.each([
    { when: 'at the same time', listStartedAt: T2 },
    { when: 'later', listStartedAt: T3 },
  ])('publishes a list that started $when as the next version', async ({ listStartedAt }) => {
    const store = storeOn();
    const clusterId = freshClusterId();
    await store(clusterId).publish(older, { listStartedAt: T2 });

    const outcome = await store(clusterId).publish(newer, { listStartedAt });

    expect(outcome).toMatchObject({ published: true, version: 2 });
    expect(await store(clusterId).readPointer()).toMatchObject({ version: 2, listStartedAt });
  });

  it('replaces a pointer written before list starts were recorded (the upgrade)', async () => {
    const store = storeOn();
    const clusterId = freshClusterId();
    await store(clusterId).publish(older);
    expect((await store(clusterId).readPointer())?.listStartedAt).toBeUndefined();

    const outcome = await store(clusterId).publish(newer, { listStartedAt: T1 });

    expect(outcome).toMatchObject({ published: true, version: 2 });
    expect(await ruleNames(store, clusterId)).toEqual(['newer-list']);
  });

  it('orders a publish without a list start by version alone, as before', async () => {
    const store = storeOn();
    const clusterId = freshClusterId();
    await store(clusterId).publish(newer, { listStartedAt: T2 });

    const outcome = await store(clusterId).publish(older);

    expect(outcome).toMatchObject({ published: true, version: 2 });
    expect((await store(clusterId).readPointer())?.listStartedAt).toBeUndefined();
  });

  it('reports an older list of the current content as unchanged and writes nothing', async () => {
    const { client, counts } = countingClient({ endpoint: table.endpoint });
    const store = storeOn(client);
    const clusterId = freshClusterId();
    await store(clusterId).publish(newer, { listStartedAt: T2 });
    const before = counts();

    const outcome = await store(clusterId).publish(newer, { listStartedAt: T1 });

    expect(outcome).toMatchObject({ published: false, version: 1 });
    expect(countsSince(before, counts())).toEqual({ GetItemCommand: 1 });
    expect((await store(clusterId).readPointer())?.listStartedAt).toBe(T2);
    client.destroy();
  });

  it('moves the list start of unchanged content forward, so that a list older than the confirming one is refused', async () => {
    const store = storeOn();
    const clusterId = freshClusterId();
    await store(clusterId).publish(newer, { listStartedAt: T1 });
    const unchanged = await store(clusterId).publish(newer, { listStartedAt: T3 });
    expect(unchanged).toMatchObject({ published: false, version: 1 });
    expect(await store(clusterId).readPointer()).toMatchObject({ version: 1, listStartedAt: T3 });

    await expect(store(clusterId).publish(older, { listStartedAt: T2 })).rejects.toMatchObject({
      context: { reason: 'superseded' },
    });

    expect(await ruleNames(store, clusterId)).toEqual(['newer-list']);
  });

  it('rejects a list start that is not epoch milliseconds', async () => {
    await expect(storeOn()(freshClusterId()).publish(older, { listStartedAt: -1 })).rejects.toThrow(
      MalformedInputError,
    );
  });
});

/** A client that, after its first pointer read, lets `winner` publish newer content from a later list: a lost race. */
function clientOvertakenBy(winner: PerCluster<SnapshotStore>, clusterId: string): DynamoDBClient {
  let raced = false;
  const client = createDynamoClient({ endpoint: table.endpoint });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName === 'GetItemCommand' && !raced) {
        raced = true;
        await winner(clusterId).publish(newer, { listStartedAt: T2 });
      }
      return result;
    },
    { step: 'initialize', name: 'overtakeAfterPointerRead' },
  );
  return client;
}

async function partsOf(clusterId: string): Promise<Record<string, AttributeValue>[]> {
  const page = await table.client.send(
    new QueryCommand({
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': { S: `cluster#${clusterId}` }, ':prefix': { S: 'snapshot#' } },
      ConsistentRead: true,
    }),
  );
  return page.Items ?? [];
}

describe('a publish overtaken by a newer list while it writes its parts', () => {
  it('is refused by the pointer’s condition, as superseded, and the newer list stays current', async () => {
    const clusterId = freshClusterId();
    const winner = storeOn();
    await winner(clusterId).publish(contentOf([ruleAdding('first')]), { listStartedAt: NOW - 600_000 });
    const client = clientOvertakenBy(winner, clusterId);

    const stale = storeOn(client)(clusterId).publish(older, { listStartedAt: T1 });

    await expect(stale).rejects.toMatchObject({ name: 'StoreError', context: { reason: 'superseded', version: 2 } });
    expect(await ruleNames(winner, clusterId)).toEqual(['newer-list']);
    expect(await winner(clusterId).readPointer()).toMatchObject({ version: 2, listStartedAt: T2 });
    client.destroy();
  });

  it('lets the parts of the refused publish expire', async () => {
    const clusterId = freshClusterId();
    const winner = storeOn();
    const client = clientOvertakenBy(winner, clusterId);
    await expect(storeOn(client)(clusterId).publish(older, { listStartedAt: T1 })).rejects.toThrow(StoreError);
    const current = await winner(clusterId).readPointer();

    const losing = (await partsOf(clusterId)).filter((part) => part.publishId?.S !== current?.publishId);

    expect(losing.length).toBeGreaterThan(0);
    expect(losing.map((part) => part[EXPIRES_AT_ATTRIBUTE]?.N)).toEqual(losing.map(() => String(NOW / 1000 + 60)));
    client.destroy();
  });

  it('is refused at the switch even when the pointer was written with an older list start after the pre-check', async () => {
    // The pre-check saw no pointer; a newer list's pointer lands between it and the switch (the condition alone decides).
    const clusterId = freshClusterId();
    let injected = false;
    const client = createDynamoClient({ endpoint: table.endpoint });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Partial<PutItemCommandInput>;
        if (context.commandName === 'PutItemCommand' && input.Item?.sk?.S === 'pointer' && !injected) {
          injected = true;
          await table.client.send(
            new PutItemCommand({
              TableName: table.tableName,
              Item: {
                ...input.Item,
                version: { N: '1' },
                listStartedAt: { N: String(T3) },
                publishId: { S: 'ffffffffffffffff' },
              },
            }),
          );
        }
        return next(args);
      },
      { step: 'initialize', name: 'pointerBeforeSwitch' },
    );

    await expect(storeOn(client)(clusterId).publish(older, { listStartedAt: T1 })).rejects.toMatchObject({
      context: { reason: 'superseded' },
    });
    expect(await storeOn()(clusterId).readPointer()).toMatchObject({
      publishId: 'ffffffffffffffff',
      listStartedAt: T3,
    });
    client.destroy();
  });
});
