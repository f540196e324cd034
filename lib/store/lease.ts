/**
 * The sync lease of the rules table: sk `lease#sync` under each cluster's pk names the one sync that may list and
 * publish the cluster now. holderId (S, random per acquisition), owner (S, `lambda:<request id>`, `cli:<host>:<pid>`),
 * acquiredAt (S), renewedAt (S), releasedAt (S, once released), leaseExpiresAt (N, epoch milliseconds by the holder's
 * clock; 0 once released) and acquisitions (N). Every write is one conditional UpdateItem: taking the lease requires
 * it to be free (no expiry, an expiry before the taker's now, or one further ahead than a holder whose clock is
 * within MAX_CLOCK_SKEW_MS of the taker's can have set); renewing and releasing require the same holderId, not yet
 * released, so a sync whose lease was taken over can neither extend nor free the new holder's.
 *
 * leaseExpiresAt is not the table's TTL attribute (expiresAt): the item is one per cluster and is never deleted.
 */
import { randomBytes } from 'node:crypto';
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConfigurationError, MalformedInputError, StoreError } from '../errors/index.ts';
import { MAX_CLOCK_SKEW_MS } from './clock.ts';
import {
  checkedClusterId,
  conditionalWrite,
  fieldsOf,
  integerField,
  itemKey,
  storeCall,
  stringField,
  toItem,
  type Item,
} from './items.ts';
import { LEASE_SORT_KEY } from './layout.ts';
import type { HeldSyncLease, SyncLeaseAcquisition, SyncLeaseState, SyncLeaseStore } from './types.ts';

/** Options of the sync leases of one table. */
interface SyncLeaseStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Epoch milliseconds (default Date.now); expiries are written and judged by this clock. */
  readonly clock?: () => number;
  /** Life of a lease from its acquisition or last renewal (default 120 s, 10 to 3600); longer than the longest sync. */
  readonly durationSeconds?: number;
}

// The Lambda's timeout (70 s) bounds its sync; 120 s leaves 50 s for a slower list or clock skew between writers.
const DEFAULT_DURATION_SECONDS = 120;
const MIN_DURATION_SECONDS = 10;
const MAX_DURATION_SECONDS = 3600;
// A free lease can be taken between our failed write and our read of it; a few rounds settle such a race.
const ACQUIRE_ATTEMPTS = 3;
const OWNER_PATTERN = /^[\x20-\x7e]{1,200}$/;
const HOLDER_ID_PATTERN = /^[0-9a-f]{16}$/;

const NAMES = {
  '#holderId': 'holderId',
  '#owner': 'owner',
  '#acquiredAt': 'acquiredAt',
  '#renewedAt': 'renewedAt',
  '#releasedAt': 'releasedAt',
  '#expires': 'leaseExpiresAt',
  '#acquisitions': 'acquisitions',
} as const;

function durationOption(value: number | undefined): number {
  if (value === undefined) return DEFAULT_DURATION_SECONDS;
  if (!Number.isInteger(value) || value < MIN_DURATION_SECONDS || value > MAX_DURATION_SECONDS) {
    throw new ConfigurationError(
      `sync lease option durationSeconds is ${value}; expected an integer from ${MIN_DURATION_SECONDS} to ${MAX_DURATION_SECONDS}`,
    );
  }
  return value;
}

function checkedOwner(owner: string): string {
  if (!OWNER_PATTERN.test(owner)) {
    throw new MalformedInputError(
      `sync lease owner "${owner}" is invalid; expected 1 to 200 printable ASCII characters`,
      {
        context: { field: 'owner' },
      },
    );
  }
  return owner;
}

