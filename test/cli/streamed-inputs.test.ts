/**
 * explain and report --objects read their input as it arrives, through the built binary: explain prints a List's
 * first Pod before the rest of the List is written; report --objects reads standard input as it reads a file, Pods
 * before their owners included. (Their memory on a cluster's worth of objects is measured by `npm run bench`.)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { clusterList, rulePaths, writeTemporary } from '../report/support.ts';
import { BIN, runPodmutation } from '../support/cli.ts';
import { EXAMPLES, fixtureText } from '../support/fixtures.ts';

const POD = (
  JSON.parse(fixtureText('reviews/deployment-legacy-pool.json')) as { request: { object: Record<string, unknown> } }
).request.object;

/** The Pod named `name` in production, as kubectl prints it inside a List (four-space indent). */
function item(name: string): string {
  const metadata = { ...(POD['metadata'] as object), name, namespace: 'production' };
  return JSON.stringify({ ...POD, metadata }, null, 4).replace(/^/gm, '        ');
}

describe('explain of a List on standard input', () => {
  it('prints the first Pod before the rest of the List is written, then the others', async () => {
    const child = spawn(process.execPath, [BIN, 'explain', '--rules', EXAMPLES, '-'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    const firstPrinted = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('result: ')) resolve();
      });
    });

    child.stdin.write(`{\n    "apiVersion": "v1",\n    "items": [\n${item('first')},\n`);
    await firstPrinted;
    const beforeRest = stdout;
    child.stdin.end(`${item('second')}\n    ],\n    "kind": "List",\n    "metadata": {}\n}\n`);
    const [code] = (await once(child, 'close')) as [number | null];

    expect(beforeRest).toContain('Pod production/first ');
    expect(beforeRest).not.toContain('second');
    expect(stdout).toContain('Pod production/second ');
    expect(code).toBe(0);
  });
});

describe('report --objects of standard input', () => {
  it('reports as it does for the same objects in a file, with Pods listed before their owners', async () => {
    const list = await clusterList();
    // Pods first: a Pod's owners are read in a first pass over the input, whichever order it has.
    const reordered = {
      ...list,
      items: [...list.items].sort((left, right) => (left.kind === 'Pod' ? -1 : 0) - (right.kind === 'Pod' ? -1 : 0)),
    };
    const file = writeTemporary('streamed-cluster.json', list);
    const rules = rulePaths('as-rolled-out').flatMap((path) => ['--rules', path]);

    const fromFile = await runPodmutation(['report', '--objects', file, ...rules, '-A', '-o', 'json']);
    const fromStdin = await runPodmutation(
      ['report', '--objects', '-', ...rules, '-A', '-o', 'json'],
      JSON.stringify(reordered),
    );

    expect(fromStdin.stderr).toBe(fromFile.stderr);
    expect(JSON.parse(fromStdin.stdout)).toEqual(JSON.parse(fromFile.stdout));
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ totals: { pods: expect.any(Number) as unknown } });
    expect(fromStdin.code).toBe(fromFile.code);
  });
});
