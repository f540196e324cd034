import { createHash } from 'node:crypto';
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MalformedInputError, StoreError } from '../../lib/errors/index.ts';
import { parsePlacementPolicy, type PlacementPolicy } from '../../lib/placement/index.ts';
import { type PlacementStore } from '../../lib/store/index.ts';
import { countingClient, countsSince, freshClusterId, placementsOf, type PerCluster } from './support.ts';
import { useTestTable } from '../support/dynamo.ts';

const NOW = Date.parse('2026-12-01T10:00:00.000Z');

const table = useTestTable();
let store: PerCluster<PlacementStore>;
const clients: DynamoDBClient[] = [];

beforeAll(() => {
  store = placementsOf({ client: table.client, tableName: table.tableName, clock: () => NOW });
});

afterAll(() => {
  for (const client of [table.client, ...clients]) client.destroy();
});

function policy(name: string, overrides: Record<string, unknown> = {}): PlacementPolicy {
  return parsePlacementPolicy({ namespace: 'apps', kind: 'Deployment', name, mode: 'Spot', ...overrides });
}

/** A second writer with its own client; `beforePut` runs before each of its PutItems is sent. */
function writer(beforePut?: () => Promise<void>, maxWriteAttempts?: number) {
  const { client, counts } = countingClient({ endpoint: table.endpoint });
  clients.push(client);
  if (beforePut !== undefined) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutItemCommand') await beforePut();
        return next(args);
      },
      { step: 'initialize', name: 'beforePut' },
    );
  }
  const placements = placementsOf({
    client,
    tableName: table.tableName,
    ...(maxWriteAttempts === undefined ? {} : { placements: { maxWriteAttempts } }),
  });
  return { placements, counts };
}

const placementKey = (clusterId: string) => ({ pk: { S: `cluster#${clusterId}` }, sk: { S: 'placement#set' } });

async function overwritePolicies(clusterId: string, json: string, contentHash?: string): Promise<void> {
  await table.client.send(
    new UpdateItemCommand({
      TableName: table.tableName,
      Key: placementKey(clusterId),
      UpdateExpression:
        contentHash === undefined ? 'SET policies = :policies' : 'SET policies = :policies, contentHash = :hash',
      ExpressionAttributeValues: {
        ':policies': { S: json },
        ...(contentHash === undefined ? {} : { ':hash': { S: contentHash } }),
      },
    }),
  );
}

describe('placement policies round trip', () => {
  it('sets, gets, lists sorted by workload and deletes policies', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web', { mode: 'Diversity', spotPercent: 30 }));
    await store(clusterId).setPlacement(policy('api', { mode: 'NonSpot' }));

    expect(await store(clusterId).getPlacement('apps', 'Deployment', 'web')).toEqual(
      policy('web', { mode: 'Diversity', spotPercent: 30 }),
    );
    expect((await store(clusterId).listPlacements()).map((entry) => entry.name)).toEqual(['api', 'web']);
    expect(await store(clusterId).deletePlacement('apps', 'Deployment', 'api')).toEqual({ changed: true, version: 3 });
    expect(await store(clusterId).listPlacements()).toEqual([policy('web', { mode: 'Diversity', spotPercent: 30 })]);
  });

  it('replaces the policy of a workload that already has one', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));

    await store(clusterId).setPlacement(policy('web', { mode: 'NonSpot' }));

    expect(await store(clusterId).listPlacements()).toEqual([policy('web', { mode: 'NonSpot' })]);
  });

  it('stores the default spotPercent of a Diversity policy given without one', async () => {
    const clusterId = freshClusterId();

    await store(clusterId).setPlacement({ namespace: 'apps', kind: 'Deployment', name: 'web', mode: 'Diversity' });

    expect(await store(clusterId).getPlacement('apps', 'Deployment', 'web')).toMatchObject({ spotPercent: 50 });
  });

  it('reports no policies for a cluster that never had any', async () => {
    const clusterId = freshClusterId();

    expect([
      await store(clusterId).listPlacements(),
      await store(clusterId).readPlacementVersion(),
      await store(clusterId).readPlacements(),
    ]).toEqual([[], undefined, undefined]);
  });

  it('keeps the policies of two clusters apart', async () => {
    const [first, second] = [freshClusterId(), freshClusterId()];
    await store(first).setPlacement(policy('web'));
    await store(second).setPlacement(policy('batch', { mode: 'NonSpot' }));

    expect(await store(first).listPlacements()).toEqual([policy('web')]);
    expect(await store(second).listPlacements()).toEqual([policy('batch', { mode: 'NonSpot' })]);
    expect(await store(second).getPlacement('apps', 'Deployment', 'web')).toBeUndefined();
  });

  it('reads the set with its version, hash and write time', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));

    expect(await store(clusterId).readPlacements()).toEqual({
      version: 1,
      contentHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown,
      policies: [policy('web')],
      updatedAt: '2026-12-01T10:00:00.000Z',
    });
  });
});

