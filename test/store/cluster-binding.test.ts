import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../lib/errors/index.ts';
import { createDynamoClient, type ClusterBindingStore } from '../../lib/store/index.ts';
import { bindingsOf, freshClusterId, type PerCluster } from './support.ts';
import { useTestTable } from '../support/dynamo.ts';
import { RULES_TABLE_LAYOUT } from '../../lib/store/layout.ts';

const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const FIRST = '5b7e8a52-0c4f-4b8e-9d43-3f1e6a2c9b70';
const SECOND = 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f';
const THIRD = '00000000-1111-4222-8333-444444444444';

const table = useTestTable();
let now = NOW;
let bindings: PerCluster<ClusterBindingStore>;
const clients: DynamoDBClient[] = [];

beforeAll(() => {
  bindings = bindingsOf({ client: table.client, tableName: table.tableName, clock: () => now });
});

afterAll(() => {
  for (const client of [table.client, ...clients]) client.destroy();
});

/** The binding item as stored, or undefined. */
async function storedItem(clusterId: string): Promise<Record<string, unknown> | undefined> {
  const { Item: item } = await table.client.send(
    new GetItemCommand({
      TableName: table.tableName,
      Key: { pk: { S: `cluster#${clusterId}` }, sk: { S: RULES_TABLE_LAYOUT.binding.sortKey } },
      ConsistentRead: true,
    }),
  );
  return item;
}

/** A binding store of its own client, whose UpdateItems wait for `gate` before they are sent. */
function gatedBindings(gate: Promise<unknown>): PerCluster<ClusterBindingStore> {
  const client = createDynamoClient({ endpoint: table.endpoint });
  clients.push(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'UpdateItemCommand') await gate;
      return next(args);
    },
    { step: 'initialize', name: 'gate' },
  );
  return bindingsOf({ client, tableName: table.tableName, clock: () => now });
}

describe('binding a cluster id', () => {
  it('binds an id bound to nothing to the uid of the first bind, with its time and owner', async () => {
    const clusterId = freshClusterId();

    const check = await bindings(clusterId).bind(FIRST, 'cli:host:1');

    expect(check).toEqual({
      kind: 'bound',
      newly: true,
      binding: { clusterUid: FIRST, boundAt: '2026-12-01T10:00:00.000Z', boundBy: 'cli:host:1' },
    });
    expect(await bindings(clusterId).read()).toEqual(check.binding);
  });

  it('finds a later bind of the same uid bound already, and rewrites nothing', async () => {
    const clusterId = freshClusterId();
    await bindings(clusterId).bind(FIRST, 'cli:host:1');
    const item = await storedItem(clusterId);
    now += 60_000;

    const check = await bindings(clusterId).bind(FIRST, 'lambda:abc');

    expect(check).toMatchObject({ kind: 'bound', newly: false, binding: { boundBy: 'cli:host:1' } });
    expect(await storedItem(clusterId)).toEqual(item);
  });

  it('answers a bind of another uid with the binding it found, and leaves it', async () => {
    const clusterId = freshClusterId();
    await bindings(clusterId).bind(FIRST, 'cli:host:1');
    const item = await storedItem(clusterId);

    const check = await bindings(clusterId).bind(SECOND, 'cli:host:2');

    expect(check).toMatchObject({ kind: 'other', binding: { clusterUid: FIRST, boundBy: 'cli:host:1' } });
    expect(await storedItem(clusterId)).toEqual(item);
  });

  it('keeps the bindings of cluster ids apart', async () => {
    const [one, two] = [freshClusterId(), freshClusterId()];
    await bindings(one).bind(FIRST, 'cli:host:1');

    expect(await bindings(two).read()).toBeUndefined();
    expect(await bindings(two).bind(SECOND, 'cli:host:2')).toMatchObject({ kind: 'bound', newly: true });
  });

  it('lets one of two binds that both found the id unbound win, and tells the other which uid won', async () => {
    const clusterId = freshClusterId();
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // The late binder has read "unbound" before the early one writes.
    const late = gatedBindings(gate)(clusterId).bind(SECOND, 'cli:late:2');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const early = await bindings(clusterId).bind(FIRST, 'cli:early:1');
    open();

    expect(early).toMatchObject({ kind: 'bound', newly: true });
    expect(await late).toMatchObject({ kind: 'other', binding: { clusterUid: FIRST } });
    expect((await bindings(clusterId).read())?.clusterUid).toBe(FIRST);
  });

  it.each([
    { uid: 'kube-system', why: 'not a uid' },
    { uid: '', why: 'empty' },
    { uid: `${FIRST}0`, why: 'a uid with a digit more' },
  ])('refuses to bind $uid ($why), naming the expected form', async ({ uid }) => {
    await expect(bindings(freshClusterId()).bind(uid, 'cli:host:1')).rejects.toThrow(
      /clusterUid is ".*"; expected a Kubernetes uid \(a UUID/,
    );
  });

  it('reads a malformed binding item as a StoreError, so that nothing is published under it', async () => {
    const clusterId = freshClusterId();
    await table.client.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: {
          pk: { S: `cluster#${clusterId}` },
          sk: { S: RULES_TABLE_LAYOUT.binding.sortKey },
          clusterUid: { S: 'not-a-uid' },
          boundAt: { S: '2026-12-01T10:00:00.000Z' },
          boundBy: { S: 'cli:host:1' },
        },
      }),
    );

    const bind = bindings(clusterId).bind(FIRST, 'cli:host:1');

    await expect(bind).rejects.toBeInstanceOf(StoreError);
    await expect(bind).rejects.toThrow(
      `the cluster binding of cluster "${clusterId}" in table "${table.tableName}" is malformed`,
    );
  });
});

