import { readFileSync } from 'node:fs';
import { Agent, type RequestOptions } from 'node:https';
import { dirname } from 'node:path';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';
import { ConfigurationError } from '../errors/index.ts';
import { readSecretString, secretReaderFor, type SecretReader } from '../secrets/index.ts';
import type { ClusterConfig } from './config.ts';
import { createEksTokenProvider, type AwsCredentialsProvider, type Clock } from './eks-token.ts';
import { clusterError, innermostMessage, type ClusterFailureReason, type ClusterOperation } from './failure.ts';

/** A KubeConfig ready for requests, and the API server it points at. */
interface Connection {
  readonly kubeConfig: KubeConfig;
  readonly server: string;
  /** The TLS settings, credentials (current at each call) and keep-alive agent of one request over node:https. */
  httpsOptions(): Promise<RequestOptions>;
}

/** AWS-side collaborators of a connection; tests pass SDK clients pointed at loopback fakes. */
interface ConnectionDependencies {
  readonly eksClient?: EKSClient;
  readonly secretsManagerClient?: SecretReader;
  /** Credentials that sign EKS tokens; default: the SDK's Node provider chain (the Lambda role). */
  readonly credentials?: AwsCredentialsProvider;
  readonly clock?: Clock;
  readonly tokenReuseMs?: number;
  /** Per-request timeout of the AWS clients this module creates itself. */
  readonly requestTimeoutMs: number;
}

const EKS_USER = 'podmutation-sync-eks-token';

/** The connection pool client-node hands each request (an undici Dispatcher). */
type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * A KubeConfig whose requests share one connection pool. client-node 2.0 builds a new undici Agent for every request
 * (KubeConfig.applySecurityAuthentication), so every request opened its own TLS connection and left it open until
 * the agent's idle timeout: about 5 ms of CPU per request for the handshake, and a file descriptor per request in
 * flight or idle (a sync of 5,000 rules wrote only 1,462 statuses within its 10 s budget). The first agent is kept
 * and handed to every later request instead; the TLS settings it carries come from this KubeConfig, which a
 * connection never changes. Requests over node:https get one keep-alive agent of their own, built the same way.
 */
class PooledKubeConfig extends KubeConfig {
  #dispatcher: Dispatcher | undefined;
  #agent: Agent | undefined;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (fresh === undefined) return;
    this.#dispatcher ??= fresh;
    context.setDispatcher(this.#dispatcher);
  }

  /** See Connection.httpsOptions. */
  async httpsOptions(): Promise<RequestOptions> {
    const options: RequestOptions = {};
    // Certificates and the server name from the cluster and user, the Authorization header from the token or the
    // authenticator (a current EKS token); the agent client-node puts in it does not keep connections alive.
    await this.applyToHTTPSOptions(options);
    const { ca, cert, key, servername, rejectUnauthorized, headers, auth } = options;
    this.#agent ??= new Agent({
      keepAlive: true,
      ca,
      cert,
      key,
      ...(servername === undefined ? {} : { servername }),
      ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
    });
    return { agent: this.#agent, headers, ...(auth === undefined ? {} : { auth }) };
  }
}

/** The connection of a PooledKubeConfig. */
function connectionOf(kubeConfig: PooledKubeConfig, server: string): Connection {
  return { kubeConfig, server, httpsOptions: () => kubeConfig.httpsOptions() };
}

/** A cluster configuration that needs no network: a kubeconfig file or text. */
type LocalClusterConfig = Extract<ClusterConfig, { mode: 'kubeconfigFile' | 'kubeconfigText' }>;

/** A configuration that is resolved over the network: a kubeconfig secret or an EKS cluster. */
type RemoteClusterConfig = Exclude<ClusterConfig, LocalClusterConfig>;

/** Loads and checks a local kubeconfig now; throws ConfigurationError naming the problem. */
function connectLocal(config: LocalClusterConfig): Connection {
  if (config.mode === 'kubeconfigText')
    return checkedConnection(
      parsedKubeconfig(config.text, 'the kubeconfig text'),
      'the kubeconfig text',
      config.context,
    );
  const paths = [config.path, ...(config.mergedWith ?? [])];
  const origin = paths.length === 1 ? `kubeconfig file ${config.path}` : `kubeconfig files ${paths.join(', ')}`;
  return checkedConnection(mergedKubeconfig(paths), origin, config.context);
}

