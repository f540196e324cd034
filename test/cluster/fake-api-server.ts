/**
 * An in-test Kubernetes API server for podmutations.agent.cloudpilot.ai over HTTPS with a freshly generated CA.
 * It serves the cluster-scoped list with limit/continue pagination over consistent snapshots, applies JSON merge
 * patches to the status subresource, checks bearer tokens, and injects faults (status codes, hangs, resets, raw bodies).
 * It serves podplacements.agent.cloudpilot.ai the same way (`putPlacement`, `getPlacement`, `removePlacement`); that
 * collection answers 404 (CRD not installed) after `setPlacementsInstalled(false)`.
 *
 * It also holds workload objects: `putObjects(items)` stores Pods (v1), ReplicaSets, Deployments, StatefulSets,
 * DaemonSets (apps/v1), Jobs, CronJobs (batch/v1) and Argo Rollouts (argoproj.io/v1alpha1), each item with apiVersion,
 * kind, metadata.namespace and metadata.name; `clearObjects()` empties them. Their list endpoints are served
 * cluster-wide (/api/v1/pods, /apis/apps/v1/replicasets, ...) and per namespace (/api/v1/namespaces/NS/pods, ...)
 * with the same pagination, list items without apiVersion/kind (as the real API sends them), and a list-level
 * apiVersion, kind and metadata.resourceVersion. The rollouts collection answers 404 (CRD not installed) until
 * `setRolloutsInstalled(true)` or the `rolloutsInstalled` option. It holds the capacity too: Nodes (v1) and Karpenter
 * NodePools (karpenter.sh/v1), both cluster-scoped; the nodepools collection answers 404 until
 * `setNodePoolsInstalled(true)`. Faults apply to these lists too; `FaultScope.resource`
 * narrows a fault to one collection by its plural name ("pods", "replicasets", "podmutations", ...).
 *
 * GET /api/v1/namespaces/kube-system answers the namespace with the cluster's uid (the `clusterUid` option, random by
 * default; `setClusterUid` makes the server another cluster), a `get` request of resource "namespaces" for faults.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { stringify } from 'yaml';
import { compareCodeUnits } from '../../lib/text/index.ts';

const GROUP = 'agent.cloudpilot.ai';
const VERSION = 'v1alpha1';
const COLLECTION_PATH = `/apis/${GROUP}/${VERSION}/podmutations`;
const PLACEMENT_COLLECTION_PATH = `/apis/${GROUP}/${VERSION}/podplacements`;
const STATUS_PATH = new RegExp(`^/apis/${GROUP}/${VERSION}/(podmutations|podplacements)/([^/]+)/status$`);
const MERGE_PATCH = 'application/merge-patch+json';
const IDENTITY_NAMESPACE = 'kube-system';
// A namespaced or cluster-wide collection: group-version root, optional namespace, plural.
const WORKLOAD_PATH = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)$/;

/** The workload collections the server holds, by kind. */
const WORKLOAD_COLLECTIONS = {
  RuntimeClass: { apiVersion: 'node.k8s.io/v1', plural: 'runtimeclasses' },
  Node: { apiVersion: 'v1', plural: 'nodes' },
  NodePool: { apiVersion: 'karpenter.sh/v1', plural: 'nodepools' },
  Pod: { apiVersion: 'v1', plural: 'pods' },
  ReplicaSet: { apiVersion: 'apps/v1', plural: 'replicasets' },
  Deployment: { apiVersion: 'apps/v1', plural: 'deployments' },
  StatefulSet: { apiVersion: 'apps/v1', plural: 'statefulsets' },
  ControllerRevision: { apiVersion: 'apps/v1', plural: 'controllerrevisions' },
  DaemonSet: { apiVersion: 'apps/v1', plural: 'daemonsets' },
  Job: { apiVersion: 'batch/v1', plural: 'jobs' },
  CronJob: { apiVersion: 'batch/v1', plural: 'cronjobs' },
  Rollout: { apiVersion: 'argoproj.io/v1alpha1', plural: 'rollouts' },
} as const;

type WorkloadKind = keyof typeof WORKLOAD_COLLECTIONS;
const CLUSTER_SCOPED: ReadonlySet<string> = new Set(['RuntimeClass', 'Node', 'NodePool']);

