/**
 * `osls offline --stage local`, the local profile, as a user runs it in a copy of the project: the real osls CLI and
 * serverless-offline with no AWS credentials, serving the freshly built admission function on POST /admit/{token}
 * against the embedded DynamoDB holding the example rules; a real AdmissionReview answered as the engine answers it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerAdmissionReview } from '../../lib/admission/index.ts';
import { compileRuleSet, STAMP_ANNOTATION } from '../../lib/engine/index.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import { KEYLESS_STAMPS } from '../../lib/stamp/index.ts';
import { EXAMPLES, fixtureText } from '../support/fixtures.ts';
import { freePort } from '../support/ports.ts';
import { decodePatch, parseAnswer } from '../support/reviews.ts';
import { OSLS_CLI, ROOT, createServiceFolder, offlineEnvironment } from './package.ts';

/** package.json as far as these tests read it. */
interface PackageJson {
  readonly devDependencies: Readonly<Record<string, string>>;
  readonly overrides?: Readonly<Record<string, string>>;
  readonly name?: string;
  readonly version?: string;
}

const TOKEN = 'offline-test-token-Zm9vYmFyYmF6cXV4cXV1eGNvcmdl';
const REVIEW = 'reviews/deployment-legacy-pool.json';

let scratch: string;
let serviceFolder: string;
let home: string;
let offline: ChildProcess | undefined;
let output = '';
let baseUrl: string;
let lambdaUrl: string;

/** Resolves once serverless-offline says its HTTP server is ready; rejects with the output if the CLI ends first. */
function ready(child: ChildProcess, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.includes(`Server ready: ${url}`)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code, signal) =>
      reject(new Error(`osls offline ended (${signal ?? code}) before it was ready:\n${output}`)),
    );
  });
}

/** Sends a signal to a process group; one that has already ended is no error. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Stops the CLI and everything it started (its process group): SIGTERM, which serverless-offline handles, then SIGKILL. */
async function stop(child: ChildProcess): Promise<void> {
  const { pid } = child;
  if (child.exitCode !== null || child.signalCode !== null || pid === undefined) return;
  const exited = once(child, 'exit');
  signalGroup(pid, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
  // Whatever of the group outlived the CLI.
  signalGroup(pid, 'SIGKILL');
}

const STAMP_PATH = `/metadata/annotations/${STAMP_ANNOTATION.replace('/', '~1')}`;

/** A patch's operations with the stamp's MAC taken out (the local profile's key is generated per run), and whether it had one. */
function withoutMac(patch: string | undefined): { readonly operations: unknown[]; readonly macs: number } {
  let macs = 0;
  const operations = decodePatch(patch).map((operation) => {
    if (operation.path !== STAMP_PATH || !('value' in operation)) return operation;
    const { mac, ...stamp } = JSON.parse(operation.value as string) as Record<string, unknown>;
    if (typeof mac === 'string' && mac !== '') macs += 1;
    return { ...operation, value: stamp };
  });
  return { operations, macs };
}

function post(path: string, body: string): Promise<Response> {
  return fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'podmutation-offline-'));
  serviceFolder = join(scratch, 'service');
  home = join(scratch, 'home');
  await Promise.all([mkdir(serviceFolder), mkdir(home)]);
  await createServiceFolder(serviceFolder);
  const [httpPort, lambdaPort] = [await freePort(), await freePort()];
  baseUrl = `http://127.0.0.1:${httpPort}`;
  lambdaUrl = `http://127.0.0.1:${lambdaPort}`;
  const args = [
    'offline',
    '--stage',
    'local',
    '--host',
    '127.0.0.1',
    '--httpPort',
    String(httpPort),
    '--lambdaPort',
    String(lambdaPort),
  ];
  // Its own process group, so that stop() reaches serverless-offline's workers too.
  offline = spawn(process.execPath, [OSLS_CLI, ...args, '--noSponsor', `--param=localToken=${TOKEN}`], {
    cwd: serviceFolder,
    env: offlineEnvironment(home),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await ready(offline, baseUrl);
}, 120_000);

afterAll(async () => {
  if (offline !== undefined) await stop(offline);
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
}, 30_000);

