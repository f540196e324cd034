/**
 * The local webhook server: Node HTTP(S) in front of the same admission handler the Lambda runs, with the same
 * snapshot store and cache over an embedded DynamoDB, so local and deployed behaviour are one code path.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { DEFAULT_ENFORCEMENT, describeIssues, POD_PLACEMENT_KIND, type Enforcement } from '../api/index.ts';
import { ConfigurationError, errorLogFields } from '../errors/index.ts';
import {
  checkedToken,
  createAdmissionHandler,
  createAdmissionRulesCache,
  generateToken,
  DEFAULT_MAX_BODY_BYTES,
} from '../endpoint/index.ts';
import { checkedStampKey, createStampSource, generateStampKey } from '../stamp/index.ts';
import type { AdmissionHandler } from '../endpoint/index.ts';
import { DISCARDED_LOGGER, DISCARDED_METRICS, type Logger } from '../observability/index.ts';
import type { CapacityFlavour, PlacementPolicy } from '../placement/index.ts';
import { createDynamoClient, createSnapshotTable, openRulesTable, type RulesTable } from '../store/index.ts';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../store/embedded/index.ts';
import { isAdmissionRoute, requestHead, toHttpApiEvent, writeHttpApiResult } from './event.ts';
import type { RulePublication, RuleSource, RuleTable } from './source.ts';

/** PEM certificate chain and private key for HTTPS. */
interface TlsFiles {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

/**
 * Options of the local server; everything but the rule source has a default.
 * @internal Exported for tests: the tests type the options they start the server with.
 */
interface LocalServerOptions {
  readonly rules: RuleSource;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 8443 with TLS, else 8080; 0 picks a free port. */
  readonly port?: number;
  /** The path token; a random 32-byte base64url token when absent. */
  readonly token?: string;
  readonly tls?: TlsFiles;
  /** Republish when the rule source signals a change. */
  readonly watch?: boolean;
  /** Cache refresh interval in seconds, as RULES_REFRESH_SECONDS (default 30; fractions allowed). */
  readonly refreshSeconds?: number;
  /** Default "default", as CLUSTER_ID. */
  readonly clusterId?: string;
  readonly maxBodyBytes?: number;
  /** The admission log; discarded when absent. */
  readonly logger?: Logger;
  /** Messages for the operator: publications, invalid rules, failed republications. */
  readonly report?: (line: string) => void;
  /** Placement policies published into the embedded store, applied by the managed capacity step. */
  readonly placements?: readonly PlacementPolicy[];
  /** As CAPACITY_FLAVOUR; default karpenter. */
  readonly capacityFlavour?: CapacityFlavour;
  /** As ENFORCEMENT; default enforce. */
  readonly enforcement?: Enforcement;
  /** As STAMP_KEY: the key of the stamps on the Pods the server changes; a random one for the server's life when absent. */
  readonly stampKey?: string;
}

/**
 * A running local server.
 * @internal Exported for tests: the tests type the server they start.
 */
interface LocalServer {
  /** The URL for clientConfig.url of a MutatingWebhookConfiguration; it carries the token. */
  readonly url: string;
  readonly token: string;
  /** Stops watching, the HTTP server and the embedded DynamoDB; idempotent. */
  close(): Promise<void>;
}

const TABLE_NAME = 'podmutation-rules';
/**
 * What the server uses when an option is not given; `podmutation serve --help` states them (a test checks it).
 * @internal Exported for tests: the help test checks serve's documented defaults against these.
 */
const LOCAL_SERVER_DEFAULTS = {
  host: '127.0.0.1',
  httpPort: 8080,
  httpsPort: 8443,
  refreshSeconds: 30,
  clusterId: 'default',
} as const;
// The embedded store cannot go away under the server, so staleness only matters if it is somehow wedged.
const MIN_MAX_STALE_SECONDS = 300;

/**
 * Connection limits, set explicitly rather than left at Node's defaults (a 300 s request timeout, no connection cap):
 * the API server waits at most 30 s for a webhook, so a client that has not sent its headers within 5 s, or its whole
 * request within 10 s, is a slow client and is cut. Node checks these every connectionsCheckingInterval.
 */
const CONNECTION_LIMITS = Object.freeze({
  headersTimeout: 5_000,
  requestTimeout: 10_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
});
/** Open connections at most; `npm run load` uses 200. */
const MAX_CONNECTIONS = 512;
// API Gateway's answer for a request no route matches.
const NOT_FOUND = {
  statusCode: 404,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: 'Not Found' }),
};