describe('placement versions', () => {
  it('moves the version forward on every change', async () => {
    const clusterId = freshClusterId();

    const writes = [
      await store(clusterId).setPlacement(policy('web')),
      await store(clusterId).setPlacement(policy('api')),
      await store(clusterId).deletePlacement('apps', 'Deployment', 'web'),
    ];

    expect(writes).toEqual([1, 2, 3].map((version) => ({ changed: true, version })));
    expect((await store(clusterId).readPlacementVersion())?.version).toBe(3);
  });

  it('writes nothing and keeps the version when the same policy is set again', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));
    const before = await store(clusterId).readPlacementVersion();

    const write = await store(clusterId).setPlacement(policy('web'));

    expect(write).toEqual({ changed: false, version: 1 });
    expect(await store(clusterId).readPlacementVersion()).toEqual(before);
  });

  it('gives equal sets equal hashes whatever order they were written in', async () => {
    const [first, second] = [freshClusterId(), freshClusterId()];
    await store(first).replacePlacements([policy('a'), policy('b')]);
    await store(second).replacePlacements([policy('b'), policy('a')]);

    expect((await store(first).readPlacementVersion())?.contentHash).toBe(
      (await store(second).readPlacementVersion())?.contentHash,
    );
  });

  it('reads the version in exactly one GetItem that projects only the version and hash', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));
    const reader = writer();
    const before = reader.counts();

    const version = await reader.placements(clusterId).readPlacementVersion();

    expect(countsSince(before, reader.counts())).toEqual({ GetItemCommand: 1 });
    expect(Object.keys(version ?? {}).sort()).toEqual(['contentHash', 'version']);
  });

  it('reports a delete of a workload without a policy as unchanged, writing nothing', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));
    const deleter = writer();
    const before = deleter.counts();

    const write = await deleter.placements(clusterId).deletePlacement('apps', 'Deployment', 'api');

    expect(write).toEqual({ changed: false, version: 1 });
    expect(countsSince(before, deleter.counts())).toEqual({ GetItemCommand: 1 });
  });

  it('keeps an emptied set as an item with its version, so versions never restart', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));
    await store(clusterId).deletePlacement('apps', 'Deployment', 'web');

    const write = await store(clusterId).setPlacement(policy('web'));

    expect(write).toEqual({ changed: true, version: 3 });
  });
});

describe('concurrent writers', () => {
  it('lands both policies when a second writer changes the set between the first one reading and writing', async () => {
    const clusterId = freshClusterId();
    let raced = false;
    const second = writer();
    const first = writer(async () => {
      if (raced) return;
      raced = true;
      await second.placements(clusterId).setPlacement(policy('api'));
    });

    const write = await first.placements(clusterId).setPlacement(policy('web'));

    expect(write).toEqual({ changed: true, version: 2 });
    expect(first.counts().PutItemCommand).toBe(2);
    expect((await store(clusterId).listPlacements()).map((entry) => entry.name)).toEqual(['api', 'web']);
  });

  it('lands every policy of many writers running at once', async () => {
    const clusterId = freshClusterId();
    const writers = [writer(), writer()];
    const names = Array.from({ length: 8 }, (_, index) => `web-${index}`);

    await Promise.all(names.map((name, index) => writers[index % 2]!.placements(clusterId).setPlacement(policy(name))));

    expect((await store(clusterId).listPlacements()).map((entry) => entry.name)).toEqual(names);
    expect((await store(clusterId).readPlacementVersion())?.version).toBe(names.length);
  });

  it('fails with a StoreError, writing nothing, when every attempt loses the race', async () => {
    const clusterId = freshClusterId();
    const rival = writer();
    let percent = 0;
    const loser = writer(async () => {
      percent += 1;
      await rival.placements(clusterId).setPlacement(policy('api', { mode: 'Diversity', spotPercent: percent }));
    }, 3);

    await expect(loser.placements(clusterId).setPlacement(policy('web'))).rejects.toThrow(
      /placement policies of cluster ".*" in table ".*" were changed by another writer before each of 3 attempts to write them; nothing was written/,
    );
    expect(await store(clusterId).getPlacement('apps', 'Deployment', 'web')).toBeUndefined();
  });
});

