/** The placement policies of one cluster in one item (RULES_TABLE_LAYOUT.placements), changed optimistically. */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  type PutItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { MalformedInputError, messageOf, StoreError } from '../errors/index.ts';
import { parsePlacementPolicy, workloadKey, type PlacementPolicy } from '../placement/index.ts';
import { canonicalJson } from '../json/index.ts';
import { compareCodeUnits } from '../text/index.ts';
import {
  CONTENT_HASH_PATTERN,
  checkedClusterId,
  fieldsOf,
  integerField,
  itemKey,
  stringField,
  toItem,
  type ClusterTable,
  type Item,
} from './items.ts';
import { PARTITION_KEY, PLACEMENT_SORT_KEY } from './layout.ts';

/** Which placement set is current for a cluster: its version (from 1, moving on every change) and content hash. */
interface PlacementVersion {
  readonly version: number;
  readonly contentHash: string;
}

/** Every placement policy of a cluster, sorted by workload (namespace, kind, name), with its version. */
interface PlacementSet extends PlacementVersion {
  readonly policies: readonly PlacementPolicy[];
  /** ISO-8601 time of the write that made this version. */
  readonly updatedAt: string;
}

/** Result of a placement write: whether it changed the set, and the set's version after it (0 when none exists). */
interface PlacementWrite {
  readonly changed: boolean;
  readonly version: number;
}

/** The placement policies of one cluster. */
interface PlacementStore {
  /** Adds or replaces the policy of its workload; unchanged (no write) when the same policy is already set. */
  setPlacement(policy: PlacementPolicy): Promise<PlacementWrite>;
  /** Removes the workload's policy; `changed` is false when it had none. */
  deletePlacement(namespace: string, kind: string, name: string): Promise<PlacementWrite>;
  /** Replaces the whole set in one write (for publishing a file); duplicate workloads are malformed input. */
  replacePlacements(policies: readonly PlacementPolicy[]): Promise<PlacementWrite>;
  /** The workload's policy from a consistent read; undefined when it has none. */
  getPlacement(namespace: string, kind: string, name: string): Promise<PlacementPolicy | undefined>;
  /** Every policy of the cluster from a consistent read, sorted by workload; empty when none are set. */
  listPlacements(): Promise<readonly PlacementPolicy[]>;
  /** The current version in one eventually consistent GetItem projecting only the version; undefined when none was set. */
  readPlacementVersion(): Promise<PlacementVersion | undefined>;
  /** The whole set from a consistent read, each policy validated again; undefined when none was set. */
  readPlacements(): Promise<PlacementSet | undefined>;
}

/** A cluster's placement item in one table, with the clock of updatedAt and the bound on a contended write. */
interface PlacementTable extends ClusterTable {
  readonly clock: () => number;
  readonly maxWriteAttempts: number;
}

/** What a read of the placement item fetches. */
interface ItemRead {
  readonly consistent: boolean;
  /** Project the version and hash only (for the endpoint's refresh). */
  readonly versionOnly: boolean;
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
  return compareCodeUnits(policyKey(left), policyKey(right));
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

function failed(table: PlacementTable, operation: string, error: unknown): StoreError {
  const { tableName, clusterId } = table;
  return new StoreError(
    `DynamoDB ${operation} of the placement policies on table "${tableName}" for cluster "${clusterId}" failed: ${messageOf(error)}`,
    { cause: error, context: { tableName, clusterId, operation } },
  );
}

function unusable(table: PlacementTable, problem: string, cause?: unknown): StoreError {
  const { tableName, clusterId } = table;
  return new StoreError(
    `placement policies of cluster "${clusterId}" in table "${tableName}" are unusable: ${problem}`,
    {
      cause,
      context: { tableName, clusterId, problem },
    },
  );
}

/** Canonical form of a set; a StoreError when it would not fit one item. */
function encode(table: PlacementTable, policies: readonly PlacementPolicy[]): EncodedSet {
  const { tableName, clusterId } = table;
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

async function getItem(table: PlacementTable, read: ItemRead): Promise<Item | undefined> {
  const { client, tableName, clusterId } = table;
  try {
    const { Item: item } = await client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: itemKey(clusterId, PLACEMENT_SORT_KEY),
        ConsistentRead: read.consistent,
        // A projection trims the response, not the read capacity: DynamoDB charges by the size of the whole item.
        ...(read.versionOnly
          ? { ProjectionExpression: '#version, contentHash', ExpressionAttributeNames: { '#version': 'version' } }
          : {}),
      }),
    );
    return item;
  } catch (error) {
    throw failed(table, 'GetItem', error);
  }
}