/** The body, keeping at most limit + 1 bytes (enough for the handler to answer 413) while draining the rest. */
function readCappedBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    request.on('data', (chunk: Buffer) => {
      const room = limit + 1 - kept;
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(part);
      kept += part.length;
    });
    request.on('end', () => resolve(Buffer.concat(chunks, kept)));
    request.on('error', reject);
  });
}

function requestListener(handler: AdmissionHandler, maxBodyBytes: number, logger: Logger) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const head = requestHead(request);
    // Only the route API Gateway has reaches the handler; everything else ends here, as it ends at API Gateway.
    if (!isAdmissionRoute(head)) {
      request.resume();
      writeHttpApiResult(response, NOT_FOUND);
      return;
    }
    readCappedBody(request, maxBodyBytes)
      .then((body) => handler(toHttpApiEvent(head, body, new Date())))
      .then((result) => writeHttpApiResult(response, result))
      .catch((error: unknown) => {
        // The handler never throws; this is a broken connection or a bug in the adapter.
        logger.error('local server request failed', {
          ...errorLogFields(error),
        });
        if (!response.headersSent) {
          writeHttpApiResult(response, {
            statusCode: 500,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ error: 'InternalError', message: 'the local server could not handle the request' }),
          });
        } else response.destroy();
      });
  };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error): void =>
      reject(
        new ConfigurationError(`the local server cannot listen on ${host}:${port}: ${error.message}`, { cause: error }),
      );
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function describePublication(publication: RulePublication, source: RuleSource): string {
  const { outcome } = publication;
  const { placements } = publication;
  const placementCounts =
    placements === undefined || placements.valid + placements.invalid.length === 0
      ? ''
      : `; PodPlacements: ${placements.valid} valid, ${placements.invalid.length} invalid`;
  const counts = `${publication.rules} valid, ${publication.invalid.length} invalid${placementCounts}`;
  return outcome.published
    ? `published snapshot version ${outcome.version} from ${source.description} (${counts})`
    : `rules from ${source.description} are unchanged; snapshot version ${outcome.version} stays current (${counts})`;
}

function invalidRuleLines(publication: RulePublication): string[] {
  return [
    ...publication.invalid.flatMap((invalid) => describeIssues(invalid).map((line) => `invalid rule skipped: ${line}`)),
    ...(publication.placements?.invalid ?? []).flatMap((invalid) =>
      describeIssues(invalid, POD_PLACEMENT_KIND).map((line) => `invalid placement skipped: ${line}`),
    ),
  ];
}

/** What is republished: a rule source, into one cluster's snapshots of a table. */
interface Republished {
  readonly source: RuleSource;
  readonly table: RuleTable;
  readonly clusterId: string;
}

