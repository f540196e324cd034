/**
 * The cluster binding of one cluster id (RULES_TABLE_LAYOUT.binding): which cluster the id stands for, by the uid of
 * that cluster's kube-system namespace, so that a sync of another cluster never publishes over its snapshot.
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { StoreError } from '../errors/index.ts';
import { CLUSTER_UID } from '../syntax/index.ts';
import {
  checkedClusterId,
  conditionalWrite,
  fieldsOf,
  itemKey,
  storeCall,
  stringField,
  toItem,
  type ClusterTable,
} from './items.ts';
import { BINDING_SORT_KEY } from './layout.ts';

/** The cluster a cluster id is bound to, and who bound it when. */
interface ClusterBinding {
  /** The metadata.uid of the bound cluster's kube-system namespace. */
  readonly clusterUid: string;
  /** When the id was bound, or last re-bound (ISO-8601). */
  readonly boundAt: string;
  /** The sync that bound it: `lambda:<request id>`, `cli:<host>:<pid>`. */
  readonly boundBy: string;
  /** The uid it was bound to before its last re-bind. */
  readonly previousUid?: string;
}

/** How a sync's cluster compares with the binding: bound to it (now or before), or bound to another cluster. */
type BindingCheck =
  | { readonly kind: 'bound'; readonly binding: ClusterBinding; readonly newly: boolean }
  | { readonly kind: 'other'; readonly binding: ClusterBinding };

/** What a re-bind found: the check once re-bound (or already bound to the new uid), or no binding at all. */
type RebindCheck = BindingCheck | { readonly kind: 'unbound' };

/** The binding of one cluster id in one table. */
interface ClusterBindingStore {
  /** The table the binding is in, for messages. */
  readonly tableName: string;
  /** The binding, read consistently; undefined while the id was never bound. */
  read(): Promise<ClusterBinding | undefined>;
  /** Binds the id to `clusterUid` when it is bound to nothing (one conditional write), and compares it otherwise. */
  bind(clusterUid: string, boundBy: string): Promise<BindingCheck>;
  /** Re-binds the id from `fromUid` to `toUid`, only while it is bound to `fromUid`; `other` names what it is bound to. */
  rebind(fromUid: string, toUid: string, boundBy: string): Promise<RebindCheck>;
}

/** The table a binding store writes, with its clock (epoch milliseconds) for boundAt. */
interface BindingTable extends ClusterTable {
  readonly clock: () => number;
}

const MAX_BOUND_BY_CHARS = 200;

function checkedUid(uid: string, what: string): string {
  if (!CLUSTER_UID.pattern.test(uid)) {
    throw new StoreError(`${what} is "${uid.slice(0, 80)}"; expected ${CLUSTER_UID.form}`, {
      context: { field: what },
    });
  }
  return uid;
}

function checkedBoundBy(boundBy: string): string {
  if (boundBy === '' || boundBy.length > MAX_BOUND_BY_CHARS || /[^\x20-\x7e]/.test(boundBy)) {
    throw new StoreError(`boundBy must be 1 to ${MAX_BOUND_BY_CHARS} printable ASCII characters`);
  }
  return boundBy;
}

/** The binding in an item's fields; a StoreError when it is malformed (a binding that cannot be read binds nothing). */
function parseBinding(table: BindingTable, fields: Readonly<Record<string, unknown>>): ClusterBinding {
  const { tableName, clusterId } = table;
  const clusterUid = stringField(fields, 'clusterUid');
  const boundAt = stringField(fields, 'boundAt');
  const boundBy = stringField(fields, 'boundBy');
  const previousUid = stringField(fields, 'previousUid');
  const uids = [clusterUid, previousUid].filter((uid) => uid !== undefined);
  if (
    clusterUid === undefined ||
    boundAt === undefined ||
    boundBy === undefined ||
    !uids.every((uid) => CLUSTER_UID.pattern.test(uid))
  ) {
    throw new StoreError(
      `the cluster binding of cluster "${clusterId}" in table "${tableName}" is malformed: expected clusterUid (${CLUSTER_UID.form}), boundAt and boundBy`,
      { context: { tableName, clusterId } },
    );
  }
  return { clusterUid, boundAt, boundBy, ...(previousUid === undefined ? {} : { previousUid }) };
}

