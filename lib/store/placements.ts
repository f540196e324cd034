/**
 * Placement policies in the rules table: one item per cluster (sk `placement#set`) holding the whole set as
 * canonical JSON (policies sorted by workload, object keys sorted), its sha256 and a version. A reader therefore
 * sees one whole set, never a mix, without transactions. A writer reads the item with ConsistentRead and puts the
 * next version on the condition that the version is still the one it read; a writer that lost the race re-reads
 * and tries again, a bounded number of times. One item keeps every change a single conditional write and every
 * refresh a single GetItem; its price is a bound: the JSON must stay within 350,000 bytes (the 400 KB item limit
 * less room for the other attributes; about 3,000 policies of typical names), and a larger set fails with a
 * StoreError instead of being split.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  type DynamoDBClient,
  type PutItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { ConfigurationError, MalformedInputError, messageOf, StoreError } from '../errors/index.ts';
import { parsePlacementPolicy, workloadKey, type PlacementPolicy } from '../placement/index.ts';
import { canonicalJson } from '../values/index.ts';
import {
  CONTENT_HASH_PATTERN,
  checkedClusterId,
  fieldsOf,
  integerField,
  itemKey,
  stringField,
  toItem,
  type Item,
} from './items.ts';
import { PARTITION_KEY, PLACEMENT_SORT_KEY } from './layout.ts';
import type { PlacementSet, PlacementStore, PlacementVersion, PlacementWrite } from './types.ts';

/** Options of a placement store over one table. */
interface PlacementStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Epoch milliseconds; drives updatedAt. */
  readonly clock?: () => number;
  /** Attempts of one write while other writers keep changing the set first (default 8, at most 100). */
  readonly maxWriteAttempts?: number;
}

/** The set as it will be stored: sorted policies, their canonical JSON and its hash. */
interface EncodedSet {
  readonly policies: readonly PlacementPolicy[];
  readonly json: string;
  readonly contentHash: string;
}

/** What one attempt of a write wants: the version it read, and the next set (undefined: nothing to write). */
interface WritePlan {
  readonly current: PlacementVersion | undefined;
  readonly next: readonly PlacementPolicy[] | undefined;
}

/** 350,000 bytes of JSON plus keys, hash, version and time stays far from the 400 KB item limit. */
const MAX_POLICIES_BYTES = 350_000;
const DEFAULT_MAX_WRITE_ATTEMPTS = 8;
// Pauses grow with the attempt and are jittered, so writers that collided do not collide again in lockstep.
const RETRY_BASE_MS = 10;

function policyKey(policy: PlacementPolicy): string {
  return workloadKey(policy.namespace, policy.kind, policy.name);
}

function byWorkload(left: PlacementPolicy, right: PlacementPolicy): number {
  const a = policyKey(left);
  const b = policyKey(right);
  return a < b ? -1 : a > b ? 1 : 0;
}

function hashOf(json: string): string {
  return `sha256:${createHash('sha256').update(json).digest('hex')}`;
}

/** The first workload named twice, if any. */
function duplicateWorkload(policies: readonly PlacementPolicy[]): string | undefined {
  const seen = new Set<string>();
  for (const policy of policies) {
    const key = policyKey(policy);
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return undefined;
}

/** The version and hash of an item, or what is wrong with them. */
function parseVersion(item: Item): PlacementVersion | string {
  const fields = fieldsOf(item);
  const version = integerField(fields, 'version');
  if (version === undefined || version < 1)
    return 'version must be a number attribute holding an integer of at least 1';
  const contentHash = stringField(fields, 'contentHash');
  if (contentHash === undefined || !CONTENT_HASH_PATTERN.test(contentHash)) {
    return 'contentHash must be a string attribute of the form sha256:<64 hex digits>';
  }
  return { version, contentHash };
}

/** The whole set of an item, each policy validated again, or what is wrong with it. */
function parseSet(item: Item): PlacementSet | { readonly problem: string; readonly cause?: unknown } {
  const head = parseVersion(item);
  if (typeof head === 'string') return { problem: head };
  const fields = fieldsOf(item);
  const json = stringField(fields, 'policies');
  if (json === undefined) return { problem: 'policies must be a string attribute holding a JSON array' };
  // Checked before parsing: a mismatch means the item was edited outside the store (or damaged).
  if (hashOf(json) !== head.contentHash) return { problem: `policies do not match contentHash ${head.contentHash}` };
  const updatedAt = stringField(fields, 'updatedAt');
  if (updatedAt === undefined) return { problem: 'updatedAt must be a string attribute' };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (cause) {
    return { problem: 'policies is not valid JSON', cause };
  }
  if (!Array.isArray(value)) return { problem: 'policies must be a JSON array' };
  const policies: PlacementPolicy[] = [];
  for (const [index, entry] of (value as readonly unknown[]).entries()) {
    try {
      policies.push(parsePlacementPolicy(entry, `stored policy ${index}`));
    } catch (cause) {
      return { problem: messageOf(cause), cause };
    }
  }
  const duplicate = duplicateWorkload(policies);
  if (duplicate !== undefined) return { problem: `workload ${duplicate} has more than one policy` };
  return { ...head, policies: policies.sort(byWorkload), updatedAt };
}

function integerOption(
  value: number | undefined,
  option: string,
  fallback: number,
  minimum: number,
  maximum: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum || value > maximum) {
    throw new ConfigurationError(
      `placement store option ${option} is ${value}; expected an integer from ${minimum} to ${maximum}`,
    );
  }
  return value;
}

