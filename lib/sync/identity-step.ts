/**
 * The identity step of a sync: one cluster per cluster id. The cluster's kube-system uid is read before the list and,
 * right before the publish, checked against the cluster id's binding in the table: bound on the first publish (also a
 * table whose snapshots predate bindings), re-bound only on purpose (rebindFrom names the uid it is bound to), and any
 * other cluster refused, so that its rules never replace the bound cluster's snapshot.
 */
import { ClusterError } from '../errors/index.ts';
import type { BindingCheck, ClusterBindingStore, RebindCheck } from '../store/index.ts';

/** How a sync binds its cluster id to its cluster. */
interface SyncBinding {
  /** The cluster id's binding (openRulesTable's bindings, bound to the same cluster id). */
  readonly store: Pick<ClusterBindingStore, 'bind' | 'rebind' | 'tableName'>;
  /** Who binds, recorded as boundBy: `lambda:<request id>`, `cli:<host>:<pid>`. */
  readonly owner: string;
  /** A re-bind on purpose: the uid the cluster id is bound to now, which this sync's cluster replaces. */
  readonly rebindFrom?: string;
}

/** How this sync found the binding: made it now (the cluster id's first publish), re-bound it now, or as it was. */
type BindingChange = 'bound' | 'rebound' | 'unchanged';

/** Where the message about a binding points for the re-bind. */
const REBIND_DOC = 'docs/operations.md, "One cluster per cluster id"';

/** A bind or re-bind asked for: the cluster id and its table, this cluster's uid, and the uid a re-bind names. */
interface BindingAttempt {
  readonly clusterId: string;
  readonly tableName: string;
  readonly clusterUid: string;
  readonly rebindFrom: string | undefined;
}

/** The refusal of a cluster the cluster id is not bound to, naming both uids, the cluster id and the table. */
function refusal(
  { clusterId, tableName, clusterUid, rebindFrom }: BindingAttempt,
  found: Extract<BindingCheck, { kind: 'other' }> | Extract<RebindCheck, { kind: 'unbound' }>,
): ClusterError {
  const context = { reason: 'identityMismatch', clusterId, tableName, clusterUid };
  if (found.kind === 'unbound') {
    return new ClusterError(
      `refused to re-bind cluster "${clusterId}" in table "${tableName}": it is bound to no cluster yet, so there is nothing to re-bind from ${rebindFrom ?? ''}; sync without --rebind-from, which binds it to this cluster (kube-system uid ${clusterUid})`,
      { context },
    );
  }
  const bound = found.binding.clusterUid;
  const boundWhen = `bound ${found.binding.boundAt} by ${found.binding.boundBy}`;
  const named =
    rebindFrom === undefined
      ? ''
      : `; --rebind-from names ${rebindFrom}, which is not the uid it is bound to, so nothing was re-bound`;
  return new ClusterError(
    `refused to publish for cluster "${clusterId}" in table "${tableName}": the cluster id is bound to the cluster whose kube-system namespace has uid ${bound} (${boundWhen}), but this sync's cluster has kube-system uid ${clusterUid}${named}. ` +
      `Nothing was published; the snapshot of ${bound} stays. If this cluster replaces that one on purpose, re-bind with a kubeconfig of this cluster: podmutation sync --once --rebind-from ${bound} (${REBIND_DOC})`,
    { context: { ...context, boundUid: bound } },
  );
}

/**
 * Binds the cluster id to `clusterUid` when it is bound to nothing, re-binds it when `rebindFrom` names the uid it is
 * bound to, and otherwise requires it to be bound to `clusterUid`; rejects with a ClusterError (context.reason
 * `identityMismatch`) naming both uids, and with the store's error when the table cannot be read.
 */
async function confirmIdentity(binding: SyncBinding, clusterId: string, clusterUid: string): Promise<BindingChange> {
  const { store, owner, rebindFrom } = binding;
  const check =
    rebindFrom === undefined ? await store.bind(clusterUid, owner) : await store.rebind(rebindFrom, clusterUid, owner);
  if (check.kind !== 'bound') throw refusal({ clusterId, tableName: store.tableName, clusterUid, rebindFrom }, check);
  if (!check.newly) return 'unchanged';
  return check.binding.previousUid === undefined ? 'bound' : 'rebound';
}

export { confirmIdentity };
export type { BindingChange, SyncBinding };