describe('re-binding a cluster id', () => {
  it('moves the binding from the uid it names to the new one, recording the old uid', async () => {
    const clusterId = freshClusterId();
    await bindings(clusterId).bind(FIRST, 'cli:host:1');
    now += 60_000;

    const check = await bindings(clusterId).rebind(FIRST, SECOND, 'cli:host:2');

    const binding = {
      clusterUid: SECOND,
      boundAt: new Date(now).toISOString(),
      boundBy: 'cli:host:2',
      previousUid: FIRST,
    };
    expect(check).toEqual({ kind: 'bound', newly: true, binding });
    expect(await bindings(clusterId).read()).toEqual(binding);
    expect(await bindings(clusterId).bind(FIRST, 'lambda:old')).toMatchObject({ kind: 'other', binding });
  });

  it('refuses a re-bind that names a uid the id is not bound to, and changes nothing', async () => {
    const clusterId = freshClusterId();
    await bindings(clusterId).bind(FIRST, 'cli:host:1');
    const item = await storedItem(clusterId);

    const check = await bindings(clusterId).rebind(THIRD, SECOND, 'cli:host:2');

    expect(check).toMatchObject({ kind: 'other', binding: { clusterUid: FIRST } });
    expect(await storedItem(clusterId)).toEqual(item);
  });

  it('finds an id bound to the new uid already bound, without a write', async () => {
    const clusterId = freshClusterId();
    await bindings(clusterId).bind(SECOND, 'cli:host:1');
    const item = await storedItem(clusterId);

    expect(await bindings(clusterId).rebind(FIRST, SECOND, 'cli:host:2')).toMatchObject({
      kind: 'bound',
      newly: false,
    });
    expect(await storedItem(clusterId)).toEqual(item);
  });

  it('answers unbound for an id bound to nothing, and writes nothing', async () => {
    const clusterId = freshClusterId();

    expect(await bindings(clusterId).rebind(FIRST, SECOND, 'cli:host:2')).toEqual({ kind: 'unbound' });
    expect(await storedItem(clusterId)).toBeUndefined();
  });

  it('loses to a re-bind that moved the binding first, and names where it went', async () => {
    const clusterId = freshClusterId();
    await bindings(clusterId).bind(FIRST, 'cli:host:1');
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const late = gatedBindings(gate)(clusterId).rebind(FIRST, SECOND, 'cli:late:2');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await bindings(clusterId).rebind(FIRST, THIRD, 'cli:early:3')).toMatchObject({ kind: 'bound' });
    open();

    expect(await late).toMatchObject({ kind: 'other', binding: { clusterUid: THIRD, previousUid: FIRST } });
  });
});
