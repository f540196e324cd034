/** Test support for the store: a real DynamoDB over loopback, command counting, a cuttable link, fixtures. */
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { NormalizedRule } from '../../lib/api/index.ts';
import {
  createDynamoClient,
  createSnapshotTable,
  type DynamoClientOptions,
  type SnapshotContent,
} from '../../lib/store/index.ts';
import { startEmbeddedDynamo } from '../../lib/store/embedded/index.ts';

/** A DynamoDB endpoint for one test file: DYNAMODB_ENDPOINT when set, else dynalite started in-process. */
interface TestDynamo {
  readonly endpoint: string;
  close(): Promise<void>;
}

async function startTestDynamo(): Promise<TestDynamo> {
  const external = process.env.DYNAMODB_ENDPOINT;
  if (external !== undefined && external !== '') return { endpoint: external, close: () => Promise.resolve() };
  return startEmbeddedDynamo();
}

/** Creates a table with a random name (so runs against a shared endpoint never collide) and returns its name. */
async function createFreshTable(endpoint: string): Promise<string> {
  const tableName = `podmutation-test-${randomUUID()}`;
  const client = createDynamoClient({ endpoint });
  await createSnapshotTable(client, tableName);
  client.destroy();
  return tableName;
}

function freshClusterId(): string {
  return `cluster-${randomBytes(4).toString('hex')}`;
}

/** Command names sent through a client, counted once per command (retries included in one count). */
type CommandCounts = { readonly [command: string]: number };

/** A real client instrumented with a counting middleware; `counts()` is a snapshot of the counters. */
function countingClient(options: DynamoClientOptions): { client: DynamoDBClient; counts: () => CommandCounts } {
  const client = createDynamoClient(options);
  const counts: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? 'unknown';
      counts[command] = (counts[command] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'countCommands' },
  );
  return { client, counts: () => ({ ...counts }) };
}

/** The difference of two count snapshots, dropping commands that did not occur. */
function countsSince(before: CommandCounts, after: CommandCounts): CommandCounts {
  return Object.fromEntries(
    Object.entries(after)
      .map(([command, count]) => [command, count - (before[command] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );
}

/** A TCP relay to an endpoint that can be cut (every connection reset) and restored: a real network outage. */
interface Link {
  readonly endpoint: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

async function startLink(target: string): Promise<Link> {
  const url = new URL(target);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const sockets = new Set<net.Socket>();
  let down = false;
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((downstream) => {
    track(downstream);
    if (down) {
      downstream.destroy();
      return;
    }
    const upstream = net.connect(port, url.hostname);
    track(upstream);
    upstream.on('close', () => downstream.destroy());
    downstream.on('close', () => upstream.destroy());
    downstream.pipe(upstream).pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: linkPort } = server.address() as AddressInfo;
  return {
    endpoint: `${url.protocol}//127.0.0.1:${linkPort}`,
    cut: () => {
      down = true;
      for (const socket of sockets) socket.destroy();
    },
    restore: () => {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An endpoint on a port nothing listens on. */
async function closedEndpoint(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Approximate DynamoDB item size: attribute name bytes plus value bytes. */
function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((size, [name, value]) => {
    const valueBytes =
      value.B !== undefined ? value.B.byteLength : Buffer.byteLength(value.S ?? value.N ?? JSON.stringify(value));
    return size + Buffer.byteLength(name) + valueBytes;
  }, 0);
}

/** Documented sort key of a snapshot part. */
function partSortKey(version: number, publishId: string, part: number): string {
  return `snapshot#${String(version).padStart(10, '0')}#${publishId}#${String(part).padStart(5, '0')}`;
}

/** Random base64 text that gzip cannot shrink much, to make snapshots span several parts. */
function incompressibleText(bytes: number): string {
  return randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64').slice(0, bytes);
}

/** A normalized rule adding the given annotations. */
function ruleAdding(name: string, annotations: Readonly<Record<string, string>> = {}): NormalizedRule {
  return {
    name,
    enable: true,
    enforcement: 'enforce',
    priority: 0,
    workloadSelector: { namespaces: ['apps'] },
    mutationRemove: {},
    mutationAdd: { annotations, nodeSelector: { 'example.com/pool': 'general' } },
  };
}

/** Snapshot content with the given rules and no invalid ones. */
function contentOf(rules: readonly NormalizedRule[], resourceVersion = '100'): SnapshotContent {
  return { rules, invalid: [], resourceVersion, syncedAt: '2026-12-01T10:00:00.000Z' };
}

/** Content carrying `chars` characters of random base64 over ruleCount rules; gzip keeps about 3/4 of them. */
function largeContent(chars: number, ruleCount: number): SnapshotContent {
  const perRule = Math.ceil(chars / ruleCount);
  return contentOf(
    Array.from({ length: ruleCount }, (_, index) =>
      ruleAdding(`bulk-${index}`, { 'example.com/blob': incompressibleText(perRule) }),
    ),
  );
}

export {
  startTestDynamo,
  createFreshTable,
  freshClusterId,
  countingClient,
  countsSince,
  startLink,
  closedEndpoint,
  itemBytes,
  partSortKey,
  incompressibleText,
  ruleAdding,
  contentOf,
  largeContent,
};
export type { TestDynamo, CommandCounts, Link };
