import type { EKSClient } from '@aws-sdk/client-eks';
import {
  CustomObjectsApi,
  Observable,
  PatchStrategy,
  setHeaderOptions,
  type ConfigurationOptions,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { POD_MUTATION_API_VERSION } from '../api/index.ts';
import { ClusterError, ConfigurationError } from '../errors/index.ts';
import type { SecretReader } from '../secrets/index.ts';
import type { ClusterConfig } from './config.ts';
import {
  connectLocal,
  connectRemote,
  type Connection,
  type ConnectionDependencies,
  type LocalClusterConfig,
} from './connection.ts';
import type { AwsCredentialsProvider, Clock } from './eks-token.ts';
import {
  classifyRequestFailure,
  clusterError,
  innermostMessage,
  type ClusterOperation,
  type RequestObservation,
} from './failure.ts';
import { collectList, type PodMutationList } from './list.ts';

/** What the sync needs from the cluster: the complete list of podmutations, and writing one resource's status. */
interface PodMutationSource {
  /** Every podmutation over all pages and the list's resourceVersion; any failure rejects with a ClusterError, never a partial list. */
  listPodMutations(): Promise<PodMutationList>;
  /** JSON-merge-patches `{ status }` onto the status subresource of the named podmutation; failures reject with a ClusterError. */
  patchStatus(name: string, status: object): Promise<void>;
}

/** Tuning and collaborators of a PodMutationSource; every field is optional. */
interface PodMutationSourceOptions {
  /** Items per list page (limit); default 100. */
  readonly pageSize?: number;
  /** Timeout of each request, from sending to the end of the body; default 10 000 ms. */
  readonly requestTimeoutMs?: number;
  /** Restarts of a list whose continue token expired (410); default 3. */
  readonly maxListRestarts?: number;
  /** fieldManager recorded for status patches; default "podmutation-sync". */
  readonly fieldManager?: string;
  readonly eksClient?: EKSClient;
  readonly secretsManagerClient?: SecretReader;
  /** Credentials that sign EKS tokens; default: the SDK's Node provider chain. */
  readonly credentials?: AwsCredentialsProvider;
  readonly clock?: Clock;
  /** How long one EKS token is reused; default 10 minutes, at most 14. */
  readonly tokenReuseMs?: number;
}

const [GROUP = '', VERSION = ''] = POD_MUTATION_API_VERSION.split('/');
const PLURAL = 'podmutations';
const RESOURCE = `${PLURAL}.${GROUP}`;
const DEFAULTS = { pageSize: 100, requestTimeoutMs: 10_000, maxListRestarts: 3, fieldManager: 'podmutation-sync' };
// 1000 pages of the default 100 items is far beyond any real rule set; past it the server is misbehaving.
const MAX_PAGES = 1000;

/**
 * A source for the configured cluster. kubeconfig files and texts are checked now (ConfigurationError);
 * secrets and EKS clusters are resolved on first use and cached for the life of the source (one Lambda
 * container), except that a failed resolution is retried and a 401 forces a fresh resolution.
 */
function createPodMutationSource(config: ClusterConfig, options: PodMutationSourceOptions = {}): PodMutationSource {
  const settings = checkOptions(options);
  const dependencies: ConnectionDependencies = {
    requestTimeoutMs: settings.requestTimeoutMs,
    eksClient: options.eksClient,
    secretsManagerClient: options.secretsManagerClient,
    credentials: options.credentials,
    clock: options.clock,
    tokenReuseMs: options.tokenReuseMs,
  };
  let loadClient: () => Promise<ClusterClient>;
  if (isLocal(config)) {
    const local = toClient(connectLocal(config));
    loadClient = () => Promise.resolve(local);
  } else {
    loadClient = async () => toClient(await connectRemote(config, dependencies));
  }
  const clients = cachedUntilFailure(loadClient);

  const client = async (action: string): Promise<ClusterClient> => {
    try {
      return await clients.get();
    } catch (error) {
      if (error instanceof ClusterError) throw error;
      const operation: ClusterOperation = { action, notFoundHint: '', target: describeTarget(config) };
      throw clusterError(operation, 'configuration', innermostMessage(error), { cause: error });
    }
  };

  /** Runs one request; a 401 drops the cached connection so the next call re-reads the secret or re-describes the cluster. */
  const withClient = async <T>(action: string, run: (cluster: ClusterClient) => Promise<T>): Promise<T> => {
    const cluster = await client(action);
    try {
      return await run(cluster);
    } catch (error) {
      if (error instanceof ClusterError && error.context['reason'] === 'unauthorized') clients.reset(cluster);
      throw error;
    }
  };

  return {
    listPodMutations(): Promise<PodMutationList> {
      const action = `listing ${RESOURCE}`;
      return withClient(action, (cluster) => {
        const operation: ClusterOperation = {
          action,
          notFoundHint: `the PodMutation CRD (${RESOURCE}) is not installed in the cluster`,
          target: cluster.server,
          context: { operation: 'list', resource: RESOURCE },
        };
        return collectList(
          (continueToken) =>
            send(operation, settings.requestTimeoutMs, (requestOptions) =>
              cluster.api.listClusterCustomObject(
                {
                  group: GROUP,
                  version: VERSION,
                  plural: PLURAL,
                  limit: settings.pageSize,
                  ...(continueToken === undefined ? {} : { _continue: continueToken }),
                },
                requestOptions,
              ),
            ),
          { maxRestarts: settings.maxListRestarts, maxPages: MAX_PAGES },
          operation,
        );
      });
    },

    async patchStatus(name: string, status: object): Promise<void> {
      const action = `patching the status of ${RESOURCE} "${name}"`;
      await withClient(action, (cluster) => {
        const operation: ClusterOperation = {
          action,
          notFoundHint: `PodMutation "${name}" does not exist (deleted since the list?) or the CRD is not installed`,
          target: cluster.server,
          context: { operation: 'patchStatus', resource: RESOURCE, name },
        };
        return send(operation, settings.requestTimeoutMs, (requestOptions) =>
          cluster.api.patchClusterCustomObjectStatus(
            { group: GROUP, version: VERSION, plural: PLURAL, name, body: { status }, fieldManager: settings.fieldManager },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch, requestOptions),
          ),
        );
      });
    },
  };
}

