import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import {
  CONNECTION_LIMITS,
  MAX_CONNECTIONS,
  createFileRuleSource,
  startLocalServer,
} from '../../lib/local-server/index.ts';
import { EXAMPLES, fixturePath, fixtureText } from '../support/fixtures.ts';
import { parseReview } from '../support/reviews.ts';
import { type LocalServer, type LocalServerOptions } from '../../lib/local-server/server.ts';

const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const TOKEN = 'server-test-token-0123456789abcdefghijkl';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(options: Partial<LocalServerOptions> = {}): Promise<LocalServer> {
  const server = await startLocalServer({ rules: createFileRuleSource([EXAMPLES]), port: 0, token: TOKEN, ...options });
  cleanups.push(() => server.close());
  return server;
}

/** The status code of a raw HTTP/1.1 request, for request targets fetch() would normalise. */
function rawStatus(port: number, request: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (match !== null) {
        socket.destroy();
        resolve(Number(match[1]));
      }
    });
    socket.on('error', reject);
  });
}

async function copyOfExamples(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'podmutation-serve-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  await cp(EXAMPLES, folder, { recursive: true });
  return folder;
}

function post(url: string, body: string | Uint8Array, contentType = 'application/json'): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
}

describe('startLocalServer over HTTP', () => {
  it('prints a webhook URL on 127.0.0.1 that carries the token', async () => {
    const server = await serve();

    expect(server.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/admit/${TOKEN}$`));
    expect(server.token).toBe(TOKEN);
  });

  it('generates a 32-byte base64url token when none is given', async () => {
    const server = await serve({ token: undefined });

    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(server.url.endsWith(`/admit/${server.token}`)).toBe(true);
  });

  it('answers a valid review with the mutation of the example rules', async () => {
    const server = await serve();

    const response = await post(server.url, REVIEW);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const { response: answer } = (await response.json()) as { response: { uid: string; patchType: string } };
    expect(answer).toMatchObject({ uid: parseReview(REVIEW).request.uid, patchType: 'JSONPatch' });
  });

  it('answers 403 for a wrong token', async () => {
    const server = await serve();

    const response = await post(server.url.replace(TOKEN, `${TOKEN.slice(0, -1)}x`), REVIEW);

    expect(response.status).toBe(403);
  });

  it('answers 400 for a garbage body', async () => {
    const server = await serve();

    const response = await post(server.url, 'garbage{');

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'MalformedInputError' });
  });

  it('answers 413 for a body above the default 3 MiB limit', async () => {
    const server = await serve();

    const response = await post(server.url, 'x'.repeat(3 * 1024 * 1024 + 1));

    expect(response.status).toBe(413);
  });

  it('answers 415 for a binary body, which reaches the handler base64-encoded', async () => {
    const server = await serve();

    const response = await post(server.url, new Uint8Array([0xff, 0xfe, 0x00, 0x01]), 'application/octet-stream');

    expect(response.status).toBe(415);
  });

  it('answers a GET with 404, as API Gateway does for a method its route does not have', async () => {
    const server = await serve();

    const response = await fetch(server.url);

    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: 'Not Found' });
  });

  it.each([
    ['a prefix before /admit/', (token: string) => `/foo/admit/${token}`],
    ['a doubled leading slash', (token: string) => `//admit/${token}`],
    ['a segment after the token', (token: string) => `/admit/${token}/more`],
  ])('answers 404 for a path with %s: the route is anchored', async (_, path) => {
    const server = await serve();
    const { port } = new URL(server.url);

    const status = await rawStatus(
      Number(port),
      `POST ${path(TOKEN)} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${REVIEW.length}\r\nConnection: close\r\n\r\n${REVIEW}`,
    );

    expect(status).toBe(404);
  });

  it('answers the route with a trailing slash, as API Gateway does', async () => {
    const server = await serve();

    const response = await post(`${server.url}/`, REVIEW);

    expect(response.status).toBe(200);
  });

  it('echoes at most a bounded prefix of a 2 MB apiVersion in the 400 body and the log line', async () => {
    const records: { fields: Record<string, unknown> }[] = [];
    const keep = (_message: string, fields: Record<string, unknown>) => records.push({ fields });
    const server = await serve({ logger: { info: keep, warn: keep, error: keep } });
    const huge = JSON.stringify({ ...JSON.parse(REVIEW), apiVersion: 'v'.repeat(2 * 1024 * 1024) });

    const response = await post(server.url, huge);

    expect(response.status).toBe(400);
    const body = await response.text();
    expect(body.length).toBeLessThan(600);
    expect(body).toContain('(2097152 characters)');
    expect(records).toHaveLength(1);
    expect(JSON.stringify(records[0]!.fields).length).toBeLessThan(1000);
  });

  it('reports invalid rules with their reasons and publishes the valid ones', async () => {
    const lines: string[] = [];
    const server = await serve({
      rules: createFileRuleSource([EXAMPLES, fixturePath('rules/invalid')]),
      report: (line) => lines.push(line),
    });

    const response = await post(server.url, REVIEW);

    expect(response.status).toBe(200);
    expect(lines.some((line) => line.startsWith('invalid rule skipped: PodMutation "force-spot": '))).toBe(true);
    expect(lines.at(-1)).toMatch(/^published snapshot version 1 from files .* \(5 valid, 1 invalid\)$/);
  });

  it('rejects when the rule files cannot be read, leaving nothing listening', async () => {
    await expect(startLocalServer({ rules: createFileRuleSource(['/nonexistent/rules']), port: 0 })).rejects.toThrow(
      'rules path /nonexistent/rules cannot be read: no such file or folder (ENOENT)',
    );
  });
});

describe('startLocalServer connection limits', () => {
  it("cuts a client that sends its headers one byte every 2 s within seconds, not after Node's default 300 s", async () => {
    const server = await serve();
    const { port } = new URL(server.url);
    const started = performance.now();
    const request = `POST /admit/${TOKEN} HTTP/1.1\r\nHost: x\r\n`;
    let sent = 0;
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request[sent++]!));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    // Read what the server sends (its 408), so that its close reaches this end.
    socket.resume();
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write(request[sent++ % request.length]!);
    }, 2_000);

    await closed;
    clearInterval(drip);

    const seconds = (performance.now() - started) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(CONNECTION_LIMITS.headersTimeout / 1000 - 0.5);
    expect(seconds).toBeLessThan(
      (CONNECTION_LIMITS.headersTimeout + 2 * CONNECTION_LIMITS.connectionsCheckingInterval) / 1000 + 1,
    );
  }, 20_000);

  it(`refuses connections beyond ${MAX_CONNECTIONS} open ones`, async () => {
    const server = await serve();
    const port = Number(new URL(server.url).port);
    const open = await Promise.all(
      Array.from(
        { length: MAX_CONNECTIONS },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => resolve(socket));
          }),
      ),
    );
    cleanups.push(() => {
      for (const socket of open) socket.destroy();
      return Promise.resolve();
    });

    const extra = connect(port, '127.0.0.1');
    extra.on('error', () => undefined);
    const outcome = await new Promise<string>((resolve) => {
      extra.on('close', () => resolve('closed'));
      extra.on('data', () => resolve('answered'));
      extra.write(`POST /admit/${TOKEN} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
    });

    expect(outcome).toBe('closed');
  });
});

describe('startLocalServer with --watch', () => {
  it('serves the changed rules after a rule file changes and the cache refreshes', async () => {
    const folder = await copyOfExamples();
    const server = await serve({
      rules: createFileRuleSource([folder], { debounceMs: 50 }),
      watch: true,
      refreshSeconds: 0.2,
    });
    const before = (await (await post(server.url, REVIEW)).json()) as { response: { patch?: string } };
    expect(before.response.patch).toBeDefined();

    const file = join(folder, 'migrate-legacy-pool.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('enable: true', 'enable: false'));

    await expect
      .poll(
        async () =>
          ((await (await post(server.url, REVIEW)).json()) as { response: { patch?: string } }).response.patch,
        {
          timeout: 5_000,
          interval: 100,
        },
      )
      .toBeUndefined();
  });

  it('answers with the changed rules as soon as it says it published them, whatever the refresh interval', async () => {
    const folder = await copyOfExamples();
    const lines: string[] = [];
    const server = await serve({
      rules: createFileRuleSource([folder], { debounceMs: 50 }),
      watch: true,
      refreshSeconds: 30,
      report: (line) => lines.push(line),
    });
    const before = (await (await post(server.url, REVIEW)).json()) as { response: { patch?: string } };
    expect(before.response.patch).toBeDefined();

    const file = join(folder, 'migrate-legacy-pool.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('enable: true', 'enable: false'));
    await expect
      .poll(() => lines.some((line) => line.startsWith('published snapshot version 2')), {
        timeout: 5_000,
        interval: 20,
      })
      .toBe(true);

    const after = (await (await post(server.url, REVIEW)).json()) as { response: { patch?: string } };
    expect(after.response.patch).toBeUndefined();
  });

  it('keeps serving the last rules when a changed file no longer parses', async () => {
    const folder = await copyOfExamples();
    const lines: string[] = [];
    const server = await serve({
      rules: createFileRuleSource([folder], { debounceMs: 50 }),
      watch: true,
      refreshSeconds: 0.2,
      report: (line) => lines.push(line),
    });

    await writeFile(join(folder, 'migrate-legacy-pool.yaml'), 'spec: [unclosed');
    await expect
      .poll(() => lines.some((line) => line.startsWith('rules not republished')), { timeout: 5_000 })
      .toBe(true);

    const response = (await (await post(server.url, REVIEW)).json()) as { response: { patch?: string } };
    expect(response.response.patch).toBeDefined();
  });
});

describe('startLocalServer over HTTPS', () => {
  it('serves the webhook with the given certificate', async () => {
    const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    });
    const server = await serve({ tls: { cert: pems.cert, key: pems.private } });

    const status = await new Promise<number | undefined>((resolve, reject) => {
      const request = httpsRequest(
        server.url,
        { method: 'POST', ca: pems.cert, headers: { 'content-type': 'application/json' } },
        (response) => {
          response.resume();
          resolve(response.statusCode);
        },
      );
      request.on('error', reject);
      request.end(REVIEW);
    });

    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/admit\//);
    expect(status).toBe(200);
  });
});
