/**
 * A small HTTPS client of the API server for the suite's own steps (creating Nodes, marking Pods Running, reading
 * /metrics): JSON in, JSON out, one request per call, and a watch stream. The code under test never uses it; it talks
 * to the API server through @kubernetes/client-node, and people through kubectl.
 */
import { Agent, request as httpsRequest } from 'node:https';

type Json = Record<string, unknown>;

/** One answer of the API server. */
interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** How to reach and authenticate to the API server: a client certificate or a bearer token. */
interface ApiCredentials {
  readonly server: string;
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
}

interface RequestOptions {
  readonly body?: unknown;
  readonly contentType?: string;
  readonly query?: Readonly<Record<string, string>>;
}

/** A watch event as the API server streams it. */
interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: Json;
}

interface ApiClient {
  request(method: string, path: string, options?: RequestOptions): Promise<ApiAnswer>;
  /** As request, but fails unless the status is 2xx, and returns the decoded body. */
  json<T = Json>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /** Streams events of `path` from `resourceVersion` until `signal` aborts or the server ends the watch. */
  watch(
    path: string,
    resourceVersion: string,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void>;
  close(): void;
}

/** Raised for a non-2xx answer of `json`, with the status and the server's message. */
class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError';
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly text: string,
  ) {
    super(`${method} ${path}: HTTP ${status}: ${text.slice(0, 600)}`);
  }
}

function createApiClient(credentials: ApiCredentials): ApiClient {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: 32,
    ca: credentials.ca,
    ...(credentials.cert === undefined ? {} : { cert: credentials.cert, key: credentials.key }),
  });
  const base = new URL(credentials.server);
  const authorization = credentials.token === undefined ? {} : { authorization: `Bearer ${credentials.token}` };

  function urlOf(path: string, query: Readonly<Record<string, string>> = {}): URL {
    const url = new URL(path, base);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url;
  }

  function request(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer> {
    const payload =
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body);
    const headers = {
      accept: 'application/json',
      ...authorization,
      ...(payload === undefined
        ? {}
        : { 'content-type': options.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) }),
    };
    return new Promise((resolve, reject) => {
      const outgoing = httpsRequest(urlOf(path, options.query), { method, agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          if ((response.headers['content-type'] ?? '').includes('json')) {
            try {
              body = JSON.parse(text);
            } catch {
              body = text;
            }
          }
          resolve({ status: response.statusCode ?? 0, body, text, headers: response.headers });
        });
      });
      outgoing.setTimeout(60_000, () => outgoing.destroy(new Error(`${method} ${path}: no answer within 60 s`)));
      outgoing.on('error', reject);
      outgoing.end(payload);
    });
  }

  async function json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const answer = await request(method, path, options);
    if (answer.status < 200 || answer.status > 299) throw new ApiStatusError(answer.status, method, path, answer.text);
    return answer.body as T;
  }

  function watch(
    path: string,
    resourceVersion: string,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const query = { watch: '1', resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: '300' };
      const outgoing = httpsRequest(
        urlOf(path, query),
        { method: 'GET', agent, headers: { accept: 'application/json', ...authorization }, signal },
        (response) => {
          if (response.statusCode !== 200) {
            response.resume();
            reject(new ApiStatusError(response.statusCode ?? 0, 'WATCH', path, ''));
            return;
          }
          let buffered = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            buffered += chunk;
            let newline = buffered.indexOf('\n');
            while (newline >= 0) {
              const line = buffered.slice(0, newline).trim();
              buffered = buffered.slice(newline + 1);
              if (line !== '') onEvent(JSON.parse(line) as WatchEvent);
              newline = buffered.indexOf('\n');
            }
          });
          response.on('end', () => resolve());
          response.on('error', (error) => (signal.aborted ? resolve() : reject(error)));
        },
      );
      outgoing.on('error', (error) => (signal.aborted ? resolve() : reject(error)));
      outgoing.end();
    });
  }

  return { request, json, watch, close: () => agent.destroy() };
}

export { createApiClient, ApiStatusError };
export type { ApiClient, ApiAnswer, ApiCredentials, WatchEvent, Json };
