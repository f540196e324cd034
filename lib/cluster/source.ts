import { POD_MUTATION_API_VERSION, POD_MUTATION_KIND, POD_PLACEMENT_KIND } from '../api/index.ts';
import { ConfigurationError } from '../errors/index.ts';
import { isJsonObject } from '../json/index.ts';
import { CLUSTER_UID } from '../syntax/index.ts';
import {
  checkRequestTimeout,
  createClusterAccess,
  DEFAULT_LIST_PAGE_SIZE,
  getJson,
  send,
  sendMergePatch,
  type ClusterAccess,
  type ConnectionOptions,
} from './access.ts';
import type { ClusterConfig } from './config.ts';
import type { Connection } from './connection.ts';
import { clusterError, type ClusterOperation } from './failure.ts';
import { collectList, type PodMutationList } from './list.ts';

/** The kinds the sync lists and writes the status of, both cluster-scoped in the product's group and version. */
type SyncedKind = typeof POD_MUTATION_KIND | typeof POD_PLACEMENT_KIND;

/**
 * What the sync needs from the cluster: its identity, the complete lists of podmutations and podplacements, and writing
 * one resource's status.
 */
interface PodMutationSource {
  /** The metadata.uid of the cluster's kube-system namespace, which names the cluster; failures reject with a ClusterError. */
  readClusterUid(): Promise<string>;
  /** Every podmutation over all pages and the list's resourceVersion; any failure rejects with a ClusterError, never a partial list. */
  listPodMutations(): Promise<PodMutationList>;
  /**
   * Every podplacement, as listPodMutations lists podmutations; a cluster without the PodPlacement CRD rejects with
   * reason "notFound", which the sync reads as none.
   */
  listPodPlacements(): Promise<PodMutationList>;
  /**
   * JSON-merge-patches `{ status }` onto the status subresource of the named resource of `kind` (default PodMutation);
   * failures reject with a ClusterError.
   */
  patchStatus(name: string, status: object, kind?: SyncedKind): Promise<void>;
}

/**
 * Tuning and collaborators of a PodMutationSource; every field is optional.
 * @internal Exported for tests: the tests set the page size and clock.
 */
interface PodMutationSourceOptions extends ConnectionOptions {
  /** Items per list page (limit); default DEFAULT_LIST_PAGE_SIZE (500). */
  readonly pageSize?: number;
  /** Timeout of each request, from sending to the end of the body; default 10 000 ms. */
  readonly requestTimeoutMs?: number;
  /** Restarts of a list whose continue token expired (410); default 3. */
  readonly maxListRestarts?: number;
  /** fieldManager recorded for status patches; default "podmutation-sync". */
  readonly fieldManager?: string;
}

const [GROUP = '', VERSION = ''] = POD_MUTATION_API_VERSION.split('/');
// Every cluster has it, and its uid is made when the cluster is: what tells two clusters apart (infra/rbac.yaml grants get on it alone).
const IDENTITY_NAMESPACE = 'kube-system';

/** Where each synced kind lives: its resource name (plural.group) and its collection's path. */
const COLLECTIONS: Readonly<Record<SyncedKind, { readonly resource: string; readonly path: string }>> = {
  PodMutation: { resource: `podmutations.${GROUP}`, path: `/apis/${GROUP}/${VERSION}/podmutations` },
  PodPlacement: { resource: `podplacements.${GROUP}`, path: `/apis/${GROUP}/${VERSION}/podplacements` },
};
const DEFAULTS = {
  pageSize: DEFAULT_LIST_PAGE_SIZE,
  requestTimeoutMs: 10_000,
  maxListRestarts: 3,
  fieldManager: 'podmutation-sync',
};
// 1000 pages of the default 500 items is far beyond any real rule set; past it the server is misbehaving.
const MAX_PAGES = 1000;

/**
 * A source for the configured cluster. kubeconfig files and texts are checked now (ConfigurationError);
 * secrets and EKS clusters are resolved on first use and cached for the life of the source (one Lambda
 * container), except that a failed resolution is retried (backed off, from 1 s to 30 s) and a 401 forces a fresh
 * resolution.
 */
