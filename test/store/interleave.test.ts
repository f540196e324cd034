import type { PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { RuleSnapshot } from '../../lib/api/index.ts';
import { createDynamoClient, type SnapshotContent } from '../../lib/store/index.ts';
import { freshClusterId, largeContent, snapshotsOf } from './support.ts';
import { useTestTable } from '../support/dynamo.ts';

const table = useTestTable();

function contentPart(snapshot: RuleSnapshot): SnapshotContent {
  const { rules, invalid, resourceVersion, syncedAt } = snapshot;
  return { rules, invalid, resourceVersion, syncedAt };
}

describe('readers during publishes', () => {
  it('reads exactly one published multi-part snapshot every time while publishes run', async () => {
    // Small parts so every snapshot spans about ten items and a mix would be possible if publishing were not atomic.
    const store = snapshotsOf({ client: table.client, tableName: table.tableName, snapshots: { partBytes: 1024 } });
    const clusterId = freshClusterId();
    const contents = Array.from({ length: 6 }, () => largeContent(12_000, 3));
    const published = new Map<string, SnapshotContent>();
    const first = await store(clusterId).publish(contents[0]!);
    published.set(first.contentHash, contents[0]!);
    const reads: RuleSnapshot[] = [];
    let publishing = true;
    const reader = async (): Promise<void> => {
      while (publishing) {
        const snapshot = await store(clusterId).read();
        if (snapshot !== undefined) reads.push(snapshot);
      }
    };
    const failedReads: unknown[] = [];
    const readers = [reader(), reader(), reader()].map((running) =>
      running.catch((error: unknown) => failedReads.push(error)),
    );

    for (const content of contents.slice(1)) {
      const outcome = await store(clusterId).publish(content);
      published.set(outcome.contentHash, content);
    }
    publishing = false;
    await Promise.all(readers);

    expect(failedReads).toEqual([]);
    expect(new Set(reads.map((snapshot) => snapshot.version)).size).toBeGreaterThan(1);
    for (const snapshot of reads) expect(contentPart(snapshot)).toEqual(published.get(snapshot.contentHash));
  });

  it('gives a reader the old snapshot when it reads between the parts and the pointer switch', async () => {
    const clusterId = freshClusterId();
    const reader = snapshotsOf({ client: table.client, tableName: table.tableName });
    const [old, next] = [largeContent(12_000, 3), largeContent(12_000, 3)];
    const publisherClient = createDynamoClient({ endpoint: table.endpoint });
    const readsBeforeSwitch: (RuleSnapshot | undefined)[] = [];
    publisherClient.middlewareStack.add(
      (nextHandler, context) => async (args) => {
        const input = args.input as Partial<PutItemCommandInput>;
        if (context.commandName === 'PutItemCommand' && input.Item?.sk?.S === 'pointer') {
          readsBeforeSwitch.push(await reader(clusterId).read());
        }
        return nextHandler(args);
      },
      { step: 'initialize', name: 'readBeforePointerSwitch' },
    );
    const publisher = snapshotsOf({
      client: publisherClient,
      tableName: table.tableName,
      snapshots: { partBytes: 1024 },
    });
    await publisher(clusterId).publish(old);

    await publisher(clusterId).publish(next);

    expect(readsBeforeSwitch[0]).toBeUndefined();
    expect(readsBeforeSwitch[1] && contentPart(readsBeforeSwitch[1])).toEqual(old);
    expect(contentPart((await reader(clusterId).read())!)).toEqual(next);
    publisherClient.destroy();
  });
});