function isoOf(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** The lease in an item, or what is wrong with it. */
function parseLease(item: Item): SyncLeaseState | string {
  const fields = fieldsOf(item);
  const holderId = stringField(fields, 'holderId');
  if (holderId === undefined || !HOLDER_ID_PATTERN.test(holderId))
    return 'holderId must be a string attribute of 16 lowercase hex digits';
  const owner = stringField(fields, 'owner');
  if (owner === undefined) return 'owner must be a string attribute';
  const acquiredAt = stringField(fields, 'acquiredAt');
  if (acquiredAt === undefined) return 'acquiredAt must be a string attribute';
  const expiresAtMs = integerField(fields, 'leaseExpiresAt');
  if (expiresAtMs === undefined || expiresAtMs < 0)
    return 'leaseExpiresAt must be a number attribute holding epoch milliseconds';
  const releasedAt = stringField(fields, 'releasedAt');
  return {
    holderId,
    owner,
    acquiredAt,
    expiresAt: isoOf(expiresAtMs),
    ...(releasedAt === undefined ? {} : { releasedAt }),
    acquisitions: integerField(fields, 'acquisitions') ?? 0,
  };
}

/** The sync leases of one table; see the item above. */
function createSyncLeaseStore(options: SyncLeaseStoreOptions): SyncLeaseStore {
  const { client, tableName } = options;
  const clock = options.clock ?? Date.now;
  const durationMs = durationOption(options.durationSeconds) * 1000;
  const call = <T>(operation: string, clusterId: string, run: () => Promise<T>) =>
    storeCall(tableName, operation, clusterId, run);

  /** One conditional UpdateItem of the lease item: the attributes it changed, as they were; undefined when its condition failed. */
  async function update(
    clusterId: string,
    expressions: { update: string; condition: string; values: Readonly<Record<string, unknown>> },
  ): Promise<Item | undefined> {
    const output = await conditionalWrite(tableName, 'UpdateItem', clusterId, () =>
      client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: itemKey(clusterId, LEASE_SORT_KEY),
          UpdateExpression: expressions.update,
          ConditionExpression: expressions.condition,
          ExpressionAttributeNames: namesIn(expressions.update, expressions.condition),
          ExpressionAttributeValues: toItem(expressions.values),
          ReturnValues: 'UPDATED_OLD',
        }),
      ),
    );
    return output === undefined ? undefined : (output.Attributes ?? {});
  }

  /** The latest expiry a holder whose clock is within MAX_CLOCK_SKEW_MS of this one's can have written at `now`. */
  const trustedExpiry = (now: number) => now + durationMs + MAX_CLOCK_SKEW_MS;

  async function read(clusterId: string): Promise<SyncLeaseState | undefined> {
    checkedClusterId(clusterId);
    const { Item: item } = await call('GetItem', clusterId, () =>
      client.send(
        new GetItemCommand({ TableName: tableName, Key: itemKey(clusterId, LEASE_SORT_KEY), ConsistentRead: true }),
      ),
    );
    if (item === undefined) return undefined;
    const lease = parseLease(item);
    if (typeof lease === 'string') {
      throw new StoreError(`sync lease of cluster "${clusterId}" in table "${tableName}" is malformed: ${lease}`, {
        context: { tableName, clusterId, problem: lease },
      });
    }
    return lease;
  }

  async function acquire(clusterId: string, owner: string): Promise<SyncLeaseAcquisition> {
    checkedClusterId(clusterId);
    checkedOwner(owner);
    for (let attempt = 1; attempt <= ACQUIRE_ATTEMPTS; attempt += 1) {
      const now = clock();
      const holderId = randomBytes(8).toString('hex');
      // An expiry beyond trustedExpiry was set by a clock running ahead: honoured, it would block every sync until then.
      const previous = await update(clusterId, {
        update:
          'SET #holderId = :holderId, #owner = :owner, #acquiredAt = :now, #expires = :expires REMOVE #renewedAt, #releasedAt ADD #acquisitions :one',
        condition: 'attribute_not_exists(#expires) OR #expires < :nowMs OR #expires > :trustedExpiry',
        values: {
          ':holderId': holderId,
          ':owner': owner,
          ':now': isoOf(now),
          ':nowMs': now,
          ':expires': now + durationMs,
          ':trustedExpiry': trustedExpiry(now),
          ':one': 1,
        },
      });
      if (previous !== undefined) {
        const lease = { clusterId, holderId, owner, expiresAt: isoOf(now + durationMs) };
        const fields = fieldsOf(previous);
        const expiry = integerField(fields, 'leaseExpiresAt');
        if (expiry === undefined || expiry <= trustedExpiry(now)) return { acquired: true, lease };
        const untrusted = {
          owner: stringField(fields, 'owner') ?? 'an unknown holder',
          expiresAt: isoOf(expiry),
          aheadMs: expiry - now - durationMs,
        };
        return { acquired: true, lease, untrusted };
      }
      const holder = await read(clusterId);
      const expiry = holder === undefined ? Number.NaN : Date.parse(holder.expiresAt);
      const later = clock();
      if (holder !== undefined && expiry >= later && expiry <= trustedExpiry(later)) return { acquired: false, holder };
    }
    throw new StoreError(
      `the sync lease of cluster "${clusterId}" in table "${tableName}" changed hands ${ACQUIRE_ATTEMPTS} times while it was being taken`,
      { context: { tableName, clusterId, reason: 'leaseContended' } },
    );
  }

  /** The StoreError of a renew by a sync that no longer holds the lease, naming who does. */
  async function lost(lease: HeldSyncLease): Promise<StoreError> {
    const current = await read(lease.clusterId).catch(() => undefined);
    const what =
      current === undefined
        ? 'its item cannot be read'
        : current.holderId === lease.holderId
          ? 'it was released'
          : `${current.owner} took it (until ${current.expiresAt})`;
    return new StoreError(
      `the sync lease of cluster "${lease.clusterId}" in table "${tableName}" is no longer held by ${lease.owner}: ${what}`,
      {
        context: {
          tableName,
          clusterId: lease.clusterId,
          reason: 'leaseLost',
          ...(current === undefined ? {} : { holder: current.owner, expiresAt: current.expiresAt }),
        },
      },
    );
  }

  async function renew(lease: HeldSyncLease): Promise<HeldSyncLease> {
    checkedClusterId(lease.clusterId);
    const now = clock();
    const renewed = await update(lease.clusterId, {
      update: 'SET #expires = :expires, #renewedAt = :now',
      condition: '#holderId = :holderId AND attribute_not_exists(#releasedAt)',
      values: { ':holderId': lease.holderId, ':now': isoOf(now), ':expires': now + durationMs },
    });
    if (renewed === undefined) throw await lost(lease);
    return { ...lease, expiresAt: isoOf(now + durationMs) };
  }

  async function release(lease: HeldSyncLease): Promise<boolean> {
    checkedClusterId(lease.clusterId);
    // Expiry 0 rather than now: a writer whose clock is behind the holder's can take a released lease at once.
    const released = await update(lease.clusterId, {
      update: 'SET #expires = :released, #releasedAt = :now',
      condition: '#holderId = :holderId AND attribute_not_exists(#releasedAt)',
      values: { ':holderId': lease.holderId, ':now': isoOf(clock()), ':released': 0 },
    });
    return released !== undefined;
  }

  return { acquire, renew, release, read };
}

/** The attribute name placeholders an expression uses (DynamoDB rejects unused ones). */
function namesIn(...expressions: readonly string[]): Record<string, string> {
  const text = expressions.join(' ');
  return Object.fromEntries(
    Object.entries(NAMES).filter(([placeholder]) => new RegExp(`${placeholder}\\b`).test(text)),
  );
}

export { createSyncLeaseStore };
export type { SyncLeaseStoreOptions };
