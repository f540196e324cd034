/** The suite's own promise: a run that crashes or is killed leaves no server and no folder behind. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { binariesAt } from './binaries.ts';
import { startControlPlane } from './control-plane.ts';
import { waitFor } from './processes.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/start-and-wait.ts', import.meta.url));

interface Started {
  readonly components: readonly { readonly name: string; readonly pid: number }[];
  readonly dir: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a control plane whose starter is killed', () => {
  it('dies with it, every component, and its folder is removed by the next start', async () => {
    const { dir, release } = inject('controlPlane');
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir, release], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const started = await new Promise<Started>((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('\n')) resolve(JSON.parse(output.slice(0, output.indexOf('\n'))) as Started);
      });
      child.on('exit', (code) => reject(new Error(`the starter exited with ${code} before printing its components`)));
    });
    expect(started.components.map(({ name }) => name)).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    expect(started.components.every(({ pid }) => alive(pid))).toBe(true);

    child.kill('SIGKILL');

    await waitFor(
      'every component to die',
      () => Promise.resolve(started.components.every(({ pid }) => !alive(pid)) ? true : undefined),
      { timeoutMs: 30_000 },
    );
    expect(existsSync(started.dir)).toBe(true);
    const next = await startControlPlane(binariesAt(inject('controlPlane')));
    await next.stop();
    expect(existsSync(started.dir)).toBe(false);
  });
});
