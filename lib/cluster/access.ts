import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { EKSClient } from '@aws-sdk/client-eks';
import {
  ApiException,
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  Observable,
  ServerConfiguration,
  type ConfigurationOptions,
  type ObservableMiddleware,
} from '@kubernetes/client-node';
import { ClusterError, ConfigurationError } from '../errors/index.ts';
import { parseJsonExact } from '../json/index.ts';
import { createRefreshingValue } from '../refresh/index.ts';
import type { SecretReader } from '../secrets/index.ts';
import type { ClusterConfig } from './config.ts';
import { connectLocal, connectRemote, type Connection, type LocalClusterConfig } from './connection.ts';
import type { AwsCredentialsProvider, Clock } from './eks-token.ts';
import {
  classifyRequestFailure,
  clusterError,
  innermostMessage,
  type ClusterFailureReason,
  type ClusterOperation,
  type RequestObservation,
} from './failure.ts';

/** The collaborators every cluster source takes to reach the cluster; every field is optional. */
interface ConnectionOptions {
  readonly eksClient?: EKSClient;
  readonly secretsManagerClient?: SecretReader;
  /** Credentials that sign EKS tokens; default: the SDK's Node provider chain. */
  readonly credentials?: AwsCredentialsProvider;
  readonly clock?: Clock;
  /** How long one EKS token is reused; default 10 minutes, at most 14. */
  readonly tokenReuseMs?: number;
}

/** The configured cluster's connection, resolved once and shared by every request of one source. */
interface ClusterAccess<C> {
  /** The client of the current connection; a failed resolution rejects with a ClusterError and is retried once its backoff passed (the same error until then). */
  client(action: string): Promise<C>;
  /** Drops `client` when `error` says the API server refused its credentials, so the next request resolves afresh. */
  forgetIfUnauthorized(client: C, error: unknown): void;
  /** Runs one request with the current client, forgetting it on a 401. */
  run<T>(action: string, request: (client: C) => Promise<T>): Promise<T>;
}

const HTTP = new IsomorphicFetchHttpLibrary();

// A failed resolution is retried after 0.5–1 s, then after twice as long each time, up to 15–30 s (about one sync
// interval): a sync during the backoff fails at once with the same error instead of calling AWS again.
const RESOLUTION_BACKOFF = { initialMs: 1_000, maxMs: 30_000 };

/**
 * Access for the configured cluster. kubeconfig files and texts are checked now (ConfigurationError);
 * secrets and EKS clusters are resolved on first use and cached for the life of the access (one Lambda
 * container), except that a failed resolution is retried once its backoff passed and a 401 forces a fresh
 * resolution. A resolution is waited for at most requestTimeoutMs.
 */
function createClusterAccess<C>(
  config: ClusterConfig,
  options: ConnectionOptions & { readonly requestTimeoutMs: number },
  toClient: (connection: Connection) => C,
): ClusterAccess<C> {
  let load: () => Promise<C>;
  if (isLocal(config)) {
    const local = toClient(connectLocal(config));
    load = () => Promise.resolve(local);
  } else {
    const dependencies = {
      requestTimeoutMs: options.requestTimeoutMs,
      eksClient: options.eksClient,
      secretsManagerClient: options.secretsManagerClient,
      credentials: options.credentials,
      clock: options.clock,
      tokenReuseMs: options.tokenReuseMs,
    };
    load = async () => toClient(await connectRemote(config, dependencies));
  }
  const target = describeTarget(config);
  const { clock } = options;
  const clients = createRefreshingValue<C>({
    read: load,
    refreshMs: Infinity,
    backoff: RESOLUTION_BACKOFF,
    deadlineMs: options.requestTimeoutMs,
    timeoutError: (deadlineMs) =>
      clusterError(
        { action: `resolving the connection to ${target}`, notFoundHint: '', target },
        'timeout',
        `no answer within ${deadlineMs} ms`,
        {
          context: { timeoutMs: deadlineMs },
        },
      ),
    ...(clock === undefined ? {} : { clock: () => clock().getTime() }),
  });

  const access: ClusterAccess<C> = {
    async client(action: string): Promise<C> {
      try {
        return (await clients.get()).value;
      } catch (error) {
        if (error instanceof ClusterError) throw error;
        const operation: ClusterOperation = { action, notFoundHint: '', target };
        throw clusterError(operation, 'configuration', innermostMessage(error), { cause: error });
      }
    },
    forgetIfUnauthorized(client: C, error: unknown): void {
      if (hasReason(error, 'unauthorized')) clients.invalidate(client);
    },
    async run<T>(action: string, request: (client: C) => Promise<T>): Promise<T> {
      const client = await access.client(action);
      try {
        return await request(client);
      } catch (error) {
        access.forgetIfUnauthorized(client, error);
        throw error;
      }
    },
  };
  return access;
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

/**
 * GETs `path` on the connection's API server and returns the JSON body as parsed, integers beyond 2^53 kept as their
 * digits (parseJsonExact), without the generated clients' model deserialisation (which turns timestamps into Dates,
 * drops fields its models do not know, and rounds such integers with JSON.parse). Runs the
 * middleware of `options` around the exchange as the generated clients do; a non-2xx answer throws ApiException.
 */
async function getJson(
  connection: Connection,
  path: string,
  query: Readonly<Record<string, string>>,
  options: ConfigurationOptions<ObservableMiddleware>,
): Promise<unknown> {
  let request = new ServerConfiguration(connection.server, {}).makeRequestContext(path, HttpMethod.GET);
  request.setHeaderParam('Accept', 'application/json');
  for (const [name, value] of Object.entries(query)) request.setQueryParam(name, value);
  await connection.kubeConfig.applySecurityAuthentication(request);
  const middleware = options.middleware ?? [];
  for (const step of middleware) request = await step.pre(request).toPromise();
  let response = await HTTP.send(request).toPromise();
  for (const step of [...middleware].reverse()) response = await step.post(response).toPromise();
  const text = await response.body.text();
  if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
    throw new ApiException(response.httpStatusCode, `HTTP ${response.httpStatusCode}`, text, response.headers);
  }
  // Exact integers: a PodMutation's or a Pod's tolerationSeconds beyond 2^53 keeps its digits.
  return parseJsonExact(text);
}

