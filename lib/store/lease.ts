/** The sync lease of one cluster (RULES_TABLE_LAYOUT.lease): the one sync that may list and publish it now. */
import { integerOption } from '../config/index.ts';
import { randomBytes } from 'node:crypto';
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { MalformedInputError, StoreError } from '../errors/index.ts';
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
  type ClusterTable,
  type Item,
} from './items.ts';
import { LEASE_SORT_KEY } from './layout.ts';

/** The cluster's sync lease as stored: who holds it or last held it, and until when (by the holder's clock). */
interface SyncLeaseState {
  /** Random id of one acquisition; only it renews or releases the lease. */
  readonly holderId: string;
  /** Who took it, for people: `lambda:<request id>`, `cli:<host>:<pid>`. */
  readonly owner: string;
  /** ISO-8601 time of the acquisition. */
  readonly acquiredAt: string;
  /** ISO-8601 time after which another sync may take the lease; the epoch (1970) once released. */
  readonly expiresAt: string;
  /** ISO-8601 time of the release, when the holder released it. */
  readonly releasedAt?: string;
  /** How many times the lease was acquired, this holder included. */
  readonly acquisitions: number;
}

/** A lease this process holds: what renew and release need. */
interface HeldSyncLease {
  readonly clusterId: string;
  readonly holderId: string;
  readonly owner: string;
  /** ISO-8601 time the lease runs out unless renewed, by this holder's clock. */
  readonly expiresAt: string;
}

/** Result of `acquire`: the lease, or the state of the lease another sync holds. */
type SyncLeaseAcquisition =
  | {
      readonly acquired: true;
      readonly lease: HeldSyncLease;
      /** The lease taken over because its expiry lay too far ahead to be honoured: its holder's clock ran ahead. */
      readonly untrusted?: { readonly owner: string; readonly expiresAt: string; readonly aheadMs: number };
    }
  | { readonly acquired: false; readonly holder: SyncLeaseState };

/** The sync lease of one cluster: one sync at a time lists and publishes it. */
interface SyncLeaseStore {
  /**
   * Takes the lease when it was never taken, was released, expired by this writer's clock, or expires further ahead
   * than the lease's length plus MAX_CLOCK_SKEW_MS (a holder's clock ran ahead); else names the holder.
   */
  acquire(owner: string): Promise<SyncLeaseAcquisition>;
  /** Extends a held lease by the lease duration from now; StoreError (context.reason `leaseLost`) when another sync took it. */
  renew(lease: HeldSyncLease): Promise<HeldSyncLease>;
  /** Frees a held lease at once; false (and nothing written) when it was no longer this holder's. */
  release(lease: HeldSyncLease): Promise<boolean>;
  /** The lease item from a consistent read; undefined when the cluster's lease was never taken. */
  read(): Promise<SyncLeaseState | undefined>;
}