/** Fetches the kubeconfig secret or describes the EKS cluster, and builds the connection. */
async function connectRemote(config: RemoteClusterConfig, dependencies: ConnectionDependencies): Promise<Connection> {
  if (config.mode === 'eks') return eksConnection(config.clusterName, config.region, dependencies);
  const text = await readKubeconfigSecret(config.secretArn, config.region, dependencies);
  const origin = `the kubeconfig in secret ${config.secretArn}`;
  return checkedConnection(parsedKubeconfig(text, origin), origin, config.context);
}

/**
 * Kubeconfig files merged as kubectl merges a $KUBECONFIG list (k8s.io/client-go/tools/clientcmd, loader.go): the
 * first file to define a cluster, user or context name, or to set current-context, wins; relative certificate paths
 * resolve against the folder of the file that holds them.
 */
function mergedKubeconfig(paths: readonly string[]): PooledKubeConfig {
  const merged = new PooledKubeConfig();
  merged.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
  for (const path of paths) {
    const one = parsedKubeconfig(readKubeconfigFile(path), `kubeconfig file ${path}`);
    one.makePathsAbsolute(dirname(path));
    const unseen = <T extends { name: string }>(known: readonly T[], more: readonly T[]): T[] =>
      more.filter((entry) => !known.some((seen) => seen.name === entry.name));
    merged.loadFromOptions({
      clusters: [...merged.clusters, ...unseen(merged.clusters, one.clusters)],
      users: [...merged.users, ...unseen(merged.users, one.users)],
      contexts: [...merged.contexts, ...unseen(merged.contexts, one.contexts)],
      currentContext: merged.getCurrentContext() || (one.getCurrentContext() ?? ''),
    });
  }
  return merged;
}

function readKubeconfigFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigurationError(`cannot read kubeconfig file ${path}: ${innermostMessage(error)}`, {
      cause: error,
      context: { path },
    });
  }
}

/** Parses kubeconfig YAML; an empty text is an empty kubeconfig, as kubectl reads one. */
function parsedKubeconfig(text: string, origin: string): PooledKubeConfig {
  const kubeConfig = new PooledKubeConfig();
  if (text.trim() === '') {
    kubeConfig.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: '' });
    return kubeConfig;
  }
  try {
    kubeConfig.loadFromString(text);
  } catch (error) {
    if (error instanceof Error && error.name === 'YAMLException') {
      // js-yaml's message quotes the offending lines, which may hold a token: keep only its reason and position.
      const { reason, mark } = error as Error & { reason?: string; mark?: { line?: number } };
      const line = mark?.line === undefined ? '' : ` at line ${mark.line + 1}`;
      throw new ConfigurationError(`${origin} is not valid YAML: ${reason ?? 'parse error'}${line}`);
    }
    throw new ConfigurationError(`${origin} is not a kubeconfig: ${innermostMessage(error)}`, { cause: error });
  }
  return kubeConfig;
}

/** Checks that the kubeconfig's current context (or `context`) names a cluster reached over verified TLS. */
function checkedConnection(kubeConfig: PooledKubeConfig, origin: string, context: string | undefined): Connection {
  if (context !== undefined) {
    if (kubeConfig.getContextObject(context) === null) {
      throw new ConfigurationError(`${origin} has no context "${context}"`, { context: { kubeContext: context } });
    }
    kubeConfig.setCurrentContext(context);
  }
  const contextName = kubeConfig.getCurrentContext();
  if (!contextName) throw new ConfigurationError(`${origin} has no current-context; set one or choose a context`);
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) {
    throw new ConfigurationError(`${origin}: context "${contextName}" names a cluster that is not defined`);
  }
  if (kubeConfig.getCurrentUser() === null) {
    throw new ConfigurationError(`${origin}: context "${contextName}" names a user that is not defined`);
  }
  if (!cluster.server.startsWith('https://')) {
    throw new ConfigurationError(
      `${origin}: cluster "${cluster.name}" server must be an https:// URL, got "${cluster.server}"`,
    );
  }
  if (cluster.skipTLSVerify) {
    throw new ConfigurationError(
      `${origin}: cluster "${cluster.name}" sets insecure-skip-tls-verify; podmutation only talks to an API server it can verify (give certificate-authority-data)`,
    );
  }
  return connectionOf(kubeConfig, cluster.server);
}