async function read(table: BindingTable): Promise<ClusterBinding | undefined> {
  const { client, tableName, clusterId } = table;
  checkedClusterId(clusterId);
  // Consistent: a binding written a moment ago by another sync must be seen before this one publishes.
  const { Item: item } = await storeCall(tableName, 'GetItem', clusterId, () =>
    client.send(
      new GetItemCommand({ TableName: tableName, Key: itemKey(clusterId, BINDING_SORT_KEY), ConsistentRead: true }),
    ),
  );
  return item === undefined ? undefined : parseBinding(table, fieldsOf(item));
}

function compare(binding: ClusterBinding, clusterUid: string): BindingCheck {
  return binding.clusterUid === clusterUid ? { kind: 'bound', binding, newly: false } : { kind: 'other', binding };
}

/** One conditional UpdateItem of the binding; the binding written, or undefined when its condition failed. */
async function writeBinding(
  table: BindingTable,
  binding: ClusterBinding,
  condition: { readonly expression: string; readonly values?: Readonly<Record<string, string>> },
): Promise<ClusterBinding | undefined> {
  const { client, tableName, clusterId } = table;
  const set = ['clusterUid = :uid', 'boundAt = :at', 'boundBy = :by'];
  if (binding.previousUid !== undefined) set.push('previousUid = :previous');
  const written = await conditionalWrite(tableName, 'UpdateItem', clusterId, () =>
    client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: itemKey(clusterId, BINDING_SORT_KEY),
        UpdateExpression: `SET ${set.join(', ')}`,
        ConditionExpression: condition.expression,
        ExpressionAttributeValues: toItem({
          ':uid': binding.clusterUid,
          ':at': binding.boundAt,
          ':by': binding.boundBy,
          ...(binding.previousUid === undefined ? {} : { ':previous': binding.previousUid }),
          ...condition.values,
        }),
      }),
    ),
  );
  return written === undefined ? undefined : binding;
}

/** The binding as it is after a lost race: it must exist, since only a write can have failed the condition. */
async function readAfterRace(table: BindingTable): Promise<ClusterBinding> {
  const binding = await read(table);
  if (binding === undefined) {
    const { tableName, clusterId } = table;
    throw new StoreError(
      `the cluster binding of cluster "${clusterId}" in table "${tableName}" changed while it was written; sync again`,
      { context: { tableName, clusterId } },
    );
  }
  return binding;
}

async function bind(table: BindingTable, clusterUid: string, boundBy: string): Promise<BindingCheck> {
  checkedUid(clusterUid, 'clusterUid');
  checkedBoundBy(boundBy);
  const current = await read(table);
  if (current !== undefined) return compare(current, clusterUid);
  const binding = { clusterUid, boundAt: new Date(table.clock()).toISOString(), boundBy };
  const written = await writeBinding(table, binding, { expression: 'attribute_not_exists(clusterUid)' });
  if (written !== undefined) return { kind: 'bound', binding: written, newly: true };
  return compare(await readAfterRace(table), clusterUid);
}

async function rebind(table: BindingTable, fromUid: string, toUid: string, boundBy: string): Promise<RebindCheck> {
  checkedUid(fromUid, 'the uid to re-bind from');
  checkedUid(toUid, 'clusterUid');
  checkedBoundBy(boundBy);
  const current = await read(table);
  if (current === undefined) return { kind: 'unbound' };
  if (current.clusterUid !== fromUid) return compare(current, toUid);
  const binding: ClusterBinding = {
    clusterUid: toUid,
    boundAt: new Date(table.clock()).toISOString(),
    boundBy,
    previousUid: fromUid,
  };
  const written = await writeBinding(table, binding, {
    expression: 'clusterUid = :from',
    values: { ':from': fromUid },
  });
  if (written !== undefined) return { kind: 'bound', binding: written, newly: true };
  return compare(await readAfterRace(table), toUid);
}

/** The binding store of one cluster's table. */
function createClusterBindingStore(table: BindingTable): ClusterBindingStore {
  return {
    tableName: table.tableName,
    read: () => read(table),
    bind: (clusterUid, boundBy) => bind(table, clusterUid, boundBy),
    rebind: (fromUid, toUid, boundBy) => rebind(table, fromUid, toUid, boundBy),
  };
}

export { createClusterBindingStore };
export type { BindingCheck, ClusterBindingStore, RebindCheck };
