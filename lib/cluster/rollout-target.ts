import {
  checkRequestTimeout,
  createClusterAccess,
  getJson,
  hasReason,
  send,
  sendWrite,
  type ClusterAccess,
  type ConnectionOptions,
} from './access.ts';
import type { ClusterConfig } from './config.ts';
import type { Connection } from './connection.ts';
import type { ClusterOperation } from './failure.ts';
import { ClusterError } from '../errors/index.ts';

/** The workload kinds `podmutation rollout` restarts through their pod template. */
type RolloutWorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Rollout';

/**
 * What the API server did with an eviction: the Pod evicted (deleted); refused (429: a PodDisruptionBudget allows no
 * disruption now, or has not been processed yet); the Pod gone (404); or replaced (409: its uid is not the
 * precondition's, so another incarnation of the name, which was left alone).
 */
type EvictionResult =
  | { readonly outcome: 'evicted' }
  | { readonly outcome: 'refused'; readonly message: string }
  | { readonly outcome: 'gone' }
  | { readonly outcome: 'replaced'; readonly message: string };

/** What `podmutation rollout` reads and writes in the cluster; every answer is untrusted JSON, read by lib/rollout. */
interface RolloutTarget {
  /** The workload as the API server returns it. */
  getWorkload(kind: RolloutWorkloadKind, namespace: string, name: string): Promise<unknown>;
  /** A strategic merge patch (a JSON merge patch for a Rollout, a custom resource) of the workload. */
  patchWorkload(kind: RolloutWorkloadKind, namespace: string, name: string, patch: object): Promise<void>;
  /** The Pod, or undefined when it does not exist. */
  getPod(namespace: string, name: string): Promise<unknown>;
  /**
   * Posts `eviction` (a policy/v1 Eviction, its deleteOptions preconditioned on the uid to delete) to the Pod's eviction
   * subresource, where the API server checks the Pod's PodDisruptionBudgets; other failures reject with a ClusterError.
   */
  evictPod(namespace: string, name: string, eviction: object): Promise<EvictionResult>;
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

type WriteTarget = Parameters<typeof sendWrite>[1];

/** The two requests the target makes: a read of JSON, and a write whose answer is only checked. */
interface Requests {
  readonly read: (action: string, notFoundHint: string, path: string) => Promise<unknown>;
  readonly write: (action: string, notFoundHint: string, target: WriteTarget, body: unknown) => Promise<void>;
}

function requestsOf(access: ClusterAccess<Connection>, timeoutMs: number): Requests {
  const operation = (connection: Connection, action: string, notFoundHint: string, context: Record<string, unknown>) =>
    ({ action, notFoundHint, target: connection.server, context }) satisfies ClusterOperation;
  return {
    read: (action, hint, path) =>
      access.run(action, (connection) =>
        send(operation(connection, action, hint, { operation: 'get', path }), timeoutMs, (request) =>
          getJson(connection, path, {}, request),
        ),
      ),
    write: (action, hint, target, body) =>
      access.run(action, (connection) =>
        sendWrite(
          {
            operation: operation(connection, action, hint, {
              operation: target.method.toLowerCase(),
              path: target.path,
            }),
            timeoutMs,
            connection,
          },
          target,
          body,
        ),
      ),
  };
}

function workloadPath(kind: RolloutWorkloadKind, namespace: string, name: string): string {
  return `${PATHS[kind].replace('{ns}', encodeURIComponent(namespace))}/${encodeURIComponent(name)}`;
}

function podPath(namespace: string, name: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
}

const GONE_SINCE_REPORT = 'does not exist (deleted since the report?)';

/** The RolloutTarget of the configured cluster, connecting as createWorkloadObjectSource does. */
function createRolloutTarget(config: ClusterConfig, options: RolloutTargetOptions = {}): RolloutTarget {
  const timeoutMs = checkRequestTimeout(options.requestTimeoutMs ?? 30_000);
  const access = createClusterAccess(
    config,
    { ...options, requestTimeoutMs: timeoutMs },
    (connection: Connection) => connection,
  );
  const { read, write } = requestsOf(access, timeoutMs);
  return {
    getWorkload(kind, namespace, name) {
      const what = `${kind} ${namespace}/${name}`;
      return read(`reading ${what}`, `${what} ${GONE_SINCE_REPORT}`, workloadPath(kind, namespace, name));
    },
    patchWorkload(kind, namespace, name, patch) {
      const what = `${kind} ${namespace}/${name}`;
      const path = workloadPath(kind, namespace, name);
      const contentType = kind === 'Rollout' ? MERGE : STRATEGIC;
      const target = { path, query: { fieldManager: 'podmutation-rollout' }, method: 'PATCH', contentType } as const;
      return write(`patching ${what}`, `${what} ${GONE_SINCE_REPORT}`, target, patch);
    },
    async getPod(namespace, name) {
      try {
        return await read(
          `reading Pod ${namespace}/${name}`,
          `Pod ${namespace}/${name} does not exist`,
          podPath(namespace, name),
        );
      } catch (error) {
        if (hasReason(error, 'notFound')) return undefined;
        throw error;
      }
    },
    async evictPod(namespace, name, eviction) {
      const target = {
        path: `${podPath(namespace, name)}/eviction`,
        query: {},
        method: 'POST',
        contentType: 'application/json',
      } as const;
      try {
        await write(`evicting Pod ${namespace}/${name}`, `Pod ${namespace}/${name} does not exist`, target, eviction);
        return { outcome: 'evicted' };
      } catch (error) {
        const status = error instanceof ClusterError ? error.context['status'] : undefined;
        const message = error instanceof Error ? error.message : String(error);
        if (status === 429) return { outcome: 'refused', message };
        if (status === 404) return { outcome: 'gone' };
        if (status === 409) return { outcome: 'replaced', message };
        throw error;
      }
    },
    async listPodDisruptionBudgets(namespace) {
      const list = await read(
        `listing poddisruptionbudgets.policy in namespace ${namespace}`,
        'the API server does not serve policy/v1 poddisruptionbudgets',
        `/apis/policy/v1/namespaces/${encodeURIComponent(namespace)}/poddisruptionbudgets`,
      );
      const items = (list as { items?: unknown }).items;
      return Array.isArray(items) ? (items as unknown[]) : [];
    },
  };
}

export { createRolloutTarget };
export type { RolloutTarget, RolloutWorkloadKind };