/** A store of placement policies in one DynamoDB table; see the item layout above. */
function createPlacementStore(options: PlacementStoreOptions): PlacementStore {
  const { client, tableName } = options;
  const clock = options.clock ?? Date.now;
  const maxWriteAttempts = integerOption(
    options.maxWriteAttempts,
    'maxWriteAttempts',
    DEFAULT_MAX_WRITE_ATTEMPTS,
    1,
    100,
  );

  function failed(operation: string, clusterId: string, error: unknown): StoreError {
    return new StoreError(
      `DynamoDB ${operation} of the placement policies on table "${tableName}" for cluster "${clusterId}" failed: ${messageOf(error)}`,
      { cause: error, context: { tableName, clusterId, operation } },
    );
  }

  function unusable(clusterId: string, problem: string, cause?: unknown): StoreError {
    return new StoreError(
      `placement policies of cluster "${clusterId}" in table "${tableName}" are unusable: ${problem}`,
      {
        cause,
        context: { tableName, clusterId, problem },
      },
    );
  }

  const key = (clusterId: string): Item => itemKey(clusterId, PLACEMENT_SORT_KEY);

  /** Canonical form of a set; a StoreError when it would not fit one item. */
  function encode(clusterId: string, policies: readonly PlacementPolicy[]): EncodedSet {
    const sorted = [...policies].sort(byWorkload);
    const json = canonicalJson(sorted);
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > MAX_POLICIES_BYTES) {
      throw new StoreError(
        `placement policies of cluster "${clusterId}" would take ${bytes} bytes as JSON (${sorted.length} policies), above the limit of ${MAX_POLICIES_BYTES} bytes that keeps them in one DynamoDB item (400 KB); remove policies first`,
        { context: { tableName, clusterId, bytes, maximum: MAX_POLICIES_BYTES, policies: sorted.length } },
      );
    }
    return { policies: sorted, json, contentHash: hashOf(json) };
  }

  async function getItem(clusterId: string, consistent: boolean, versionOnly: boolean): Promise<Item | undefined> {
    try {
      const { Item: item } = await client.send(
        new GetItemCommand({
          TableName: tableName,
          Key: key(clusterId),
          ConsistentRead: consistent,
          // A projection trims the response, not the read capacity: DynamoDB charges by the size of the whole item.
          ...(versionOnly
            ? { ProjectionExpression: '#version, contentHash', ExpressionAttributeNames: { '#version': 'version' } }
            : {}),
        }),
      );
      return item;
    } catch (error) {
      throw failed('GetItem', clusterId, error);
    }
  }

  async function readVersion(clusterId: string, consistent: boolean): Promise<PlacementVersion | undefined> {
    const item = await getItem(clusterId, consistent, true);
    if (item === undefined) return undefined;
    const version = parseVersion(item);
    if (typeof version === 'string') throw unusable(clusterId, version);
    return version;
  }

  async function readSet(clusterId: string): Promise<PlacementSet | undefined> {
    const item = await getItem(clusterId, true, false);
    if (item === undefined) return undefined;
    const set = parseSet(item);
    if ('problem' in set) throw unusable(clusterId, set.problem, set.cause);
    return set;
  }

  /** Puts the next version if the set is still at `current`; false when another writer changed it first. */
  async function putNext(
    clusterId: string,
    current: PlacementVersion | undefined,
    encoded: EncodedSet,
  ): Promise<boolean> {
    const condition: Pick<
      PutItemCommandInput,
      'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'
    > =
      current === undefined
        ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PARTITION_KEY } }
        : {
            ConditionExpression: '#version = :version',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: toItem({ ':version': current.version }),
          };
    try {
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            ...key(clusterId),
            ...toItem({
              version: (current?.version ?? 0) + 1,
              contentHash: encoded.contentHash,
              policies: encoded.json,
              updatedAt: new Date(clock()).toISOString(),
            }),
          },
          ...condition,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw failed('PutItem', clusterId, error);
    }
  }

  /** The optimistic write: plan from a fresh read, put it on the condition nothing changed since, retry a lost race. */
  async function revise(clusterId: string, plan: () => Promise<WritePlan>): Promise<PlacementWrite> {
    for (let attempt = 1; attempt <= maxWriteAttempts; attempt += 1) {
      const { current, next } = await plan();
      if (next === undefined) return { changed: false, version: current?.version ?? 0 };
      const encoded = encode(clusterId, next);
      if (current === undefined ? encoded.policies.length === 0 : encoded.contentHash === current.contentHash) {
        return { changed: false, version: current?.version ?? 0 };
      }
      if (await putNext(clusterId, current, encoded)) return { changed: true, version: (current?.version ?? 0) + 1 };
      if (attempt < maxWriteAttempts) await sleep(RETRY_BASE_MS * attempt * (1 + Math.random()));
    }
    throw new StoreError(
      `placement policies of cluster "${clusterId}" in table "${tableName}" were changed by another writer before each of ${maxWriteAttempts} attempts to write them; nothing was written, try again`,
      { context: { tableName, clusterId, attempts: maxWriteAttempts } },
    );
  }

  async function setPlacement(clusterId: string, policy: PlacementPolicy): Promise<PlacementWrite> {
    checkedClusterId(clusterId);
    const checked = parsePlacementPolicy(policy);
    return revise(clusterId, async () => {
      const current = await readSet(clusterId);
      const others = (current?.policies ?? []).filter((existing) => policyKey(existing) !== policyKey(checked));
      return { current, next: [...others, checked] };
    });
  }

  async function deletePlacement(
    clusterId: string,
    namespace: string,
    kind: string,
    name: string,
  ): Promise<PlacementWrite> {
    checkedClusterId(clusterId);
    const deleted = workloadKey(namespace, kind, name);
    return revise(clusterId, async () => {
      const current = await readSet(clusterId);
      const policies = current?.policies ?? [];
      const kept = policies.filter((existing) => policyKey(existing) !== deleted);
      return { current, next: kept.length === policies.length ? undefined : kept };
    });
  }

  async function replacePlacements(clusterId: string, policies: readonly PlacementPolicy[]): Promise<PlacementWrite> {
    checkedClusterId(clusterId);
    const checked = policies.map((policy, index) => parsePlacementPolicy(policy, `placement policy ${index}`));
    const duplicate = duplicateWorkload(checked);
    if (duplicate !== undefined) {
      throw new MalformedInputError(
        `placement policies for cluster "${clusterId}" name workload ${duplicate} more than once`,
        {
          context: { clusterId, workload: duplicate },
        },
      );
    }
    // Only the version is needed: the new set does not depend on the old one, so even a damaged body is replaced.
    return revise(clusterId, async () => ({ current: await readVersion(clusterId, true), next: checked }));
  }

  async function getPlacement(
    clusterId: string,
    namespace: string,
    kind: string,
    name: string,
  ): Promise<PlacementPolicy | undefined> {
    checkedClusterId(clusterId);
    const wanted = workloadKey(namespace, kind, name);
    return (await readSet(clusterId))?.policies.find((policy) => policyKey(policy) === wanted);
  }

  async function listPlacements(clusterId: string): Promise<readonly PlacementPolicy[]> {
    checkedClusterId(clusterId);
    return (await readSet(clusterId))?.policies ?? [];
  }

  async function readPlacementVersion(clusterId: string): Promise<PlacementVersion | undefined> {
    checkedClusterId(clusterId);
    return readVersion(clusterId, false);
  }

  async function readPlacements(clusterId: string): Promise<PlacementSet | undefined> {
    checkedClusterId(clusterId);
    return readSet(clusterId);
  }

  return {
    setPlacement,
    deletePlacement,
    replacePlacements,
    getPlacement,
    listPlacements,
    readPlacementVersion,
    readPlacements,
  };
}

export { createPlacementStore };
export type { PlacementStoreOptions };
