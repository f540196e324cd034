import { ConfigurationError } from '../errors/index.ts';
import { isDns1123Label } from '../syntax/index.ts';
import {
  checkRequestTimeout,
  createClusterAccess,
  DEFAULT_LIST_PAGE_SIZE,
  getJson,
  hasReason,
  send,
  type ConnectionOptions,
} from './access.ts';
import type { ClusterConfig } from './config.ts';
import { clusterError, type ClusterOperation } from './failure.ts';
import { listPages } from './list.ts';

/**
 * The kinds report reads, in the order they are listed: RuntimeClasses (cluster-scoped: what the RuntimeClass admission
 * plugin merges into a Pod), owners, Pods last.
 * @internal Exported for tests: the tests enumerate the kinds read.
 */
type WorkloadObjectKind =
  | 'RuntimeClass'
  | 'CronJob'
  | 'Job'
  | 'Deployment'
  | 'Rollout'
  | 'ReplicaSet'
  | 'StatefulSet'
  | 'ControllerRevision'
  | 'DaemonSet'
  | 'Pod';

/**
 * Every WorkloadObjectKind in listing order: RuntimeClasses, then a Pod's possible controllers before the Pods, and
 * ControllerRevisions after the StatefulSets, so that the report keeps only the revisions a StatefulSet names as current.
 */
const WORKLOAD_OBJECT_KINDS: readonly WorkloadObjectKind[] = Object.freeze([
  'RuntimeClass',
  'CronJob',
  'Job',
  'Deployment',
  'Rollout',
  'ReplicaSet',
  'StatefulSet',
  'ControllerRevision',
  'DaemonSet',
  'Pod',
]);

/** Tuning and collaborators of a WorkloadObjectSource; every field is optional. */
interface WorkloadObjectSourceOptions extends ConnectionOptions {
  /** Items per list page (limit); default 500, from 1 to 5000. */
  readonly pageSize?: number;
  /** Timeout of each page request, from sending to the end of the body; default 30 000 ms. */
  readonly requestTimeoutMs?: number;
}

/** Pods and their possible controllers, read from the cluster one page at a time. */
interface WorkloadObjectSource {
  /**
   * Every object of `kind` (in `namespace`, or all namespaces), one page at a time; each item has apiVersion and
   * kind set (the API omits them on list items). Rollouts yield nothing when their CRD is not installed, and
   * ControllerRevisions when the identity may not list them; any other failure rejects with a ClusterError, after the
   * pages already yielded.
   */
  pages(kind: WorkloadObjectKind, namespace?: string): AsyncIterable<readonly unknown[]>;
}

/** Where a kind's collection lives in the API. */
interface Collection {
  /** API group; '' is the core group, served under /api. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** A cluster-scoped kind is listed whole, whatever the namespace asked for. */
  readonly clusterScoped?: true;
  /** The infra/ file that grants the sync its list, for the 403 message. */
  readonly syncGrant?: string;
}

/** The kinds listed: the report's, and the capacity's Nodes and NodePools (lib/cluster/capacity-source.ts). */
type ListedKind = WorkloadObjectKind | 'Node' | 'NodePool';

const COLLECTIONS: Readonly<Record<ListedKind, Collection>> = {
  Node: { group: '', version: 'v1', plural: 'nodes', clusterScoped: true, syncGrant: 'infra/rbac.yaml' },
  NodePool: {
    group: 'karpenter.sh',
    version: 'v1',
    plural: 'nodepools',
    clusterScoped: true,
    syncGrant: 'infra/rbac.yaml',
  },
  RuntimeClass: {
    group: 'node.k8s.io',
    version: 'v1',
    plural: 'runtimeclasses',
    clusterScoped: true,
    syncGrant: 'infra/rbac-sync-report.yaml',
  },
  CronJob: { group: 'batch', version: 'v1', plural: 'cronjobs' },
  Job: { group: 'batch', version: 'v1', plural: 'jobs' },
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments' },
  Rollout: { group: 'argoproj.io', version: 'v1alpha1', plural: 'rollouts' },
  ReplicaSet: { group: 'apps', version: 'v1', plural: 'replicasets' },
  StatefulSet: { group: 'apps', version: 'v1', plural: 'statefulsets' },
  ControllerRevision: { group: 'apps', version: 'v1', plural: 'controllerrevisions' },
  DaemonSet: { group: 'apps', version: 'v1', plural: 'daemonsets' },
  Pod: { group: '', version: 'v1', plural: 'pods' },
};

