import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { startEmbeddedDynamo } from '../../lib/store/embedded/index.ts';
import { createDynamoClient, createSnapshotTable } from '../../lib/store/index.ts';

describe('embedded DynamoDB', () => {
  it('serves the DynamoDB protocol on a loopback endpoint', async () => {
    const dynamo = await startEmbeddedDynamo();
    const client = createDynamoClient({ endpoint: dynamo.endpoint });

    await createSnapshotTable(client, 'rules');

    expect(dynamo.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual(['rules']);
    client.destroy();
    await dynamo.close();
  });

  it('closes at once although a client still holds a keep-alive connection', async () => {
    const dynamo = await startEmbeddedDynamo();
    const client = createDynamoClient({ endpoint: dynamo.endpoint, maxAttempts: 1 });
    await client.send(new ListTablesCommand({}));
    const started = Date.now();

    await dynamo.close();

    expect(Date.now() - started).toBeLessThan(1_000);
    await expect(client.send(new ListTablesCommand({}))).rejects.toThrow();
    client.destroy();
  });
});
