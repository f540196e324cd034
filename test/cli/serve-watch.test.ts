/**
 * `serve --rules DIR --watch` through the built binary, one test per way a rule file changes: written in place, renamed
 * over (as sed -i, mv and an editor's atomic save do), moved in from another folder, deleted, made again, and made in
 * a new folder. Each waits for the publication line on stderr, then asks the webhook over HTTP: the line is printed
 * only once the change is served.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.ts';
import { fixtureText } from '../support/fixtures.ts';

const REVIEW = fixtureText('reviews/deployment-legacy-pool.json');
const URL_LINE = /^webhook URL \(clientConfig\.url of a MutatingWebhookConfiguration\): (\S+)$/m;
// Generous: the machine is shared; nothing here is a timing claim, only how long to wait before giving up.
const WAIT_MS = 20_000;

const scratch = mkdtempSync(join(tmpdir(), 'podmutation-watch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const servers: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of servers.splice(0)) {
    if (child.exitCode !== null) continue;
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

/** A PodMutation that annotates production's Pods with `example.com/NAME: VALUE`. */
function rule(name: string, value: string): string {
  return [
    'apiVersion: agent.cloudpilot.ai/v1alpha1',
    'kind: PodMutation',
    `metadata: { name: ${name} }`,
    'spec:',
    '  enable: true',
    '  workloadSelector: { namespaces: [production] }',
    `  mutationAdd: { annotations: { example.com/${name}: "${value}" } }`,
    '',
  ].join('\n');
}

let folders = 0;
/** A new folder of the scratch space holding these files. */
function folderWith(files: Readonly<Record<string, string>>): string {
  folders += 1;
  const folder = join(scratch, `rules-${folders}`);
  mkdirSync(folder);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  return folder;
}

/** A running `serve --rules FOLDER --watch`: its URL, what the webhook adds now, and a wait for a publication. */
interface WatchingServer {
  /** The annotations the webhook's patch adds to the review's Pod now (name: value). */
  annotations(): Promise<Record<string, string>>;
  /** Resolves with the stderr line that says snapshot `version` is published; rejects if it does not come. */
  published(version: number): Promise<string>;
}

async function serveWatching(folder: string): Promise<WatchingServer> {
  const child = spawn(process.execPath, [BIN, 'serve', '--rules', folder, '--watch', '--port', '0']);
  servers.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const waitFor = (pattern: RegExp, stream: () => string): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = pattern.exec(stream());
        if (match !== null) {
          clearTimeout(timer);
          resolve(match);
        }
        return match !== null;
      };
      const timer = setTimeout(() => {
        child.stdout.off('data', check);
        child.stderr.off('data', check);
        reject(new Error(`serve did not print ${pattern} within ${WAIT_MS} ms; stderr:\n${stderr}`));
      }, WAIT_MS);
      if (check()) return;
      child.stdout.on('data', check);
      child.stderr.on('data', check);
    });
  const [, url] = await waitFor(URL_LINE, () => stdout);
  await waitFor(/^published snapshot version 1 /m, () => stderr);
  return {
    async annotations() {
      const response = await fetch(url!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: REVIEW,
      });
      const { response: answer } = (await response.json()) as { response: { patch?: string } };
      if (answer.patch === undefined) return {};
      const operations = JSON.parse(Buffer.from(answer.patch, 'base64').toString('utf8')) as {
        op: string;
        path: string;
        value?: unknown;
      }[];
      const added: Record<string, string> = {};
      for (const { path, value } of operations) {
        if (path === '/metadata/annotations') Object.assign(added, value);
        else if (path.startsWith('/metadata/annotations/'))
          added[path.slice('/metadata/annotations/'.length).replace('~1', '/')] = value as string;
      }
      return Object.fromEntries(Object.entries(added).filter(([key]) => key.startsWith('example.com/')));
    },
    async published(version) {
      const [line] = await waitFor(new RegExp(`^published snapshot version ${version} .*$`, 'm'), () => stderr);
      return line;
    },
  };
}

