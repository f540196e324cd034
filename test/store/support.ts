/** Test support for the store (the DynamoDB itself is test/support/dynamo.ts): command counting, a cuttable link, fixtures. */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { NormalizedRule } from '../../lib/api/index.ts';
import {
  createDynamoClient,
  openRulesTable,
  type ClusterBindingStore,
  type DiversityCounterStore,
  type PlacementStore,
  type RulesTable,
  type SnapshotContent,
  type SnapshotStore,
  type SyncLeaseStore,
  type SyncRecordStore,
} from '../../lib/store/index.ts';
import { type DynamoClientOptions } from '../../lib/store/dynamo.ts';
import { type RulesTableOptions } from '../../lib/store/rules-table.ts';

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

/**
 * A TCP relay to an endpoint that can be cut (every connection reset), made silent (every connection, open or new,
 * read and never answered from then on: a proxy gone quiet) and restored: a real network outage.
 */
interface Link {
  readonly endpoint: string;
  cut(): void;
  /** From now on every connection is read and never answered. */
  hang(): void;
  restore(): void;
  /** How many open connections have sent something since the link went silent, and got no answer. */
  held(): number;
  close(): Promise<void>;
}

async function startLink(target: string): Promise<Link> {
  const url = new URL(target);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const sockets = new Set<net.Socket>();
  const held = new Set<net.Socket>();
  let mode: 'up' | 'down' | 'silent' = 'up';
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      held.delete(socket);
    });
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((downstream) => {
    track(downstream);
    if (mode === 'down') {
      downstream.destroy();
      return;
    }
    if (mode === 'silent') {
      downstream.on('data', () => held.add(downstream));
      return;
    }
    const upstream = net.connect(port, url.hostname);
    track(upstream);
    // Forwarded chunk by chunk rather than piped, so that an open connection can go silent too.
    downstream.on('data', (chunk: Buffer) => {
      if (mode === 'silent') held.add(downstream);
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (mode !== 'silent') downstream.write(chunk);
    });
    upstream.on('close', () => downstream.destroy());
    downstream.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: linkPort } = server.address() as AddressInfo;
  const resetAll = (): void => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    endpoint: `${url.protocol}//127.0.0.1:${linkPort}`,
    cut: () => {
      mode = 'down';
      resetAll();
    },
    hang: () => {
      mode = 'silent';
    },
    restore: () => {
      mode = 'up';
    },
    held: () => held.size,
    close: () =>
      new Promise<void>((resolve) => {
        resetAll();
        server.close(() => resolve());
      }),
  };
}

/** An endpoint that accepts every connection, reads it and never answers. */
async function silentEndpoint(): Promise<Link> {
  const link = await startLink('http://127.0.0.1:9');
  link.hang();
  return link;
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
  return randomBytes(Math.ceil((bytes * 3) / 4))
    .toString('base64')
    .slice(0, bytes);
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

/**
 * A real client whose responses carry a Date header from `tableClock`: a table whose clock is that clock. Undefined
 * removes the header, as a DynamoDB that sent none. Innermost of the stack, so the store reads the header it sets.
 */
function clientWithTableClock(options: DynamoClientOptions, tableClock: (() => number) | undefined): DynamoDBClient {
  const client = createDynamoClient(options);
  client.middlewareStack.add(
    (next) => async (args) => {
      const result = await next(args);
      const { headers } = result.response as { headers?: Record<string, string> };
      if (headers !== undefined) {
        if (tableClock === undefined) delete headers['date'];
        else headers['date'] = new Date(tableClock()).toUTCString();
      }
      return result;
    },
    { step: 'deserialize', name: 'testTableClock', priority: 'low' },
  );
  return client;
}

/** The pointer's list start set as a version of the store without the clock check wrote it from a clock running ahead. */
async function plantListStart(
  client: DynamoDBClient,
  tableName: string,
  clusterId: string,
  listStartedAt: number,
): Promise<void> {
  await client.send(
    new UpdateItemCommand({
      TableName: tableName,
      Key: { pk: { S: `cluster#${clusterId}` }, sk: { S: 'pointer' } },
      UpdateExpression: 'SET listStartedAt = :at',
      ExpressionAttributeValues: { ':at': { N: String(listStartedAt) } },
    }),
  );
}

/** One kind of store of a table, opened for the cluster a test names: `snapshots(clusterId).publish(content)`. */
type PerCluster<T> = (clusterId: string) => T;

/** The table options a test gives, without the cluster each call names. */
type TableOptions = Omit<RulesTableOptions, 'clusterId'>;

/** A store kind of the table, opened per cluster; the options are checked at once, as openRulesTable checks them. */
function perCluster<K extends keyof RulesTable>(kind: K, options: TableOptions): PerCluster<RulesTable[K]> {
  openRulesTable({ ...options, clusterId: 'options-check' });
  return (clusterId) => openRulesTable({ ...options, clusterId })[kind];
}

/** The snapshots of a table, per cluster. */
function snapshotsOf(options: TableOptions): PerCluster<SnapshotStore> {
  return perCluster('snapshots', options);
}

/** The sync records of a table, per cluster. */
function recordsOf(options: TableOptions): PerCluster<SyncRecordStore> {
  return perCluster('records', options);
}

/** The sync leases of a table, per cluster. */
function leasesOf(options: TableOptions): PerCluster<SyncLeaseStore> {
  return perCluster('leases', options);
}

/** The placement policies of a table, per cluster. */
function placementsOf(options: TableOptions): PerCluster<PlacementStore> {
  return perCluster('placements', options);
}

/** The cluster bindings of a table, per cluster. */
function bindingsOf(options: TableOptions): PerCluster<ClusterBindingStore> {
  return perCluster('bindings', options);
}

/** The Diversity counters of a table, per cluster. */
function countersOf(options: TableOptions): PerCluster<DiversityCounterStore> {
  return perCluster('diversityCounters', options);
}

export {
  countersOf,
  bindingsOf,
  snapshotsOf,
  recordsOf,
  leasesOf,
  placementsOf,
  clientWithTableClock,
  plantListStart,
  freshClusterId,
  countingClient,
  countsSince,
  startLink,
  silentEndpoint,
  closedEndpoint,
  itemBytes,
  partSortKey,
  incompressibleText,
  ruleAdding,
  contentOf,
  largeContent,
};
export type { CommandCounts, Link, PerCluster };
