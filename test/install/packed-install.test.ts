/**
 * `npm run test:install`: the CLI installed as a user installs it, on a host whose own Node.js is 20. The tarball of
 * `npm pack`, installed with `npm install -g` into a temporary prefix with Node 20 first on PATH (npm itself runs on
 * it), runs every command with the package's own Node 22, from a folder of the user's, with the user's relative paths.
 * Node 20 is the `node@20` npm package, installed into the same temporary folder (or NODE20_BIN, a folder holding one).
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgram } from '../../lib/cli/index.ts';
import { cliContext, PACKAGE_VERSION } from '../support/cli.ts';
import { runProcess, type ProcessRun } from '../support/processes.ts';
import { freePort } from '../support/ports.ts';
import { allCommands } from '../../lib/cli/program.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let scratch: string;
let work: string;
let env: NodeJS.ProcessEnv;

/** npm, as the scratch PATH finds it, quietly and from the cache where it can. */
function npm(args: readonly string[], cwd: string): string {
  return execFileSync('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    env,
    encoding: 'utf8',
  });
}

/** The installed `podmutation`, run from the user's folder with the scratch PATH. */
function podmutation(args: readonly string[], stdin?: string): Promise<ProcessRun> {
  return runProcess('podmutation', args, { cwd: work, env, ...(stdin === undefined ? {} : { input: stdin }) });
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'podmutation-install-'));
  // The host: Node 20 first on PATH, then the system's folders; nothing of this checkout's node_modules.
  const systemPath = (process.env['PATH'] ?? '').split(delimiter).filter((folder) => !folder.includes('node_modules'));
  let node20 = process.env['NODE20_BIN'];
  env = { ...process.env, PATH: systemPath.join(delimiter) };
  delete env['npm_config_prefix'];
  if (node20 === undefined) {
    mkdirSync(join(scratch, 'node20'));
    npm(['install', '--prefix', join(scratch, 'node20'), 'node@20'], scratch);
    node20 = join(scratch, 'node20', 'node_modules', '.bin');
  }
  const prefix = join(scratch, 'global');
  env = { ...env, PATH: [join(prefix, 'bin'), node20, ...systemPath].join(delimiter) };
  expect(execFileSync('node', ['--version'], { env, encoding: 'utf8' })).toMatch(/^v20\./);

  const tarball = npm(['pack', '--pack-destination', scratch, ROOT], scratch).trim().split('\n').at(-1)!;
  npm(['install', '--global', '--prefix', prefix, join(scratch, tarball)], scratch);

  // The user's folder: their rules, tests and inputs, named by relative paths.
  work = join(scratch, 'work');
  cpSync(join(ROOT, 'examples'), work, { recursive: true });
  cpSync(join(ROOT, 'test', 'fixtures', 'reviews', 'deployment-legacy-pool.json'), join(work, 'review.json'));
  cpSync(join(ROOT, 'test', 'fixtures', 'report', 'cluster.json'), join(work, 'cluster.json'));
}, 600_000);

afterAll(() => {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

const program = createProgram(
  cliContext({ stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() }),
);

/** Every command below the program, as the words that reach it: 'placement set'. */
const COMMANDS = allCommands(program)
  .slice(1)
  .map((command) => {
    const words: string[] = [];
    for (let current: Command | null = command; current !== null && current !== program; current = current.parent)
      words.unshift(current.name());
    return words.join(' ');
  });

describe('podmutation installed from its npm pack tarball on a Node 20 host', () => {
  it('prints its version', async () => {
    await expect(podmutation(['--version'])).resolves.toEqual({ code: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
  });

  it.each(COMMANDS)('answers %s --help', async (words) => {
    const run = await podmutation([...words.split(' '), '--help']);

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(`Usage: podmutation ${words}`);
  });

  it('validates the rules of a relative path', async () => {
    const run = await podmutation(['validate', 'rules']);

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain(
      'valid    migrate-legacy-pool (rules/migrate-legacy-pool.yaml; enabled, priority 100)',
    );
  });

  it('explains and reviews a relative file, and a review on standard input', async () => {
    const [explained, reviewed, piped] = await Promise.all([
      podmutation(['explain', '--rules', 'rules', 'review.json']),
      podmutation(['review', '--rules', 'rules', 'review.json']),
      podmutation(['review', '--rules', 'rules', '-'], readFileSync(join(work, 'review.json'), 'utf8')),
    ]);

    expect(explained).toMatchObject({ code: 0, stderr: '' });
    expect(explained.stdout).toContain('migrate-legacy-pool');
    expect(reviewed).toMatchObject({ code: 0, stderr: '' });
    expect(reviewed.stdout).toContain('"patchType":"JSONPatch"');
    expect(piped).toEqual(reviewed);
  });

  it("runs the examples' own tests and reports on a relative objects file", async () => {
    const [tested, reported] = await Promise.all([
      podmutation(['test', 'tests']),
      podmutation(['report', '--objects', 'cluster.json', '--rules', 'rules', '-o', 'json']),
    ]);

    expect(tested, tested.stdout + tested.stderr).toMatchObject({ code: 0 });
    expect(readdirSync(join(work, 'tests')).length).toBeGreaterThan(0);
    expect(reported.code, reported.stderr).toBeLessThanOrEqual(1);
    expect(JSON.parse(reported.stdout)).toHaveProperty('totals');
  });

  it('serves the rules of a relative path until SIGTERM, with its embedded DynamoDB', async () => {
    const port = await freePort();
    const child = spawn('podmutation', ['serve', '--rules', 'rules', '--port', String(port)], {
      cwd: work,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await expect.poll(() => output, { timeout: 30_000, interval: 100 }).toContain('webhook URL');
    const url = /(http:\/\/127\.0\.0\.1:\d+\/admit\/\S+)/.exec(output)![1]!;

    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: readFileSync(join(work, 'review.json'), 'utf8'),
    });
    const exited = once(child, 'close');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];

    expect(response.status).toBe(200);
    expect(output).toContain('published snapshot version 1 from files rules (4 valid, 0 invalid)');
    expect(code).toBe(0);
  });
});
