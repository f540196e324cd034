/** The CLI as a process, through its built binary: a reader that closes the pipe early, and a Node.js too old for it. */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { EXAMPLES, fixturePath } from '../support/fixtures.ts';
import { BIN } from '../support/cli.ts';
import { runProcess } from '../support/processes.ts';
import { freePort } from '../support/ports.ts';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Whether something can listen on the loopback port now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Runs the bin with its standard output closed before it writes, as `| head -1` leaves it; its exit and what it wrote to stderr. */
async function withClosedStdout(
  args: readonly string[],
): Promise<{ readonly code: number | null; readonly stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr };
}

describe('a closed standard output', () => {
  it.each([
    ['the help', ['--help']],
    ["a command's help", ['review', '--help']],
    ['the version', ['--version']],
    ['explain', ['explain', fixturePath('reviews/deployment-legacy-pool.json'), '--rules', EXAMPLES]],
    ['validate', ['validate', EXAMPLES]],
    ['review', ['review', fixturePath('reviews/deployment-legacy-pool.json'), '--rules', EXAMPLES]],
  ])('ends %s quietly with exit 0, as kubectl … | head does', async (_name, args) => {
    const { code, stderr } = await withClosedStdout(args);

    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

// The machine's own node (Debian's, 20), outside node_modules/.bin where the node@22 devDependency lives.
const SYSTEM_NODE = '/usr/bin/node';

describe('an older Node.js', () => {
  const found = (): string => execFileSync(SYSTEM_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();

  it("runs the CLI with the package's own Node.js, in the user's folder and with the user's relative paths", async () => {
    // The test needs a Node.js older than the one package.json asks for; the machine's is 20.
    expect(Number(found().split('.')[0])).toBeLessThan(22);

    const run = await runProcess(SYSTEM_NODE, [BIN, 'validate', 'rules'], { cwd: join(ROOT, 'examples') });

    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('4 valid, 0 invalid');
  });

  it('passes SIGTERM on to the CLI it runs, which stops serving and exits 0', async () => {
    const port = await freePort();
    const child = spawn(SYSTEM_NODE, [BIN, 'serve', '--rules', EXAMPLES, '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await expect.poll(() => output, { timeout: 20_000, interval: 50 }).toContain(`http://127.0.0.1:${port}/admit/`);

    const exited = once(child, 'close');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];

    expect(code).toBe(0);
    await expect.poll(() => portIsFree(port), { timeout: 5_000, interval: 100 }).toBe(true);
  });

  it("is refused, naming the version needed and the one found, when the package's own Node.js is missing", async () => {
    // The bin and package.json alone, as a copy without its node_modules.
    const copy = mkdtempSync(join(tmpdir(), 'podmutation-bare-'));
    mkdirSync(join(copy, 'bin'));
    copyFileSync(BIN, join(copy, 'bin', 'podmutation.mjs'));
    copyFileSync(join(ROOT, 'package.json'), join(copy, 'package.json'));

    const run = await runProcess(SYSTEM_NODE, [join(copy, 'bin', 'podmutation.mjs'), 'validate', EXAMPLES]);

    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `podmutation: needs Node.js 22 or later (package.json engines.node "${packageJson.engines.node}"), but runs on Node.js ${found()} (${SYSTEM_NODE}), ` +
        `and the package's own Node.js (its "node" dependency) is not installed; install Node.js 22, or install podmutation again with npm\n`,
    );
    expect(run.code).toBe(2);
  });
});

describe('npm start', () => {
  it('stops its server when npm itself is sent SIGTERM, freeing the port', async () => {
    const port = await freePort();
    // npm runs the script through sh; the script execs node, so the signal npm forwards reaches the server.
    const npm = spawn('npm', ['start', '--silent', '--', '--port', String(port)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => (output += chunk.toString('utf8'));
    npm.stdout.on('data', onData);
    npm.stderr.on('data', onData);
    await expect.poll(() => output, { timeout: 20_000, interval: 50 }).toContain(`http://127.0.0.1:${port}/admit/`);

    const exited = once(npm, 'close');
    npm.kill('SIGTERM');
    await exited;

    await expect.poll(() => portIsFree(port), { timeout: 5_000, interval: 100 }).toBe(true);
  });
});
