import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { createDynamoClient } from '../../lib/store/index.ts';
import { silentEndpoint } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('createDynamoClient', () => {
  it('ends a call the endpoint never answers with a TimeoutError once requestTimeoutMs has passed', async () => {
    const silent = await silentEndpoint();
    const client = createDynamoClient({ endpoint: silent.endpoint, maxAttempts: 1, requestTimeoutMs: 50 });
    cleanups.push(
      () => client.destroy(),
      () => silent.close(),
    );

    const call = client.send(
      new GetItemCommand({ TableName: 'rules', Key: { pk: { S: 'cluster#a' }, sk: { S: 'pointer' } } }),
    );

    await expect(call).rejects.toMatchObject({
      name: 'TimeoutError',
      message: expect.stringContaining('exceeded the configured 50 ms requestTimeout') as unknown,
    });
  });
});
