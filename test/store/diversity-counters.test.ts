/** The Diversity counters against a real DynamoDB (dynalite) over the wire. */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { StoreError } from '../../lib/errors/index.ts';
import { createDynamoClient, type DiversityCounterStore } from '../../lib/store/index.ts';
import { closedEndpoint, countersOf, freshClusterId, silentEndpoint, type PerCluster } from './support.ts';
import { useTestTable } from '../support/dynamo.ts';

const table = useTestTable();
let counters: PerCluster<DiversityCounterStore>;

beforeAll(() => {
  counters = countersOf({ client: table.client, tableName: table.tableName });
});

describe('the Diversity counters', () => {
  it("number a revision's Pods from 0, one number each, also when taken concurrently", async () => {
    const store = counters(freshClusterId());
    const numbers = await Promise.all(Array.from({ length: 40 }, () => store.next('apps/Deployment/web#5d8f7c9b4')));
    expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, k) => k));
  });

  it('count each revision, workload and cluster on its own', async () => {
    const clusterId = freshClusterId();
    const store = counters(clusterId);
    await store.next('apps/Deployment/web#old');
    await store.next('apps/Deployment/web#old');
    expect(await store.next('apps/Deployment/web#new')).toBe(0);
    expect(await store.next('apps/Deployment/api#old')).toBe(0);
    expect(await counters(freshClusterId()).next('apps/Deployment/web#old')).toBe(0);
    expect(await store.next('apps/Deployment/web#old')).toBe(2);
  });

  it('keep each count in one item under the cluster, sort key diversity#<workload>#<revision>', async () => {
    const clusterId = freshClusterId();
    await counters(clusterId).next('apps/Job/reindex#');
    const { Item: item } = await table.client.send(
      new GetItemCommand({
        TableName: table.tableName,
        Key: { pk: { S: `cluster#${clusterId}` }, sk: { S: 'diversity#apps/Job/reindex#' } },
      }),
    );
    expect(item).toEqual({
      pk: { S: `cluster#${clusterId}` },
      sk: { S: 'diversity#apps/Job/reindex#' },
      n: { N: '1' },
    });
  });

  it('fail with a StoreError naming the counter and the table when the table cannot be reached', async () => {
    const client = createDynamoClient({ endpoint: await closedEndpoint(), maxAttempts: 1 });
    try {
      const store = countersOf({ client, tableName: table.tableName })(freshClusterId());
      const failure = await store.next('apps/Deployment/web#1').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreError);
      expect((failure as StoreError).message).toMatch(
        new RegExp(
          `^DynamoDB UpdateItem of a Diversity counter on table "${table.tableName}" for cluster "cluster-[0-9a-f]+" failed: `,
        ),
      );
    } finally {
      client.destroy();
    }
  });

  it('end a call that gets no answer when its abort signal fires', async () => {
    const silent = await silentEndpoint();
    const client = createDynamoClient({ endpoint: silent.endpoint, maxAttempts: 1 });
    try {
      const store = countersOf({ client, tableName: table.tableName })(freshClusterId());
      const started = performance.now();
      const failure = await store
        .next('apps/Deployment/web#1', AbortSignal.timeout(100))
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreError);
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      client.destroy();
      await silent.close();
    }
  });
});