/** GetSecretValue's SecretString: the kubeconfig YAML. */
async function readKubeconfigSecret(
  secretArn: string,
  region: string,
  dependencies: ConnectionDependencies,
): Promise<string> {
  const reader =
    dependencies.secretsManagerClient ??
    secretReaderFor(secretArn, { requestTimeoutMs: dependencies.requestTimeoutMs });
  const operation: ClusterOperation = {
    action: `reading the kubeconfig secret ${secretArn}`,
    notFoundHint: 'the secret does not exist',
    target: `Secrets Manager in ${region}`,
    context: { secretArn },
  };
  const read = await readSecretString(reader, secretArn);
  if ('failure' in read)
    throw awsFailure(
      operation,
      read.failure,
      'the sync role lacks secretsmanager:GetSecretValue (or kms:Decrypt) on the secret',
    );
  if ('empty' in read) {
    throw clusterError(
      operation,
      'configuration',
      'the secret has no SecretString; store the kubeconfig YAML as the secret string',
    );
  }
  return read.text;
}

/** Describes the EKS cluster and builds a KubeConfig whose every request carries a current EKS token. */
async function eksConnection(
  clusterName: string,
  region: string,
  dependencies: ConnectionDependencies,
): Promise<Connection> {
  const client =
    dependencies.eksClient ??
    new EKSClient({
      region,
      requestHandler: { requestTimeout: dependencies.requestTimeoutMs, throwOnRequestTimeout: true },
    });
  const operation: ClusterOperation = {
    action: `describing EKS cluster ${clusterName}`,
    notFoundHint: `there is no EKS cluster "${clusterName}" in ${region}`,
    target: `EKS in ${region}`,
    context: { clusterName, region },
  };
  let endpoint: string | undefined;
  let caData: string | undefined;
  let status: string | undefined;
  try {
    const { cluster } = await client.send(new DescribeClusterCommand({ name: clusterName }));
    endpoint = cluster?.endpoint;
    caData = cluster?.certificateAuthority?.data;
    status = cluster?.status;
  } catch (error) {
    throw awsFailure(operation, error, 'the sync role lacks eks:DescribeCluster on the cluster');
  }
  if (endpoint === undefined || caData === undefined || !endpoint.startsWith('https://')) {
    throw clusterError(
      operation,
      'configuration',
      `the cluster has no https endpoint or certificate authority yet (status ${status ?? 'unknown'})`,
      { context: { status } },
    );
  }
  const tokens = createEksTokenProvider({
    clusterName,
    region,
    credentials: dependencies.credentials ?? defaultProvider(),
    clock: dependencies.clock,
    reuseForMs: dependencies.tokenReuseMs,
  });
  const kubeConfig = new PooledKubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: clusterName, server: endpoint, caData, skipTLSVerify: false }],
    users: [{ name: EKS_USER }],
    contexts: [{ name: clusterName, cluster: clusterName, user: EKS_USER }],
    currentContext: clusterName,
  });
  // client-node asks the authenticator on every request, so each request carries the provider's current token.
  kubeConfig.addAuthenticator({
    isAuthProvider: (user) => user.name === EKS_USER,
    // The declared options type also names ws's ClientOptions, whose types the project does not install.
    applyAuthentication: async (_user, options: RequestOptions) => {
      options.headers = { ...options.headers, Authorization: `Bearer ${await tokens.token()}` };
    },
  });
  return connectionOf(kubeConfig, endpoint);
}

/** Maps an AWS SDK error to a ClusterError reason. */
function awsFailure(operation: ClusterOperation, error: unknown, forbiddenHint: string): Error {
  const name = error instanceof Error ? error.name : 'Error';
  const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  const reason = awsReason(name, status);
  const hint =
    reason === 'forbidden' ? ` (${forbiddenHint})` : reason === 'notFound' ? ` (${operation.notFoundHint})` : '';
  return clusterError(operation, reason, `${name}: ${innermostMessage(error)}${hint}`, {
    cause: error,
    context: status === undefined ? { awsError: name } : { awsError: name, status },
  });
}

function awsReason(name: string, status: number | undefined): ClusterFailureReason {
  if (name === 'AccessDeniedException' || status === 403) return 'forbidden';
  if (name === 'ResourceNotFoundException' || status === 404) return 'notFound';
  if (
    ['UnrecognizedClientException', 'InvalidClientTokenId', 'ExpiredTokenException'].includes(name) ||
    status === 401
  ) {
    return 'unauthorized';
  }
  if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
  if (status === undefined) return 'network';
  if (status >= 500 || status === 429) return 'server';
  return 'rejected';
}

/** The namespace a local kubeconfig's context (the current one, or `context`) names, as kubectl reads it: "default" when it names none. */
function contextNamespace(config: LocalClusterConfig): string {
  const { kubeConfig } = connectLocal(config);
  return kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace || 'default';
}

export { connectLocal, connectRemote, contextNamespace };
export type { Connection, LocalClusterConfig };