describe('serve --watch follows a rule file', () => {
  it('written in place', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one') });
    const server = await serveWatching(folder);
    expect(await server.annotations()).toEqual({ 'example.com/a': 'one' });

    writeFileSync(join(folder, 'a.yaml'), rule('a', 'two'));
    await server.published(2);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'two' });
  });

  it('renamed over (sed -i, mv, an atomic save), and written in place after that', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one') });
    const server = await serveWatching(folder);

    writeFileSync(join(folder, '.a.yaml.tmp'), rule('a', 'two'));
    renameSync(join(folder, '.a.yaml.tmp'), join(folder, 'a.yaml'));
    await server.published(2);
    expect(await server.annotations()).toEqual({ 'example.com/a': 'two' });

    writeFileSync(join(folder, 'a.yaml'), rule('a', 'three'));
    await server.published(3);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'three' });
  });

  it('moved in from another folder, and written in place after that', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one') });
    const elsewhere = folderWith({ 'b.yaml': rule('b', 'one') });
    const server = await serveWatching(folder);

    renameSync(join(elsewhere, 'b.yaml'), join(folder, 'b.yaml'));
    await server.published(2);
    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/b': 'one' });

    writeFileSync(join(folder, 'b.yaml'), rule('b', 'two'));
    await server.published(3);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/b': 'two' });
  });

  it('deleted', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one'), 'b.yaml': rule('b', 'one') });
    const server = await serveWatching(folder);

    unlinkSync(join(folder, 'b.yaml'));
    const line = await server.published(2);

    expect(line).toContain('(1 valid, 0 invalid)');
    expect(await server.annotations()).toEqual({ 'example.com/a': 'one' });
  });

  it('deleted, then made again under the same name', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one'), 'b.yaml': rule('b', 'one') });
    const server = await serveWatching(folder);
    unlinkSync(join(folder, 'b.yaml'));
    await server.published(2);

    writeFileSync(join(folder, 'b.yaml'), rule('b', 'two'));
    await server.published(3);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/b': 'two' });
  });

  it('in a new folder, and written in place after that', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one') });
    const server = await serveWatching(folder);

    mkdirSync(join(folder, 'team/web'), { recursive: true });
    writeFileSync(join(folder, 'team/web/c.yaml'), rule('c', 'one'));
    await server.published(2);
    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/c': 'one' });

    writeFileSync(join(folder, 'team/web/c.yaml'), rule('c', 'two'));
    await server.published(3);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/c': 'two' });
  });

  it('in a folder moved in whole, and written in place after that', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one') });
    const elsewhere = folderWith({ 'd.yaml': rule('d', 'one') });
    const server = await serveWatching(folder);

    renameSync(elsewhere, join(folder, 'moved'));
    await server.published(2);
    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/d': 'one' });

    writeFileSync(join(folder, 'moved/d.yaml'), rule('d', 'two'));
    await server.published(3);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/d': 'two' });
  });

  it('in a folder deleted and made again, and written in place after that', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one') });
    mkdirSync(join(folder, 'team'));
    writeFileSync(join(folder, 'team/c.yaml'), rule('c', 'one'));
    const server = await serveWatching(folder);

    rmSync(join(folder, 'team'), { recursive: true });
    mkdirSync(join(folder, 'team'));
    writeFileSync(join(folder, 'team/c.yaml'), rule('c', 'two'));
    await server.published(2);
    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/c': 'two' });

    writeFileSync(join(folder, 'team/c.yaml'), rule('c', 'three'));
    await server.published(3);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'one', 'example.com/c': 'three' });
  });

  it('given as the rules path itself, renamed over, and written in place after that', async () => {
    const folder = folderWith({ 'a.yaml': rule('a', 'one') });
    const server = await serveWatching(join(folder, 'a.yaml'));

    writeFileSync(join(folder, 'a.yaml.tmp'), rule('a', 'two'));
    renameSync(join(folder, 'a.yaml.tmp'), join(folder, 'a.yaml'));
    await server.published(2);
    expect(await server.annotations()).toEqual({ 'example.com/a': 'two' });

    writeFileSync(join(folder, 'a.yaml'), rule('a', 'three'));
    await server.published(3);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'three' });
  });

  it('in a rules folder that is itself deleted and made again, and written in place after that', async () => {
    const parent = folderWith({});
    const folder = join(parent, 'rules');
    mkdirSync(folder);
    writeFileSync(join(folder, 'a.yaml'), rule('a', 'one'));
    const server = await serveWatching(folder);

    rmSync(folder, { recursive: true });
    mkdirSync(folder);
    writeFileSync(join(folder, 'a.yaml'), rule('a', 'two'));
    await server.published(2);
    expect(await server.annotations()).toEqual({ 'example.com/a': 'two' });

    writeFileSync(join(folder, 'a.yaml'), rule('a', 'three'));
    await server.published(3);

    expect(await server.annotations()).toEqual({ 'example.com/a': 'three' });
  });
});