type Json = Record<string, unknown>;

type RequestKind = 'list' | 'continue' | 'patch' | 'get';

/** A CA and a server certificate signed by it, all PEM. */
interface TestCertificates {
  readonly caPem: string;
  readonly caKeyPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/** An injected misbehaviour for the next matching requests. */
type FakeFault =
  | { readonly kind: 'status'; readonly code: number; readonly reason?: string; readonly message?: string }
  | { readonly kind: 'hang' }
  | { readonly kind: 'reset' }
  | { readonly kind: 'raw'; readonly body: string; readonly contentType?: string; readonly code?: number };

interface FaultScope {
  /** How many requests the fault answers; default: every request until clearFaults(). */
  readonly times?: number;
  /** Which requests: list calls, only list calls that carry a continue token, status patches, gets, or all (default). */
  readonly on?: RequestKind | 'any';
  /** Only requests for this collection, by plural name ("podmutations", "pods", "replicasets", ...); default: any. */
  readonly resource?: string;
}

/** One request as the server saw it (token omitted; see `tokens`). */
interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
}

/** A status PATCH that passed authentication and fault injection. */
interface RecordedStatusPatch {
  readonly name: string;
  readonly path: string;
  readonly contentType: string | undefined;
  readonly query: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** What a test puts into the fake cluster; the server fills in the rest of metadata. */
interface PodMutationInput {
  readonly metadata: {
    readonly name: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly spec?: unknown;
}

/** A workload object a test puts into the fake cluster; the server fills in uid, creationTimestamp and resourceVersion. */
interface WorkloadObjectInput {
  /** One of the kinds above, with its apiVersion (v1 Pod, apps/v1 ReplicaSet, argoproj.io/v1alpha1 Rollout, ...). */
  readonly apiVersion: string;
  readonly kind: string;
  /** A namespace for every kind but the cluster-scoped RuntimeClass, Node and NodePool, which have none. */
  readonly metadata: { readonly namespace?: string; readonly name: string; readonly [field: string]: unknown };
  readonly [field: string]: unknown;
}

interface FakeApiServerOptions {
  /** The bearer token the server accepts; default: a random one, see `token`. */
  readonly token?: string;
  /** Overrides token checking, e.g. to accept EKS tokens; gets the bearer token without "Bearer ". */
  readonly acceptToken?: (token: string) => boolean;
  /** Certificates to serve; default: a new CA and a certificate for 127.0.0.1 and localhost. */
  readonly certificates?: TestCertificates;
  /** Whether the Argo Rollouts CRD is installed, so that rollouts are served; default false (404). */
  readonly rolloutsInstalled?: boolean;
  /** The uid of the kube-system namespace, the cluster's identity; default: a random one, see `clusterUid`. */
  readonly clusterUid?: string;
}

interface FakeApiServer {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  readonly caPem: string;
  readonly token: string;
  /** Current resourceVersion of the fake etcd. */
  readonly resourceVersion: string;
  readonly requests: readonly RecordedRequest[];
  readonly statusPatches: readonly RecordedStatusPatch[];
  /** Every bearer token presented, in order. */
  readonly tokens: readonly string[];
  /** TLS connections accepted so far: a client that reuses its connections opens one per request in flight. */
  readonly connections: number;
  /** Creates or replaces a PodMutation; bumps resourceVersion, and generation when the spec changes. */
  put(resource: PodMutationInput): Json;
  /** Deletes a PodMutation; bumps resourceVersion. */
  remove(name: string): void;
  get(name: string): Json | undefined;
  names(): string[];
  /** Creates or replaces a PodPlacement, as `put` a PodMutation. */
  putPlacement(resource: PodMutationInput): Json;
  /** Deletes a PodPlacement; bumps resourceVersion. */
  removePlacement(name: string): void;
  getPlacement(name: string): Json | undefined;
  placementNames(): string[];
  /** Installs or removes the PodPlacement CRD: while removed, the podplacements collection answers 404; default installed. */
  setPlacementsInstalled(installed: boolean): void;
  /** Creates or replaces workload objects (by kind, namespace and name); bumps resourceVersion once per object. */
  putObjects(items: readonly WorkloadObjectInput[]): void;
  /** Deletes every workload object (not the podmutations); bumps resourceVersion. */
  clearObjects(): void;
  /** Installs or removes the Argo Rollouts CRD: while removed, the rollouts collection answers 404. */
  setRolloutsInstalled(installed: boolean): void;
  /** Installs or removes Karpenter's NodePool CRD: while removed (the default), the nodepools collection answers 404. */
  setNodePoolsInstalled(installed: boolean): void;
  /** The uid of the kube-system namespace now. */
  readonly clusterUid: string;
  /** Makes the server another cluster: its kube-system namespace gets this uid. */
  setClusterUid(uid: string): void;
  fail(fault: FakeFault, scope?: FaultScope): void;
  /** The next `times` requests that carry a continue token get 410 Gone (expired token). */
  expireContinueTokens(times?: number): void;
  clearFaults(): void;
  close(): Promise<void>;
}

/** Generates a throwaway CA and a server certificate for 127.0.0.1 / localhost signed by it. */
async function createTestCertificates(): Promise<TestCertificates> {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(Date.now() + 24 * 3600_000);
  const ca = await generate([{ name: 'commonName', value: 'fake-kubernetes-ca' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const leaf = await generate([{ name: 'commonName', value: 'kube-apiserver' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  return { caPem: ca.cert, caKeyPem: ca.private, certPem: leaf.cert, keyPem: leaf.private };
}

/**
 * Registers a test file's fake API server: started before its first test, closed after its last, its faults and
 * workload objects cleared (and `reset` run) after each test. Returns its accessor.
 */
function useFakeApiServer(reset: (server: FakeApiServer) => void = () => undefined): () => FakeApiServer {
  let server: FakeApiServer | undefined;
  beforeAll(async () => {
    server = await startFakeApiServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  afterEach(() => {
    if (server === undefined) return;
    server.clearFaults();
    server.clearObjects();
    reset(server);
  });
  return () => {
    if (server === undefined) throw new Error('the fake API server is not running outside tests and hooks');
    return server;
  };
}

/** Starts the fake API server on 127.0.0.1 with an ephemeral port. */
async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const certificates = options.certificates ?? (await createTestCertificates());
  const token = options.token ?? `fake-token-${randomUUID()}`;
  const acceptToken = options.acceptToken ?? ((presented: string) => presented === token);
  const objects = new Map<string, Json>();
  const placements = new Map<string, Json>();
  // The custom resources by plural, each kept by name.
  const customResources: Readonly<Record<string, Map<string, Json>>> = {
    podmutations: objects,
    podplacements: placements,
  };
  let placementsInstalled = true;
  const snapshots = new Map<string, Snapshot>();
  // Workload objects by kind, keyed "namespace/name" (the order etcd lists them in), stored without apiVersion and
  // kind and never mutated in place, so snapshots share them; the sorted arrays are rebuilt after a write.
  const workloads = new Map<WorkloadKind, Map<string, Json>>();
  const sortedWorkloads = new Map<WorkloadKind, readonly Json[]>();
  const requests: RecordedRequest[] = [];
  const statusPatches: RecordedStatusPatch[] = [];
  const tokens: string[] = [];
  let faults: { fault: FakeFault; remaining: number; on: RequestKind | 'any'; resource: string | undefined }[] = [];
  let expiredContinues = 0;
  let revision = 1;
  let rolloutsInstalled = options.rolloutsInstalled ?? false;
  let nodePoolsInstalled = false;
  let clusterUid = options.clusterUid ?? randomUUID();

  const bump = (): string => {
    revision += 1;
    return String(revision);
  };

  const takeFault = (route: Route): FakeFault | undefined => {
    const matches = (on: RequestKind | 'any'): boolean =>
      on === 'any' || on === route.kind || (on === 'list' && route.kind === 'continue');
    const entry = faults.find(
      (candidate) =>
        candidate.remaining > 0 &&
        matches(candidate.on) &&
        (candidate.resource === undefined || candidate.resource === route.resource),
    );
    if (entry === undefined) return undefined;
    entry.remaining -= 1;
    return entry.fault;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'https://fake');
    const query = Object.fromEntries(url.searchParams);
    requests.push({ method: request.method ?? '', path: url.pathname, query });
    const body = await readBody(request);

    const authorization = request.headers.authorization ?? '';
    const presented = authorization.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : '';
    tokens.push(presented);
    if (!acceptToken(presented)) return sendStatus(response, 401, 'Unauthorized', 'Unauthorized');

    const statusMatch = STATUS_PATH.exec(url.pathname);
    const route = routeOf(request.method, url.pathname, query, statusMatch?.[1]);
    if (route === undefined)
      return sendStatus(response, 404, 'NotFound', 'the server could not find the requested resource');

    const fault = takeFault(route);
    if (fault !== undefined) {
      if (fault.kind === 'hang') return; // never answered; close() destroys the socket
      if (fault.kind === 'reset') {
        request.socket.destroy();
        return;
      }
      if (fault.kind === 'raw') {
        response.writeHead(fault.code ?? 200, { 'content-type': fault.contentType ?? 'application/json' });
        response.end(fault.body);
        return;
      }
      return sendStatus(
        response,
        fault.code,
        fault.reason ?? 'InternalError',
        fault.message ?? `injected ${fault.code}`,
      );
    }

    if (route.kind === 'get') {
      return sendJson(response, 200, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: IDENTITY_NAMESPACE, uid: clusterUid, resourceVersion: '1' },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      });
    }
    if (route.resource === 'podplacements' && !placementsInstalled) {
      return sendStatus(response, 404, 'NotFound', 'the server could not find the requested resource');
    }
    if (route.kind === 'patch') {
      const name = decodeURIComponent(statusMatch![2] ?? '');
      const stored = customResources[route.resource]!;
      return servePatch(
        stored,
        route.resource,
        name,
        url.pathname,
        request.headers['content-type'],
        query,
        body,
        response,
      );
    }
    if (route.workload === undefined) {
      const stored = customResources[route.resource]!;
      return serveList(query, response, {
        path: url.pathname,
        apiVersion: `${GROUP}/${VERSION}`,
        kind: route.resource === 'podplacements' ? 'PodPlacementList' : 'PodMutationList',
        items: () =>
          [...stored.values()]
            .sort((a, b) => compareCodeUnits(nameOf(a), nameOf(b)))
            .map((item) => structuredClone(item)),
      });
    }
    const { kind, namespace } = route.workload;
    if ((kind === 'Rollout' && !rolloutsInstalled) || (kind === 'NodePool' && !nodePoolsInstalled)) {
      return sendStatus(response, 404, 'NotFound', 'the server could not find the requested resource');
    }
    return serveList(query, response, {
      path: url.pathname,
      apiVersion: WORKLOAD_COLLECTIONS[kind].apiVersion,
      kind: `${kind}List`,
      items: () => {
        const all = sortedOf(kind);
        return namespace === undefined ? all : all.filter((item) => namespaceOf(item) === namespace);
      },
    });
  };

  const sortedOf = (kind: WorkloadKind): readonly Json[] => {
    let sorted = sortedWorkloads.get(kind);
    if (sorted === undefined) {
      const entries = [...(workloads.get(kind) ?? new Map<string, Json>()).entries()];
      entries.sort(([a], [b]) => compareCodeUnits(a, b));
      sorted = entries.map(([, item]) => item);
      sortedWorkloads.set(kind, sorted);
    }
    return sorted;
  };

  const serveList = (query: Record<string, string>, response: ServerResponse, collection: ListedCollection): void => {
    const limit = Number(query['limit'] ?? '0');
    let snapshotId: string;
    let offset: number;
    const continueToken = query['continue'];
    if (continueToken === undefined || continueToken === '') {
      snapshotId = randomUUID();
      snapshots.set(snapshotId, {
        path: collection.path,
        resourceVersion: String(revision),
        items: collection.items(),
      });
      offset = 0;
    } else {
      const decoded = decodeContinue(continueToken);
      if (decoded === undefined || snapshots.get(decoded.snapshotId)?.path !== collection.path) {
        return sendStatus(response, 400, 'BadRequest', 'continue key is not valid');
      }
      if (expiredContinues > 0) {
        expiredContinues -= 1;
        return sendStatus(
          response,
          410,
          'Expired',
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        );
      }
      ({ snapshotId, offset } = decoded);
    }
    const snapshot = snapshots.get(snapshotId)!;
    const end = limit > 0 ? Math.min(offset + limit, snapshot.items.length) : snapshot.items.length;
    const metadata: Json = { resourceVersion: snapshot.resourceVersion };
    if (end < snapshot.items.length) {
      metadata['continue'] = encodeContinue({ snapshotId, offset: end });
      metadata['remainingItemCount'] = snapshot.items.length - end;
    }
    sendJson(response, 200, {
      apiVersion: collection.apiVersion,
      kind: collection.kind,
      metadata,
      items: snapshot.items.slice(offset, end),
    });
  };

  const servePatch = (
    stored: Map<string, Json>,
    plural: string,
    name: string,
    path: string,
    contentType: string | undefined,
    query: Record<string, string>,
    rawBody: string,
    response: ServerResponse,
  ): void => {
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      return sendStatus(response, 400, 'BadRequest', 'the patch body is not JSON');
    }
    statusPatches.push({ name, path, contentType, query, body });
    if (contentType?.split(';')[0]?.trim() !== MERGE_PATCH) {
      return sendStatus(
        response,
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format: ${contentType}`,
      );
    }
    const current = stored.get(name);
    if (current === undefined) {
      return sendStatus(response, 404, 'NotFound', `${plural}.${GROUP} "${name}" not found`);
    }
    // The status subresource ignores every change outside .status.
    const patched = mergePatch(structuredClone(current), body) as Json;
    const updated: Json = { ...current, metadata: { ...(current['metadata'] as Json), resourceVersion: bump() } };
    if (patched['status'] === undefined) delete updated['status'];
    else updated['status'] = patched['status'];
    stored.set(name, updated);
    sendJson(response, 200, updated);
  };

  const putResource = (stored: Map<string, Json>, kind: string, resource: PodMutationInput): Json => {
    const existing = stored.get(resource.metadata.name);
    const existingMetadata = (existing?.['metadata'] ?? {}) as Json;
    const specChanged = existing === undefined || JSON.stringify(existing['spec']) !== JSON.stringify(resource.spec);
    const previousGeneration = typeof existingMetadata['generation'] === 'number' ? existingMetadata['generation'] : 0;
    const created: Json = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind,
      metadata: {
        ...structuredClone(resource.metadata),
        uid: existingMetadata['uid'] ?? randomUUID(),
        creationTimestamp: existingMetadata['creationTimestamp'] ?? new Date().toISOString(),
        generation: specChanged ? previousGeneration + 1 : previousGeneration,
        resourceVersion: bump(),
      },
      ...(resource.spec === undefined ? {} : { spec: structuredClone(resource.spec) }),
      ...(existing?.['status'] === undefined ? {} : { status: existing['status'] }),
    };
    stored.set(resource.metadata.name, created);
    return structuredClone(created);
  };

  const server: Server = createServer({ key: certificates.keyPem, cert: certificates.certPem }, (request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  });
  const sockets = new Set<Socket>();
  let connections = 0;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('secureConnection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    caPem: certificates.caPem,
    token,
    get resourceVersion() {
      return String(revision);
    },
    requests,
    statusPatches,
    tokens,
    get connections() {
      return connections;
    },
    put: (resource: PodMutationInput): Json => putResource(objects, 'PodMutation', resource),
    putPlacement: (resource: PodMutationInput): Json => putResource(placements, 'PodPlacement', resource),
    removePlacement(name: string): void {
      if (placements.delete(name)) bump();
    },
    getPlacement(name: string): Json | undefined {
      const stored = placements.get(name);
      return stored === undefined ? undefined : structuredClone(stored);
    },
    placementNames(): string[] {
      return [...placements.keys()].sort();
    },
    setPlacementsInstalled(installed: boolean): void {
      placementsInstalled = installed;
    },
    remove(name: string): void {
      if (objects.delete(name)) bump();
    },
    get(name: string): Json | undefined {
      const stored = objects.get(name);
      return stored === undefined ? undefined : structuredClone(stored);
    },
    names(): string[] {
      return [...objects.keys()].sort();
    },
    putObjects(items: readonly WorkloadObjectInput[]): void {
      for (const input of items) {
        const kind = checkedWorkloadKind(input);
        const key = `${input.metadata.namespace ?? ''}/${input.metadata.name}`;
        let collection = workloads.get(kind);
        if (collection === undefined) {
          collection = new Map();
          workloads.set(kind, collection);
        }
        const existingMetadata = (collection.get(key)?.['metadata'] ?? {}) as Json;
        // The real API leaves apiVersion and kind off list items; the collection implies them.
        const rest = structuredClone(input) as Json;
        delete rest['apiVersion'];
        delete rest['kind'];
        collection.set(key, {
          ...rest,
          metadata: {
            ...(rest['metadata'] as Json),
            uid: existingMetadata['uid'] ?? randomUUID(),
            creationTimestamp:
              existingMetadata['creationTimestamp'] ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
            resourceVersion: bump(),
          },
        });
        sortedWorkloads.delete(kind);
      }
    },
    clearObjects(): void {
      workloads.clear();
      sortedWorkloads.clear();
      bump();
    },
    get clusterUid() {
      return clusterUid;
    },
    setClusterUid(uid: string): void {
      clusterUid = uid;
    },
    setRolloutsInstalled(installed: boolean): void {
      rolloutsInstalled = installed;
    },
    setNodePoolsInstalled(installed: boolean): void {
      nodePoolsInstalled = installed;
    },
    fail(fault: FakeFault, scope: FaultScope = {}): void {
      faults.push({ fault, remaining: scope.times ?? Infinity, on: scope.on ?? 'any', resource: scope.resource });
    },
    expireContinueTokens(times = 1): void {
      expiredContinues += times;
    },
    clearFaults(): void {
      faults = [];
      expiredContinues = 0;
    },
    async close(): Promise<void> {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface KubeconfigOverrides {
  /** Default: the server's token. */
  readonly token?: string;
  /** Default: the server's CA. */
  readonly caPem?: string;
  /** Default: the server's URL. */
  readonly server?: string;
  readonly contextName?: string;
  /** The context's namespace; default: none (kubectl's "default"). */
  readonly namespace?: string;
}

/** The YAML of a kubeconfig for the fake server: its URL, CA data and a bearer token. */
function kubeconfigFor(
  server: Pick<FakeApiServer, 'url' | 'caPem' | 'token'>,
  overrides: KubeconfigOverrides = {},
): string {
  const contextName = overrides.contextName ?? 'fake';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'fake-cluster',
        cluster: {
          server: overrides.server ?? server.url,
          'certificate-authority-data': Buffer.from(overrides.caPem ?? server.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: 'fake-user', user: { token: overrides.token ?? server.token } }],
    contexts: [
      {
        name: contextName,
        context: {
          cluster: 'fake-cluster',
          user: 'fake-user',
          ...(overrides.namespace === undefined ? {} : { namespace: overrides.namespace }),
        },
      },
    ],
    'current-context': contextName,
  });
}

/** Writes kubeconfigFor(server) to a new temporary folder and returns the file's path. */
function writeKubeconfig(
  server: Pick<FakeApiServer, 'url' | 'caPem' | 'token'>,
  overrides: KubeconfigOverrides = {},
): string {
  const path = join(mkdtempSync(join(tmpdir(), 'fake-kubeconfig-')), 'config');
  writeFileSync(path, kubeconfigFor(server, overrides), { mode: 0o600 });
  return path;
}

/** What a request is: its kind for fault scopes, the collection it addresses, and for workload lists the kind listed. */
interface Route {
  readonly kind: RequestKind;
  readonly resource: string;
  readonly workload?: { readonly kind: WorkloadKind; readonly namespace: string | undefined };
}

/** A list snapshot: the items of one collection at one resourceVersion, and the path its continue tokens belong to. */
interface Snapshot {
  readonly path: string;
  readonly resourceVersion: string;
  readonly items: readonly Json[];
}

/** What serveList needs of a collection: its path, list apiVersion and kind, and its items at the start of a list. */
interface ListedCollection {
  readonly path: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly items: () => readonly Json[];
}

// "/api/v1/pods" -> Pod, "/apis/apps/v1/replicasets" -> ReplicaSet, ...
const WORKLOAD_BY_COLLECTION = new Map<string, WorkloadKind>(
  Object.entries(WORKLOAD_COLLECTIONS).map(([kind, { apiVersion, plural }]) => [
    `${apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`}/${plural}`,
    kind as WorkloadKind,
  ]),
);

function routeOf(
  method: string | undefined,
  path: string,
  query: Record<string, string>,
  statusOf: string | undefined,
): Route | undefined {
  const listKind: RequestKind = query['continue'] ? 'continue' : 'list';
  if (method === 'GET' && path === COLLECTION_PATH) return { kind: listKind, resource: 'podmutations' };
  if (method === 'GET' && path === PLACEMENT_COLLECTION_PATH) return { kind: listKind, resource: 'podplacements' };
  if (method === 'PATCH' && statusOf !== undefined) return { kind: 'patch', resource: statusOf };
  if (method === 'GET' && path === `/api/v1/namespaces/${IDENTITY_NAMESPACE}`)
    return { kind: 'get', resource: 'namespaces' };
  const match = method === 'GET' ? WORKLOAD_PATH.exec(path) : null;
  if (match === null) return undefined;
  const [, root = '', namespace, plural = ''] = match;
  const kind = WORKLOAD_BY_COLLECTION.get(`${root}/${plural}`);
  if (kind === undefined) return undefined;
  return {
    kind: listKind,
    resource: plural,
    workload: { kind, namespace: namespace === undefined ? undefined : decodeURIComponent(namespace) },
  };
}

/** The kind of a workload input; throws when the kind, apiVersion or metadata would not be accepted by the API. */
function checkedWorkloadKind(input: WorkloadObjectInput): WorkloadKind {
  if (!Object.hasOwn(WORKLOAD_COLLECTIONS, input.kind)) {
    throw new Error(
      `fake API server: cannot store kind "${input.kind}"; it holds ${Object.keys(WORKLOAD_COLLECTIONS).join(', ')}`,
    );
  }
  const kind = input.kind as WorkloadKind;
  const expected = WORKLOAD_COLLECTIONS[kind].apiVersion;
  if (input.apiVersion !== expected) {
    throw new Error(`fake API server: ${kind} has apiVersion ${expected}, got "${input.apiVersion}"`);
  }
  const clusterScoped = CLUSTER_SCOPED.has(kind);
  if (clusterScoped !== (input.metadata?.namespace === undefined)) {
    throw new Error(`fake API server: ${kind} ${clusterScoped ? 'has no' : 'needs'} metadata.namespace`);
  }
  if (!clusterScoped && (typeof input.metadata.namespace !== 'string' || input.metadata.namespace === '')) {
    throw new Error(`fake API server: ${kind} needs metadata.namespace`);
  }
  if (typeof input.metadata.name !== 'string' || input.metadata.name === '') {
    throw new Error(`fake API server: ${kind} needs metadata.name`);
  }
  return kind;
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return structuredClone(patch);
  const result: Json = isJsonObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function isJsonObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function namespaceOf(object: Json): string {
  return (object['metadata'] as { readonly namespace?: string } | undefined)?.namespace ?? '';
}

function nameOf(object: Json): string {
  return (object['metadata'] as { readonly name?: string } | undefined)?.name ?? '';
}

function encodeContinue(position: { snapshotId: string; offset: number }): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

function decodeContinue(token: string): { snapshotId: string; offset: number } | undefined {
  try {
    const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      snapshotId?: unknown;
      offset?: unknown;
    };
    if (typeof decoded.snapshotId !== 'string' || typeof decoded.offset !== 'number') return undefined;
    return { snapshotId: decoded.snapshotId, offset: decoded.offset };
  } catch {
    return undefined;
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, code: number, body: unknown): void {
  response.writeHead(code, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** A metav1.Status failure body, as the API server sends with every error. */
function sendStatus(response: ServerResponse, code: number, reason: string, message: string): void {
  sendJson(response, code, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  });
}

export { startFakeApiServer, useFakeApiServer, createTestCertificates, kubeconfigFor, writeKubeconfig };
export type {
  FakeApiServer,
  FakeApiServerOptions,
  FakeFault,
  FaultScope,
  PodMutationInput,
  WorkloadObjectInput,
  RecordedRequest,
  RecordedStatusPatch,
  TestCertificates,
  KubeconfigOverrides,
};
