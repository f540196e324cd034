import {
  checkRequestTimeout,
  createClusterAccess,
  getJson,
  hasReason,
  send,
  sendWrite,
  type ConnectionOptions,
} from './access.ts';
import type { ClusterConfig } from './config.ts';
import type { Connection } from './connection.ts';
import type { ClusterOperation } from './failure.ts';

/** The workload kinds `podmutation rollout` restarts through their pod template. */
type RolloutWorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Rollout';

/** What `podmutation rollout` reads and writes in the cluster; every answer is untrusted JSON, read by lib/rollout. */
interface RolloutTarget {
  /** The workload as the API server returns it. */
  getWorkload(kind: RolloutWorkloadKind, namespace: string, name: string): Promise<unknown>;
  /** A strategic merge patch (a JSON merge patch for a Rollout, a custom resource) of the workload. */
  patchWorkload(kind: RolloutWorkloadKind, namespace: string, name: string, patch: object): Promise<void>;
  /** The Pod, or undefined when it does not exist. */
  getPod(namespace: string, name: string): Promise<unknown>;
  /** Deletes the Pod, only if its uid is still `uid` (a recreated Pod of the same name is left alone). */
  deletePod(namespace: string, name: string, uid: string): Promise<void>;
  /** The namespace's PodDisruptionBudgets (policy/v1), as listed. */
  listPodDisruptionBudgets(namespace: string): Promise<readonly unknown[]>;
}

/** Collaborators and tuning of a RolloutTarget. */
interface RolloutTargetOptions extends ConnectionOptions {
  /** Timeout of each request; default 30 000 ms. */
  readonly requestTimeoutMs?: number;
}

const PATHS: Readonly<Record<RolloutWorkloadKind, string>> = {
  Deployment: '/apis/apps/v1/namespaces/{ns}/deployments',
  StatefulSet: '/apis/apps/v1/namespaces/{ns}/statefulsets',
  DaemonSet: '/apis/apps/v1/namespaces/{ns}/daemonsets',
  Rollout: '/apis/argoproj.io/v1alpha1/namespaces/{ns}/rollouts',
};

// Custom resources take no strategic merge patch (Kubernetes docs, "Update API Objects in Place Using kubectl patch").
const STRATEGIC = 'application/strategic-merge-patch+json';
const MERGE = 'application/merge-patch+json';

/** The RolloutTarget of the configured cluster, connecting as createWorkloadObjectSource does. */
function createRolloutTarget(config: ClusterConfig, options: RolloutTargetOptions = {}): RolloutTarget {
  const timeoutMs = checkRequestTimeout(options.requestTimeoutMs ?? 30_000);
  const access = createClusterAccess(
    config,
    { ...options, requestTimeoutMs: timeoutMs },
    (connection: Connection) => connection,
  );
  const operation = (
    connection: Connection,
    action: string,
    notFoundHint: string,
    context: Record<string, unknown>,
  ): ClusterOperation => ({
    action,
    notFoundHint,
    target: connection.server,
    context,
  });
  const read = (action: string, hint: string, path: string, query: Record<string, string> = {}) =>
    access.run(action, (connection) =>
      send(operation(connection, action, hint, { operation: 'get', path }), timeoutMs, (request) =>
        getJson(connection, path, query, request),
      ),
    );
  const workloadPath = (kind: RolloutWorkloadKind, namespace: string, name: string) =>
    `${PATHS[kind].replace('{ns}', encodeURIComponent(namespace))}/${encodeURIComponent(name)}`;

  return {
    getWorkload(kind, namespace, name) {
      return read(
        `reading ${kind} ${namespace}/${name}`,
        `${kind} ${namespace}/${name} does not exist (deleted since the report?)`,
        workloadPath(kind, namespace, name),
      );
    },
    patchWorkload(kind, namespace, name, patch) {
      const action = `patching ${kind} ${namespace}/${name}`;
      const path = workloadPath(kind, namespace, name);
      return access.run(action, (connection) =>
        sendWrite(
          operation(connection, action, `${kind} ${namespace}/${name} does not exist (deleted since the report?)`, {
            operation: 'patch',
            path,
          }),
          timeoutMs,
          connection,
          {
            path,
            query: { fieldManager: 'podmutation-rollout' },
            method: 'PATCH',
            contentType: kind === 'Rollout' ? MERGE : STRATEGIC,
          },
          patch,
        ),
      );
    },
    async getPod(namespace, name) {
      try {
        return await read(
          `reading Pod ${namespace}/${name}`,
          `Pod ${namespace}/${name} does not exist`,
          `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
        );
      } catch (error) {
        if (hasReason(error, 'notFound')) return undefined;
        throw error;
      }
    },
    deletePod(namespace, name, uid) {
      const action = `deleting Pod ${namespace}/${name}`;
      const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
      return access.run(action, (connection) =>
        sendWrite(
          operation(connection, action, `Pod ${namespace}/${name} does not exist`, { operation: 'delete', path }),
          timeoutMs,
          connection,
          { path, query: {}, method: 'DELETE', contentType: 'application/json' },
          { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } },
        ),
      );
    },
    async listPodDisruptionBudgets(namespace) {
      const path = `/apis/policy/v1/namespaces/${encodeURIComponent(namespace)}/poddisruptionbudgets`;
      const list = await read(
        `listing poddisruptionbudgets.policy in namespace ${namespace}`,
        'the API server does not serve policy/v1 poddisruptionbudgets',
        path,
      );
      const items = (list as { items?: unknown }).items;
      return Array.isArray(items) ? (items as unknown[]) : [];
    },
  };
}

export { createRolloutTarget };
export type { RolloutTarget, RolloutTargetOptions, RolloutWorkloadKind };