// Argo Rollouts and Karpenter are add-ons: a cluster without the CRD simply has no Rollouts, or no NodePools.
const OPTIONAL_KINDS: ReadonlySet<ListedKind> = new Set(['Rollout', 'NodePool']);
// Without the permission to list ControllerRevisions the report still reads everything else: a StatefulSet whose
// deleted Pods would come back at a revision whose template is then unknown is held, and the hold says to list them.
const FORBIDDEN_OPTIONAL_KINDS: ReadonlySet<ListedKind> = new Set(['ControllerRevision']);

const DEFAULTS = { pageSize: DEFAULT_LIST_PAGE_SIZE, requestTimeoutMs: 30_000 };
const MAX_PAGE_SIZE = 5000;
// Kubernetes supports at most 150 000 Pods per cluster; a list still going past a million objects' worth of pages
// comes from a server that never stops sending continue tokens.
const MAX_OBJECTS = 1_000_000;

/**
 * A source of workload objects for the configured cluster, connecting as createPodMutationSource does: kubeconfig
 * files and texts are checked now (ConfigurationError), secrets and EKS clusters on first use; a 401 forces a fresh
 * resolution. An out-of-range option throws ConfigurationError.
 */
function createWorkloadObjectSource(
  config: ClusterConfig,
  options: WorkloadObjectSourceOptions = {},
): WorkloadObjectSource {
  return createListing(config, options);
}

/** The lists of every ListedKind, connecting as createWorkloadObjectSource describes. */
function createListing(
  config: ClusterConfig,
  options: WorkloadObjectSourceOptions,
): { pages(kind: ListedKind, namespace?: string): AsyncIterable<readonly unknown[]> } {
  const settings = checkOptions(options);
  const access = createClusterAccess(
    config,
    { ...options, requestTimeoutMs: settings.requestTimeoutMs },
    (connection) => connection,
  );
  const maxPages = Math.ceil(MAX_OBJECTS / settings.pageSize);

  async function* pages(kind: ListedKind, namespace?: string): AsyncGenerator<readonly unknown[], void> {
    if (!Object.hasOwn(COLLECTIONS, kind)) {
      throw new ConfigurationError(`cannot list "${String(kind)}": the kinds are ${WORKLOAD_OBJECT_KINDS.join(', ')}`);
    }
    const collection = COLLECTIONS[kind];
    if (namespace !== undefined && !isDns1123Label(namespace)) {
      throw new ConfigurationError(
        `namespace "${namespace}" is not a namespace name (at most 63 lower-case letters, digits or "-", starting and ending with a letter or digit)`,
      );
    }
    const resource = collection.group === '' ? collection.plural : `${collection.plural}.${collection.group}`;
    const scope = collection.clusterScoped === true ? undefined : namespace;
    const action = `listing ${resource}${scopeText(collection, scope)}`;
    const connection = await access.client(action);
    const operation: ClusterOperation = {
      action,
      notFoundHint: OPTIONAL_KINDS.has(kind)
        ? `the ${kind} CRD (${resource}) was removed during the list`
        : `the API server does not serve ${resource}`,
      target: connection.server,
      context: { operation: 'list', kind, resource, ...(scope === undefined ? {} : { namespace: scope }) },
    };
    const path = collectionPath(collection, scope);
    const apiVersion = collection.group === '' ? collection.version : `${collection.group}/${collection.version}`;
    const fetchPage = (continueToken: string | undefined): Promise<unknown> =>
      send(operation, settings.requestTimeoutMs, (requestOptions) =>
        getJson(
          connection,
          path,
          { limit: String(settings.pageSize), ...(continueToken === undefined ? {} : { continue: continueToken }) },
          requestOptions,
        ),
      );

    let delivered = 0;
    try {
      for await (const page of listPages(fetchPage, maxPages, operation)) {
        delivered += 1;
        yield Object.freeze(page.items.map((item) => ({ ...(item as Record<string, unknown>), apiVersion, kind })));
      }
    } catch (error) {
      access.forgetIfUnauthorized(connection, error);
      if (delivered === 0 && OPTIONAL_KINDS.has(kind) && hasReason(error, 'notFound')) return;
      if (delivered === 0 && FORBIDDEN_OPTIONAL_KINDS.has(kind) && hasReason(error, 'forbidden')) return;
      throw explained(error, { operation, collection, namespace: scope, delivered });
    }
  }

  return { pages };
}