describe('stored placement items are checked on read', () => {
  it('rejects an item whose policies were edited without updating the hash', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));
    await overwritePolicies(clusterId, JSON.stringify([policy('web', { mode: 'NonSpot' })]));

    await expect(store(clusterId).listPlacements()).rejects.toThrow(StoreError);
    await expect(store(clusterId).getPlacement('apps', 'Deployment', 'web')).rejects.toThrow(
      /placement policies of cluster ".*" in table ".*" are unusable: policies do not match contentHash sha256:/,
    );
  });

  it('rejects an item holding an invalid policy even when its hash matches', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));
    const json = JSON.stringify([{ namespace: 'apps', kind: 'Deployment', name: 'web', mode: 'Sometimes' }]);
    await overwritePolicies(clusterId, json, `sha256:${createHash('sha256').update(json).digest('hex')}`);

    await expect(store(clusterId).readPlacements()).rejects.toThrow(
      /are unusable: stored policy 0 apps\/Deployment\/web: mode: must be one of Spot, NonSpot, Diversity/,
    );
  });

  it('refuses to change a damaged set policy by policy', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));
    await overwritePolicies(clusterId, 'not json');

    await expect(store(clusterId).setPlacement(policy('api'))).rejects.toThrow(
      /are unusable: policies do not match contentHash/,
    );
  });

  it('replaces a damaged set whole, since the new set does not depend on the old one', async () => {
    const clusterId = freshClusterId();
    await store(clusterId).setPlacement(policy('web'));
    await overwritePolicies(clusterId, 'not json');

    await store(clusterId).replacePlacements([policy('api')]);

    expect(await store(clusterId).listPlacements()).toEqual([policy('api')]);
  });
});

describe('input checks and limits', () => {
  it('rejects an invalid policy with the validator message before writing', async () => {
    const clusterId = freshClusterId();
    const invalid = {
      namespace: 'apps',
      kind: 'Deployment',
      name: 'web',
      mode: 'Spot',
      spotPercent: 20,
    } as PlacementPolicy;

    await expect(store(clusterId).setPlacement(invalid)).rejects.toThrow(
      'spotPercent: is only used with mode Diversity',
    );
    expect(await store(clusterId).readPlacementVersion()).toBeUndefined();
  });

  it('rejects a replacement naming one workload twice', async () => {
    const replace = store(freshClusterId()).replacePlacements([policy('web'), policy('web', { mode: 'NonSpot' })]);

    await expect(replace).rejects.toThrow(MalformedInputError);
    await expect(replace).rejects.toThrow(/name workload apps\/Deployment\/web more than once/);
  });

  it('rejects a malformed cluster id', async () => {
    await expect(store('bad/id').listPlacements()).rejects.toThrow('cluster id "bad/id" is invalid');
  });

  it('keeps 3,000 policies of typical names in the one item', async () => {
    const clusterId = freshClusterId();
    const policies = Array.from({ length: 3_000 }, (_, index) =>
      policy(`service-${index}`, { mode: 'Diversity', spotPercent: 40 }),
    );

    await store(clusterId).replacePlacements(policies);

    expect(await store(clusterId).listPlacements()).toHaveLength(3_000);
  });

  it('fails with a StoreError naming the size and the limit when the set would not fit one item', async () => {
    const clusterId = freshClusterId();
    const policies = Array.from({ length: 4_000 }, (_, index) => policy(`service-with-a-longer-name-${index}`));

    await expect(store(clusterId).replacePlacements(policies)).rejects.toThrow(
      /placement policies of cluster ".*" would take \d+ bytes as JSON \(4000 policies\), above the limit of 350000 bytes that keeps them in one DynamoDB item \(400 KB\)/,
    );
    const { Item: item } = await table.client.send(
      new GetItemCommand({ TableName: table.tableName, Key: placementKey(clusterId) }),
    );
    expect(item).toBeUndefined();
  });
});