describe('osls offline --stage local', () => {
  it('answers a real AdmissionReview on POST /admit/{token} exactly as the engine does with the example rules', async () => {
    const review = fixtureText(REVIEW);
    // The engine stamps as the webhook does, but without the key: the same stamp, less its MAC.
    const expected = parseAnswer(
      answerAdmissionReview(review, compileRuleSet((await loadRuleFiles([EXAMPLES])).rules), { stamps: KEYLESS_STAMPS })
        .body,
    );

    const response = await post(`/admit/${TOKEN}`, review);
    const answer = parseAnswer(await response.text());

    expect(response.status).toBe(200);
    expect({ ...answer, response: { ...answer.response, patch: undefined } }).toEqual({
      ...expected,
      response: { ...expected.response, patch: undefined },
    });
    expect(withoutMac(answer.response.patch)).toEqual({
      operations: withoutMac(expected.response.patch).operations,
      macs: 1,
    });
    expect(answer.response).toMatchObject({
      uid: (JSON.parse(review) as { request: { uid: string } }).request.uid,
      allowed: true,
      patchType: 'JSONPatch',
    });
    expect(decodePatch(answer.response.patch)).toContainEqual({
      op: 'add',
      path: '/metadata/annotations/podmutation.agent.cloudpilot.ai~1applied',
      value: 'migrate-legacy-pool',
    });
  });

  it('refuses a wrong token with 403, as the deployed endpoint does', async () => {
    const response = await post(`/admit/${TOKEN.replace(/.$/, 'X')}`, fixtureText(REVIEW));

    expect(response.status).toBe(403);
  });

  it('answers a path no route matches as API Gateway does, without echoing the path and its token', async () => {
    const response = await post(`/admitt/${TOKEN}`, fixtureText(REVIEW));
    const body = await response.text();

    expect(response.status).toBe(404);
    expect(JSON.parse(body)).toEqual({ message: 'Not Found' });
    expect(body).not.toContain(TOKEN);
  });

  it('says what it serves and where, and leaves the scheduled sync out', () => {
    expect(output).toContain(
      `webhook URL (clientConfig.url of a MutatingWebhookConfiguration): ${baseUrl}/admit/${TOKEN}`,
    );
    expect(output).toMatch(
      /published snapshot version \d+ of examples\/rules for cluster local \(\d+ valid, 0 invalid\)/,
    );
    expect(output).toContain('sync: not served locally');
  });

  it('names every function it lists and says where aws lambda invoke reaches them, not under the HTTP API', () => {
    expect(output).not.toContain('undefined');
    expect(output).toContain(
      `aws lambda invoke reaches podmutation-local-admission by name at ${lambdaUrl} (POST ${lambdaUrl}/2015-03-31/functions/NAME/invocations)`,
    );
  });

  it('answers aws lambda invoke at the address it prints', async () => {
    const response = await fetch(`${lambdaUrl}/2015-03-31/functions/podmutation-local-admission/invocations`, {
      method: 'POST',
      body: JSON.stringify({ requestContext: { http: { method: 'GET' } }, rawPath: '/admit/x', headers: {} }),
    });

    expect(response.status).toBe(200);
  });
});

describe('serverless-offline beside osls', () => {
  it('gets osls, not the serverless package, for its serverless peer dependency', () => {
    const manifest = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as PackageJson;
    const project = manifest('package.json');
    const peer = manifest('node_modules/serverless/package.json');

    expect(project.overrides?.['serverless']).toBe(`npm:osls@${project.devDependencies['osls']}`);
    expect(peer).toMatchObject({ name: 'osls', version: manifest('node_modules/osls/package.json').version });
  });
});

/** Whether something can listen on the loopback port now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('npm run offline', () => {
  it('stops serverless-offline when npm itself is sent SIGTERM, freeing the port', async () => {
    const [httpPort, lambdaPort] = [await freePort(), await freePort()];
    const args = [
      'run',
      'offline',
      '--silent',
      '--',
      '--host',
      '127.0.0.1',
      '--httpPort',
      String(httpPort),
      '--lambdaPort',
      String(lambdaPort),
      '--noSponsor',
    ];
    // npm runs the script through sh; the script execs osls, so the signal npm forwards reaches serverless-offline.
    const npm = spawn('npm', args, {
      cwd: serviceFolder,
      env: offlineEnvironment(home),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let printed = '';
    const onData = (chunk: Buffer) => (printed += chunk.toString('utf8'));
    npm.stdout.on('data', onData);
    npm.stderr.on('data', onData);
    await expect
      .poll(() => printed, { timeout: 60_000, interval: 100 })
      .toContain(`Server ready: http://127.0.0.1:${httpPort}`);

    const exited = once(npm, 'close');
    npm.kill('SIGTERM');
    await exited;

    await expect.poll(() => portIsFree(httpPort), { timeout: 10_000, interval: 100 }).toBe(true);
  }, 90_000);
});