/** Publishes at start, then on every change; changes during a publication are folded into one more run. */
function createRepublisher(
  { source, table, clusterId }: Republished,
  report: (line: string) => void,
  published: () => Promise<void>,
) {
  let running: Promise<void> | undefined;
  let again = false;
  async function run(): Promise<void> {
    do {
      again = false;
      try {
        const publication = await source.publishRules(table, clusterId);
        // The cache reads the new version before the line says it is published: the next review gets it.
        if (publication.outcome.published) await published();
        for (const line of invalidRuleLines(publication)) report(line);
        report(describePublication(publication, source));
      } catch (error) {
        report(`rules not republished, the last published snapshot stays current: ${(error as Error).message}`);
      }
    } while (again);
  }
  return {
    republish(): void {
      if (running !== undefined) {
        again = true;
        return;
      }
      running = run().finally(() => {
        running = undefined;
      });
    },
    settled: (): Promise<void> => running ?? Promise.resolve(),
  };
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Starts the local webhook server: publishes the source's rules into an embedded DynamoDB, serves POST
 * /admit/{token} through createAdmissionHandler over the same snapshot cache the Lambda uses, and with `watch`
 * republishes on change (served once the cache refreshes). Rejects, leaving nothing running, when the first
 * publication or listening fails.
 */
async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const token = options.token === undefined ? generateToken() : checkedToken(options.token, 'the token option');
  const stampKey =
    options.stampKey === undefined ? generateStampKey() : checkedStampKey(options.stampKey, 'the stampKey option');
  const host = options.host ?? LOCAL_SERVER_DEFAULTS.host;
  const port =
    options.port ?? (options.tls === undefined ? LOCAL_SERVER_DEFAULTS.httpPort : LOCAL_SERVER_DEFAULTS.httpsPort);
  const clusterId = options.clusterId ?? LOCAL_SERVER_DEFAULTS.clusterId;
  const refreshSeconds = options.refreshSeconds ?? LOCAL_SERVER_DEFAULTS.refreshSeconds;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const logger = options.logger ?? DISCARDED_LOGGER;
  const report = options.report ?? (() => undefined);

  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanUp = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  };
  try {
    const table = await openEmbeddedTable(clusterId, cleanups);
    await publishFirst(options, table, clusterId, report);
    const cache = createAdmissionRulesCache({
      snapshots: table.snapshots,
      placements: table.placements,
      clusterId,
      refreshSeconds,
      maxStaleSeconds: Math.max(MIN_MAX_STALE_SECONDS, refreshSeconds),
      capacityFlavour: options.capacityFlavour ?? 'karpenter',
      onRefreshFailure: (error) => report(`rule refresh failed, serving the last snapshot: ${error.message}`),
    });
    // One array for the server's life: the comparer reuses its digests while the accepted set is the same object.
    const accepted: Promise<readonly string[]> = Promise.resolve([token]);
    const handler = createAdmissionHandler({
      rules: cache,
      acceptedTokens: () => accepted,
      logger,
      metrics: DISCARDED_METRICS,
      maxBodyBytes,
      enforcement: options.enforcement ?? DEFAULT_ENFORCEMENT,
      stamps: createStampSource({ kind: 'literal', key: stampKey }),
      diversityCounters: table.diversityCounters,
    });
    const boundPort = await serveHandler(options, handler, { host, port, maxBodyBytes, logger }, cleanups);
    if (options.watch === true) {
      const republisher = createRepublisher({ source: options.rules, table, clusterId }, report, () =>
        cache.refreshNow(),
      );
      const stopWatching = options.rules.watch(() => republisher.republish());
      cleanups.push(() => republisher.settled());
      cleanups.push(stopWatching);
    }
    const scheme = options.tls === undefined ? 'http' : 'https';
    let closing: Promise<void> | undefined;
    return {
      url: `${scheme}://${urlHost(host)}:${boundPort}/admit/${token}`,
      token,
      close: () => (closing ??= cleanUp()),
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** Starts an embedded DynamoDB with the rules table; its cleanups join the server's. */
async function openEmbeddedTable(clusterId: string, cleanups: (() => Promise<void> | void)[]): Promise<RulesTable> {
  const dynamo: EmbeddedDynamo = await startEmbeddedDynamo();
  cleanups.push(() => dynamo.close());
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  cleanups.push(() => client.destroy());
  await createSnapshotTable(client, TABLE_NAME);
  return openRulesTable({ client, tableName: TABLE_NAME, clusterId });
}

/** The first publication of the rules, and of the placement policies when given; each reported. */
async function publishFirst(
  options: LocalServerOptions,
  table: RulesTable,
  clusterId: string,
  report: (line: string) => void,
): Promise<void> {
  const first = await options.rules.publishRules(table, clusterId);
  for (const line of invalidRuleLines(first)) report(line);
  report(describePublication(first, options.rules));
  if (options.placements !== undefined && options.placements.length > 0) {
    await table.placements.replacePlacements(options.placements);
    report(`published ${options.placements.length} placement policies`);
  }
}

/** Listens with the handler over HTTP or HTTPS; the port it is bound to. */
async function serveHandler(
  options: LocalServerOptions,
  handler: AdmissionHandler,
  listening: { readonly host: string; readonly port: number; readonly maxBodyBytes: number; readonly logger: Logger },
  cleanups: (() => Promise<void> | void)[],
): Promise<number> {
  const listener = requestListener(handler, listening.maxBodyBytes, listening.logger);
  const server =
    options.tls === undefined
      ? createHttpServer(CONNECTION_LIMITS, listener)
      : createHttpsServer({ ...CONNECTION_LIMITS, ...options.tls }, listener);
  server.maxConnections = MAX_CONNECTIONS;
  const boundPort = await listen(server, listening.port, listening.host);
  cleanups.push(() => closeServer(server));
  return boundPort;
}

export { startLocalServer, CONNECTION_LIMITS, MAX_CONNECTIONS, LOCAL_SERVER_DEFAULTS };
export type { LocalServer, LocalServerOptions, TlsFiles };