function createPodMutationSource(config: ClusterConfig, options: PodMutationSourceOptions = {}): PodMutationSource {
  const settings = checkOptions(options);
  const access = createClusterAccess(config, { ...options, requestTimeoutMs: settings.requestTimeoutMs }, toClient);

  return {
    readClusterUid(): Promise<string> {
      const action = `reading the uid of namespace ${IDENTITY_NAMESPACE}, the cluster's identity`;
      return access.run(action, async (cluster) => {
        const operation: ClusterOperation = {
          action,
          notFoundHint: `the API server has no namespace ${IDENTITY_NAMESPACE}`,
          target: cluster.server,
          context: { operation: 'get', resource: 'namespaces', name: IDENTITY_NAMESPACE },
        };
        const namespace = await send(operation, settings.requestTimeoutMs, (requestOptions) =>
          getJson(cluster.connection, `/api/v1/namespaces/${IDENTITY_NAMESPACE}`, {}, requestOptions),
        );
        const metadata = isJsonObject(namespace) ? namespace['metadata'] : undefined;
        const uid = isJsonObject(metadata) ? metadata['uid'] : undefined;
        if (typeof uid !== 'string' || !CLUSTER_UID.pattern.test(uid)) {
          throw clusterError(operation, 'malformed', `the answer has no metadata.uid of the form ${CLUSTER_UID.form}`);
        }
        return uid;
      });
    },

    listPodMutations: () => listAll(access, settings, POD_MUTATION_KIND),
    listPodPlacements: () => listAll(access, settings, POD_PLACEMENT_KIND),

    async patchStatus(name: string, status: object, kind: SyncedKind = POD_MUTATION_KIND): Promise<void> {
      const { resource, path: collectionPath } = COLLECTIONS[kind];
      const action = `patching the status of ${resource} "${name}"`;
      await access.run(action, (cluster) => {
        const operation: ClusterOperation = {
          action,
          notFoundHint: `${kind} "${name}" does not exist (deleted since the list?) or the CRD is not installed`,
          target: cluster.server,
          context: { operation: 'patchStatus', resource, name },
        };
        const path = `${collectionPath}/${encodeURIComponent(name)}/status`;
        return sendMergePatch(
          { operation, timeoutMs: settings.requestTimeoutMs, connection: cluster.connection },
          { path, query: { fieldManager: settings.fieldManager } },
          { status },
        );
      });
    },
  };
}

/** Every resource of `kind` over all pages; never a partial list. */
function listAll(
  access: ClusterAccess<ClusterClient>,
  settings: typeof DEFAULTS,
  kind: SyncedKind,
): Promise<PodMutationList> {
  const { resource, path } = COLLECTIONS[kind];
  const action = `listing ${resource}`;
  return access.run(action, (cluster) => {
    const operation: ClusterOperation = {
      action,
      notFoundHint: `the ${kind} CRD (${resource}) is not installed in the cluster`,
      target: cluster.server,
      context: { operation: 'list', resource },
    };
    // Read raw (getJson): the generated client's JSON.parse would round a tolerationSeconds beyond 2^53.
    return collectList(
      (continueToken) =>
        send(operation, settings.requestTimeoutMs, (requestOptions) =>
          getJson(
            cluster.connection,
            path,
            {
              limit: String(settings.pageSize),
              ...(continueToken === undefined ? {} : { continue: continueToken }),
            },
            requestOptions,
          ),
        ),
      { maxRestarts: settings.maxListRestarts, maxPages: MAX_PAGES },
      operation,
    );
  });
}

interface ClusterClient {
  readonly server: string;
  /** For the reads (getJson) and the status writes, which go over node:https (sendMergePatch). */
  readonly connection: Connection;
}

function toClient(connection: Connection): ClusterClient {
  return { server: connection.server, connection };
}

function checkOptions(options: PodMutationSourceOptions): typeof DEFAULTS {
  const pageSize = options.pageSize ?? DEFAULTS.pageSize;
  const maxListRestarts = options.maxListRestarts ?? DEFAULTS.maxListRestarts;
  const fieldManager = options.fieldManager ?? DEFAULTS.fieldManager;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 10_000) {
    throw new ConfigurationError(`list page size must be an integer from 1 to 10000, got ${pageSize}`);
  }
  const requestTimeoutMs = checkRequestTimeout(options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs);
  if (!Number.isInteger(maxListRestarts) || maxListRestarts < 0 || maxListRestarts > 10) {
    throw new ConfigurationError(`list restarts must be an integer from 0 to 10, got ${maxListRestarts}`);
  }
  if (fieldManager === '' || fieldManager.length > 128) {
    throw new ConfigurationError(`fieldManager must be 1 to 128 characters, got ${fieldManager.length}`);
  }
  return { pageSize, requestTimeoutMs, maxListRestarts, fieldManager };
}

export { createPodMutationSource };
export type { PodMutationSource, PodMutationSourceOptions, SyncedKind };
