import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/index.ts';
import { cliContext } from '../support/cli.ts';
import { EXAMPLES, fixtureText } from '../support/fixtures.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const URL_LINE = /^webhook URL \(clientConfig\.url of a MutatingWebhookConfiguration\): (\S+)$/m;

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Resolves with the first match of pattern in everything the stream has written so far. */
function waitForOutput(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<RegExpExecArray> {
  let text = '';
  return new Promise((resolve, reject) => {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match !== null) resolve(match);
    });
    stream.on('end', () => reject(new Error(`output ended without ${pattern}: ${text}`)));
  });
}

async function runServe(args: readonly string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let errors = '';
  stderr.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  const code = await runCli(['serve', ...args], cliContext({ stdin: new PassThrough(), stdout, stderr }));
  return { code, errors };
}

describe('podmutation serve', () => {
  it('prints the webhook URL, answers reviews on it and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['bin/podmutation.mjs', 'serve', '--rules', EXAMPLES, '--port', '0'], {
      cwd: ROOT,
    });
    children.push(child);
    const errors = waitForOutput(child.stderr, /published snapshot version 1/);

    const [, url] = await waitForOutput(child.stdout, URL_LINE);
    const response = await fetch(url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: REVIEW,
    });
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];

    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/admit\/[A-Za-z0-9_-]{43}$/);
    expect(response.status).toBe(200);
    await expect(errors).resolves.toBeDefined();
    expect(code).toBe(0);
  });

  it('exits 2 naming --rules and where it looked for a kubeconfig when it finds neither', async () => {
    const { code, errors } = await runServe([]);

    expect(code).toBe(2);
    expect(errors).toContain(
      'podmutation serve: serve needs --rules PATH (rule files) or the kubeconfig of a cluster as the rule source: --kubeconfig FILE is not given and $KUBECONFIG and $HOME are not set',
    );
  });

  it('exits 2 when only one of --tls-cert and --tls-key is given', async () => {
    const { code, errors } = await runServe(['--rules', EXAMPLES, '--tls-cert', 'cert.pem']);

    expect(code).toBe(2);
    expect(errors).toContain('--tls-cert and --tls-key must be given together');
  });

  it('exits 2 naming the address when the port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const { code, errors } = await runServe(['--rules', EXAMPLES, '--host', '127.0.0.1', '--port', String(port)]);

      expect(code).toBe(2);
      expect(errors).toContain(
        `podmutation serve: the local server cannot listen on 127.0.0.1:${port}: listen EADDRINUSE`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('exits 2 for a token too short to be safe, without echoing it', async () => {
    const { code, errors } = await runServe(['--rules', EXAMPLES, '--token', 'secret']);

    expect(code).toBe(2);
    expect(errors).toContain(
      '--token holds a token of 6 characters that is not of the form 32 to 256 characters from A-Z, a-z, 0-9, "-" and "_"',
    );
    expect(errors).not.toContain('secret');
  });
});