interface ClusterClient {
  readonly api: CustomObjectsApi;
  readonly server: string;
}

function toClient(connection: Connection): ClusterClient {
  return { api: connection.kubeConfig.makeApiClient(CustomObjectsApi), server: connection.server };
}

/** Sends one request with a timeout covering the whole exchange, and classifies any failure. */
async function send<T>(
  operation: ClusterOperation,
  timeoutMs: number,
  call: (options: ConfigurationOptions<ObservableMiddleware>) => Promise<T>,
): Promise<T> {
  const observation: RequestObservation = { responded: false, timeoutMs };
  const middleware: ObservableMiddleware = {
    pre: (request) => {
      request.setSignal(AbortSignal.timeout(timeoutMs));
      return new Observable(Promise.resolve(request));
    },
    post: (response) => {
      observation.responded = true;
      return new Observable(Promise.resolve(response));
    },
  };
  try {
    return await call({ middleware: [middleware], middlewareMergeStrategy: 'append' });
  } catch (error) {
    throw classifyRequestFailure(operation, error, observation);
  }
}

/** Memoises a successful load; a failed load is not kept, and `reset(value)` drops the value if it is still current. */
function cachedUntilFailure<T>(load: () => Promise<T>): { get(): Promise<T>; reset(value: T): void } {
  let current: Promise<T> | undefined;
  let settled: T | undefined;
  return {
    get(): Promise<T> {
      if (current === undefined) {
        const attempt = load().then(
          (value) => {
            settled = value;
            return value;
          },
          (error: unknown) => {
            if (current === attempt) current = undefined;
            throw error;
          },
        );
        current = attempt;
      }
      return current;
    },
    reset(value: T): void {
      if (settled === value) {
        current = undefined;
        settled = undefined;
      }
    },
  };
}

function isLocal(config: ClusterConfig): config is LocalClusterConfig {
  return config.mode === 'kubeconfigFile' || config.mode === 'kubeconfigText';
}

function describeTarget(config: ClusterConfig): string {
  switch (config.mode) {
    case 'eks':
      return `EKS cluster ${config.clusterName} in ${config.region}`;
    case 'kubeconfigSecret':
      return `the kubeconfig in secret ${config.secretArn}`;
    case 'kubeconfigFile':
      return `kubeconfig file ${config.path}`;
    case 'kubeconfigText':
      return 'the kubeconfig text';
  }
}

function checkOptions(options: PodMutationSourceOptions): typeof DEFAULTS {
  const pageSize = options.pageSize ?? DEFAULTS.pageSize;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
  const maxListRestarts = options.maxListRestarts ?? DEFAULTS.maxListRestarts;
  const fieldManager = options.fieldManager ?? DEFAULTS.fieldManager;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 10_000) {
    throw new ConfigurationError(`list page size must be an integer from 1 to 10000, got ${pageSize}`);
  }
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs < 1 || requestTimeoutMs > 300_000) {
    throw new ConfigurationError(`cluster request timeout must be an integer from 1 to 300000 ms, got ${requestTimeoutMs}`);
  }
  if (!Number.isInteger(maxListRestarts) || maxListRestarts < 0 || maxListRestarts > 10) {
    throw new ConfigurationError(`list restarts must be an integer from 0 to 10, got ${maxListRestarts}`);
  }
  if (fieldManager === '' || fieldManager.length > 128) {
    throw new ConfigurationError(`fieldManager must be 1 to 128 characters, got ${fieldManager.length}`);
  }
  return { pageSize, requestTimeoutMs, maxListRestarts, fieldManager };
}

export { createPodMutationSource };
export type { PodMutationSource, PodMutationSourceOptions };