const MERGE_PATCH = 'application/merge-patch+json';

/** Items per page of a list, as client-go's pager and kubectl ask: a sync of 5,000 PodMutations lists in half the time of pages of 100. */
const DEFAULT_LIST_PAGE_SIZE = 500;

/** One request's exchange: what it is for (failures are classified by it), its deadline, and the connection. */
interface Exchange {
  readonly operation: ClusterOperation;
  readonly timeoutMs: number;
  readonly connection: Connection;
}

/**
 * Sends `body` as a JSON merge patch to `path` over node:https, with the connection's TLS settings, credentials and
 * keep-alive agent, within `timeoutMs` for the whole exchange, and classifies any failure. A 2xx answer is not read
 * (the write is done); a non-2xx answer fails as the generated clients' ApiException would. The status writes of a
 * sync are thousands of small requests: one costs 0.34 ms of CPU this way, 1.08 ms through the generated client and
 * undici's fetch (measured for `npm run scale:sync`), and leaves far less garbage behind.
 */
async function sendMergePatch(
  exchange: Exchange,
  target: { readonly path: string; readonly query: Readonly<Record<string, string>> },
  body: unknown,
): Promise<void> {
  await sendWrite(exchange, { ...target, method: 'PATCH', contentType: MERGE_PATCH }, body);
}

/** Sends one write (a PATCH, DELETE or POST with a JSON body) as sendMergePatch does; the 2xx answer is not read. */
async function sendWrite(
  { operation, timeoutMs, connection }: Exchange,
  target: {
    readonly path: string;
    readonly query: Readonly<Record<string, string>>;
    readonly method: 'PATCH' | 'DELETE' | 'POST';
    readonly contentType: string;
  },
  body: unknown,
): Promise<void> {
  try {
    const url = new URL(`${connection.server.replace(/\/+$/, '')}${target.path}`);
    for (const [name, value] of Object.entries(target.query)) url.searchParams.set(name, value);
    const request = { method: target.method, contentType: target.contentType, text: JSON.stringify(body) };
    await write(url, request, await connection.httpsOptions(), timeoutMs);
  } catch (error) {
    // The answer's body is never decoded, so nothing after it arrived is a malformed answer.
    throw classifyRequestFailure(operation, error, { responded: false, timeoutMs });
  }
}

/** One write's method, content type and body text. */
interface WriteRequest {
  readonly method: string;
  readonly contentType: string;
  readonly text: string;
}

function write(
  url: URL,
  { method, contentType, text }: WriteRequest,
  options: Awaited<ReturnType<Connection['httpsOptions']>>,
  timeoutMs: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const headers = {
      ...options.headers,
      accept: 'application/json',
      'content-type': contentType,
      'content-length': Buffer.byteLength(text),
    };
    const request = httpsRequest(url, { ...options, method, headers }, (response) => {
      const code = response.statusCode ?? 0;
      if (code >= 200 && code <= 299) {
        response.on('end', resolve).resume();
        return;
      }
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        reject(
          new ApiException(code, `HTTP ${code}`, Buffer.concat(chunks).toString('utf8'), headersOf(response.headers)),
        ),
      );
      response.on('error', reject);
    });
    const timer = setTimeout(
      () =>
        request.destroy(
          Object.assign(new Error(`no complete answer within ${timeoutMs} ms`), { name: 'TimeoutError' }),
        ),
      timeoutMs,
    );
    request.on('close', () => clearTimeout(timer));
    request.on('error', reject);
    request.end(text);
  });
}

function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]),
  );
}

/** True when `error` is a ClusterError with this `context.reason`. */
function hasReason(error: unknown, reason: ClusterFailureReason): error is ClusterError {
  return error instanceof ClusterError && error.context['reason'] === reason;
}

/** Checks a per-request timeout option: an integer from 1 to 300 000 ms. */
function checkRequestTimeout(requestTimeoutMs: number): number {
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs < 1 || requestTimeoutMs > 300_000) {
    throw new ConfigurationError(
      `cluster request timeout must be an integer from 1 to 300000 ms, got ${requestTimeoutMs}`,
    );
  }
  return requestTimeoutMs;
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

export {
  createClusterAccess,
  send,
  sendMergePatch,
  sendWrite,
  getJson,
  hasReason,
  checkRequestTimeout,
  DEFAULT_LIST_PAGE_SIZE,
};
export type { ClusterAccess, ConnectionOptions };