/** Where a list reads: "" for a cluster-scoped collection, else " in all namespaces" or " in namespace NS". */
function scopeText(collection: Collection, namespace: string | undefined): string {
  if (collection.clusterScoped === true) return '';
  return namespace === undefined ? ' in all namespaces' : ` in namespace ${namespace}`;
}

/** The collection's URL path: core resources under /api, the others under /apis/<group>. */
function collectionPath(collection: Collection, namespace: string | undefined): string {
  const root =
    collection.group === '' ? `/api/${collection.version}` : `/apis/${collection.group}/${collection.version}`;
  return namespace === undefined
    ? `${root}/${collection.plural}`
    : `${root}/namespaces/${namespace}/${collection.plural}`;
}

/** The grant a 403 on listing a cluster-scoped resource asks for: report's and rollout's ClusterRoles, and the sync's file when it has one. */
function clusterScopedGrant(plural: string, syncGrant?: string): string {
  return `${plural} are cluster-scoped, which no RoleBinding grants: bind the ClusterRole podmutation-report-cluster-scoped of infra/rbac-report.yaml (report) or podmutation-rollout-cluster-scoped of infra/rbac-rollout.yaml (rollout)${syncGrant === undefined ? '' : `, or apply ${syncGrant} (the sync)`}`;
}

/** A list that failed: its operation, its collection and namespace (none: every namespace), and the pages it delivered. */
interface FailedList {
  readonly operation: ClusterOperation;
  readonly collection: Collection;
  readonly namespace: string | undefined;
  readonly delivered: number;
}

/** Rewrites the failures whose generic message would mislead: a missing report permission, an expired token mid-list. */
function explained(error: unknown, { operation, collection, namespace, delivered }: FailedList): unknown {
  if (hasReason(error, 'forbidden')) {
    const scope = scopeText(collection, namespace);
    const group = collection.group === '' ? '"" (core)' : `"${collection.group}"`;
    // A grant per namespace (RoleBinding) never covers a list of every namespace: say which grant each needs.
    const grant =
      collection.clusterScoped === true
        ? clusterScopedGrant(collection.plural, collection.syncGrant)
        : namespace === undefined
          ? "reading every namespace needs a ClusterRoleBinding: that of infra/rbac-report.yaml (report -A), infra/rbac-rollout.yaml (rollout -A) or infra/rbac-sync-report.yaml (the sync's report)"
          : `bind infra/rbac-report-namespace.yaml (report) or infra/rbac-rollout-namespace.yaml (rollout) in namespace ${namespace}, or read only the namespaces bound`;
    return clusterError(
      operation,
      'forbidden',
      `403 Forbidden: the identity lacks the RBAC permission to list ${collection.plural}${scope} (verb "list", resource "${collection.plural}", API group ${group}); ${grant}`,
      { cause: error, context: { status: 403, verb: 'list', group: collection.group } },
    );
  }
  if (delivered > 0 && hasReason(error, 'gone')) {
    // The pages already yielded were consumed; restarting here would hand the caller their objects twice.
    return clusterError(
      operation,
      'gone',
      `the continue token expired after ${delivered} page${delivered === 1 ? '' : 's'} had been delivered; the list cannot be resumed consistently, so start the listing over`,
      { cause: error, context: { status: 410, pagesDelivered: delivered } },
    );
  }
  return error;
}

function checkOptions(options: WorkloadObjectSourceOptions): typeof DEFAULTS {
  const pageSize = options.pageSize ?? DEFAULTS.pageSize;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new ConfigurationError(`list page size must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${pageSize}`);
  }
  const requestTimeoutMs = checkRequestTimeout(options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs);
  return { pageSize, requestTimeoutMs };
}

export { clusterScopedGrant, createListing, createWorkloadObjectSource, WORKLOAD_OBJECT_KINDS };
export type { WorkloadObjectKind, WorkloadObjectSource, WorkloadObjectSourceOptions };