async function readVersion(
  table: PlacementTable,
  consistency: { consistent: boolean },
): Promise<PlacementVersion | undefined> {
  const item = await getItem(table, { ...consistency, versionOnly: true });
  if (item === undefined) return undefined;
  const version = parseVersion(item);
  if (typeof version === 'string') throw unusable(table, version);
  return version;
}

async function readSet(table: PlacementTable): Promise<PlacementSet | undefined> {
  const item = await getItem(table, { consistent: true, versionOnly: false });
  if (item === undefined) return undefined;
  const set = parseSet(item);
  if ('problem' in set) throw unusable(table, set.problem, set.cause);
  return set;
}

/** Puts the next version if the set is still at `current`; false when another writer changed it first. */
async function putNext(
  table: PlacementTable,
  current: PlacementVersion | undefined,
  encoded: EncodedSet,
): Promise<boolean> {
  const { client, tableName, clusterId } = table;
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
          ...itemKey(clusterId, PLACEMENT_SORT_KEY),
          ...toItem({
            version: (current?.version ?? 0) + 1,
            contentHash: encoded.contentHash,
            policies: encoded.json,
            updatedAt: new Date(table.clock()).toISOString(),
          }),
        },
        ...condition,
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw failed(table, 'PutItem', error);
  }
}

/** The optimistic write: plan from a fresh read, put it on the condition nothing changed since, retry a lost race. */
async function revise(table: PlacementTable, plan: () => Promise<WritePlan>): Promise<PlacementWrite> {
  const { tableName, clusterId, maxWriteAttempts } = table;
  for (let attempt = 1; attempt <= maxWriteAttempts; attempt += 1) {
    const { current, next } = await plan();
    if (next === undefined) return { changed: false, version: current?.version ?? 0 };
    const encoded = encode(table, next);
    if (current === undefined ? encoded.policies.length === 0 : encoded.contentHash === current.contentHash) {
      return { changed: false, version: current?.version ?? 0 };
    }
    if (await putNext(table, current, encoded)) return { changed: true, version: (current?.version ?? 0) + 1 };
    if (attempt < maxWriteAttempts) await sleep(RETRY_BASE_MS * attempt * (1 + Math.random()));
  }
  throw new StoreError(
    `placement policies of cluster "${clusterId}" in table "${tableName}" were changed by another writer before each of ${maxWriteAttempts} attempts to write them; nothing was written, try again`,
    { context: { tableName, clusterId, attempts: maxWriteAttempts } },
  );
}

async function setPlacement(table: PlacementTable, policy: PlacementPolicy): Promise<PlacementWrite> {
  checkedClusterId(table.clusterId);
  const checked = parsePlacementPolicy(policy);
  return revise(table, async () => {
    const current = await readSet(table);
    const others = (current?.policies ?? []).filter((existing) => policyKey(existing) !== policyKey(checked));
    return { current, next: [...others, checked] };
  });
}

async function deletePlacement(
  table: PlacementTable,
  namespace: string,
  kind: string,
  name: string,
): Promise<PlacementWrite> {
  checkedClusterId(table.clusterId);
  const deleted = workloadKey(namespace, kind, name);
  return revise(table, async () => {
    const current = await readSet(table);
    const policies = current?.policies ?? [];
    const kept = policies.filter((existing) => policyKey(existing) !== deleted);
    return { current, next: kept.length === policies.length ? undefined : kept };
  });
}

async function replacePlacements(table: PlacementTable, policies: readonly PlacementPolicy[]): Promise<PlacementWrite> {
  const { clusterId } = table;
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
  return revise(table, async () => ({ current: await readVersion(table, { consistent: true }), next: checked }));
}

async function getPlacement(
  table: PlacementTable,
  namespace: string,
  kind: string,
  name: string,
): Promise<PlacementPolicy | undefined> {
  checkedClusterId(table.clusterId);
  const wanted = workloadKey(namespace, kind, name);
  return (await readSet(table))?.policies.find((policy) => policyKey(policy) === wanted);
}

/** The placement store bound to one cluster's table. */
function createPlacementStore(table: PlacementTable): PlacementStore {
  const checked = async <T>(read: () => Promise<T>): Promise<T> => {
    checkedClusterId(table.clusterId);
    return read();
  };
  return {
    setPlacement: (policy) => setPlacement(table, policy),
    deletePlacement: (namespace, kind, name) => deletePlacement(table, namespace, kind, name),
    replacePlacements: (policies) => replacePlacements(table, policies),
    getPlacement: (namespace, kind, name) => getPlacement(table, namespace, kind, name),
    listPlacements: () => checked(async () => (await readSet(table))?.policies ?? []),
    readPlacementVersion: () => checked(() => readVersion(table, { consistent: false })),
    readPlacements: () => checked(() => readSet(table)),
  };
}

export { createPlacementStore, DEFAULT_MAX_WRITE_ATTEMPTS };
export type { PlacementStore, PlacementVersion };