/** A cluster's lease item in one table, with the lease's length and the clock that judges expiries. */
interface LeaseTable extends ClusterTable {
  /** Epoch milliseconds; expiries are written and judged by this clock. */
  readonly clock: () => number;
  readonly durationMs: number;
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

/** The lease's duration option, or its default; a ConfigurationError names it and its range. */
function leaseDurationSeconds(value: number | undefined): number {
  return integerOption(value, 'sync lease option durationSeconds', {
    fallback: DEFAULT_DURATION_SECONDS,
    minimum: MIN_DURATION_SECONDS,
    maximum: MAX_DURATION_SECONDS,
  });
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

/** One conditional UpdateItem of the lease item: the attributes it changed, as they were; undefined when its condition failed. */
async function update(
  table: LeaseTable,
  expressions: { update: string; condition: string; values: Readonly<Record<string, unknown>> },
): Promise<Item | undefined> {
  const { client, tableName, clusterId } = table;
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
function trustedExpiry(table: LeaseTable, now: number): number {
  return now + table.durationMs + MAX_CLOCK_SKEW_MS;
}

/** The lease item from a consistent read. */
async function readLease(table: LeaseTable): Promise<SyncLeaseState | undefined> {
  const { client, tableName, clusterId } = table;
  checkedClusterId(clusterId);
  const { Item: item } = await storeCall(tableName, 'GetItem', clusterId, () =>
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

/** One attempt to take the lease: the acquisition, or undefined when another holder had it at the write. */
async function tryAcquire(table: LeaseTable, owner: string): Promise<SyncLeaseAcquisition | undefined> {
  const { clusterId, durationMs } = table;
  const now = table.clock();
  const holderId = randomBytes(8).toString('hex');
  // An expiry beyond trustedExpiry was set by a clock running ahead: honoured, it would block every sync until then.
  const previous = await update(table, {
    update:
      'SET #holderId = :holderId, #owner = :owner, #acquiredAt = :now, #expires = :expires REMOVE #renewedAt, #releasedAt ADD #acquisitions :one',
    condition: 'attribute_not_exists(#expires) OR #expires < :nowMs OR #expires > :trustedExpiry',
    values: {
      ':holderId': holderId,
      ':owner': owner,
      ':now': isoOf(now),
      ':nowMs': now,
      ':expires': now + durationMs,
      ':trustedExpiry': trustedExpiry(table, now),
      ':one': 1,
    },
  });
  if (previous === undefined) return undefined;
  const lease = { clusterId, holderId, owner, expiresAt: isoOf(now + durationMs) };
  const fields = fieldsOf(previous);
  const expiry = integerField(fields, 'leaseExpiresAt');
  if (expiry === undefined || expiry <= trustedExpiry(table, now)) return { acquired: true, lease };
  const untrusted = {
    owner: stringField(fields, 'owner') ?? 'an unknown holder',
    expiresAt: isoOf(expiry),
    aheadMs: expiry - now - durationMs,
  };
  return { acquired: true, lease, untrusted };
}

/** Takes the lease, or names its holder; a few rounds settle a race with a lease freed meanwhile. */
async function acquire(table: LeaseTable, owner: string): Promise<SyncLeaseAcquisition> {
  const { tableName, clusterId } = table;
  checkedClusterId(clusterId);
  checkedOwner(owner);
  for (let attempt = 1; attempt <= ACQUIRE_ATTEMPTS; attempt += 1) {
    const acquisition = await tryAcquire(table, owner);
    if (acquisition !== undefined) return acquisition;
    const holder = await readLease(table);
    const expiry = holder === undefined ? Number.NaN : Date.parse(holder.expiresAt);
    const later = table.clock();
    if (holder !== undefined && expiry >= later && expiry <= trustedExpiry(table, later))
      return { acquired: false, holder };
  }
  throw new StoreError(
    `the sync lease of cluster "${clusterId}" in table "${tableName}" changed hands ${ACQUIRE_ATTEMPTS} times while it was being taken`,
    { context: { tableName, clusterId, reason: 'leaseContended' } },
  );
}

/** The StoreError of a renew by a sync that no longer holds the lease, naming who does. */
async function lost(table: LeaseTable, lease: HeldSyncLease): Promise<StoreError> {
  const { tableName } = table;
  const current = await readLease(table).catch(() => undefined);
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

/** Extends a held lease by its duration from now. */
async function renew(table: LeaseTable, lease: HeldSyncLease): Promise<HeldSyncLease> {
  checkedClusterId(lease.clusterId);
  const held = { ...table, clusterId: lease.clusterId };
  const now = table.clock();
  const renewed = await update(held, {
    update: 'SET #expires = :expires, #renewedAt = :now',
    condition: '#holderId = :holderId AND attribute_not_exists(#releasedAt)',
    values: { ':holderId': lease.holderId, ':now': isoOf(now), ':expires': now + table.durationMs },
  });
  if (renewed === undefined) throw await lost(held, lease);
  return { ...lease, expiresAt: isoOf(now + table.durationMs) };
}

/** Frees a held lease; false when it was no longer this holder's. */
async function release(table: LeaseTable, lease: HeldSyncLease): Promise<boolean> {
  checkedClusterId(lease.clusterId);
  // Expiry 0 rather than now: a writer whose clock is behind the holder's can take a released lease at once.
  const released = await update(
    { ...table, clusterId: lease.clusterId },
    {
      update: 'SET #expires = :released, #releasedAt = :now',
      condition: '#holderId = :holderId AND attribute_not_exists(#releasedAt)',
      values: { ':holderId': lease.holderId, ':now': isoOf(table.clock()), ':released': 0 },
    },
  );
  return released !== undefined;
}

/** The sync lease store bound to one cluster's table. */
function createSyncLeaseStore(table: LeaseTable): SyncLeaseStore {
  return {
    acquire: (owner) => acquire(table, owner),
    renew: (lease) => renew(table, lease),
    release: (lease) => release(table, lease),
    read: () => readLease(table),
  };
}

/** The attribute name placeholders an expression uses (DynamoDB rejects unused ones). */
function namesIn(...expressions: readonly string[]): Record<string, string> {
  const text = expressions.join(' ');
  return Object.fromEntries(
    Object.entries(NAMES).filter(([placeholder]) => new RegExp(`${placeholder}\\b`).test(text)),
  );
}

export { createSyncLeaseStore, leaseDurationSeconds };
export type { HeldSyncLease, SyncLeaseAcquisition, SyncLeaseStore };
