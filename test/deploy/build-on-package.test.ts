/**
 * Packaging ships the current source: in a copy of the project whose dist/ holds an older bundle and whose source
 * has changed since, the real `osls package` ships a bundle of the changed source; the hook of `osls deploy function`
 * (which needs AWS, so its hook is called here as osls calls it) builds it as well.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceFolder, packageService, readZip, type ZipEntry } from './package.ts';

/** What osls hands a plugin, as far as the plugin reads it. */
interface PluginHost {
  readonly serviceDir: string;
  readonly service: { readonly provider: { readonly stage: string } };
  readonly classes: { readonly Error: typeof Error };
}

/** A Serverless plugin: its lifecycle hooks. */
interface Plugin {
  readonly hooks: Readonly<Record<string, () => Promise<void>>>;
}

type PluginClass = new (
  serverless: PluginHost,
  options: Readonly<Record<string, unknown>>,
  utils: { readonly log: { notice(line: string): void } },
) => Plugin;

const STALE = 'exports.handler = async () => "the bundle of an earlier build";\n';

let scratch: string;
let serviceFolder: string;
let packaged: readonly ZipEntry[];
let original: string | undefined;
const marker = (): string => `source-changed-${randomUUID()}`;
const packagedMarker = marker();

/** Changes functions/admission/index.ts of the copy: its source as checked out, and one exported string the bundle keeps. */
async function changeSource(value: string): Promise<void> {
  const entry = join(serviceFolder, 'functions', 'admission', 'index.ts');
  original ??= await readFile(entry, 'utf8');
  await writeFile(entry, `${original}\n/** A change of the source. */\nexport const sourceMarker = '${value}';\n`);
}

function bundleText(entries: readonly ZipEntry[]): string {
  const bundle = entries.find((entry) => entry.path === 'dist/admission/index.js');
  if (bundle === undefined) throw new Error('the artifact holds no dist/admission/index.js');
  return bundle.content.toString('utf8');
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'podmutation-build-on-package-'));
  serviceFolder = join(scratch, 'service');
  const home = join(scratch, 'home');
  await Promise.all([mkdir(join(serviceFolder, 'dist', 'admission'), { recursive: true }), mkdir(home)]);
  await createServiceFolder(serviceFolder);
  await writeFile(join(serviceFolder, 'dist', 'admission', 'index.js'), STALE);
  await changeSource(packagedMarker);
  await packageService(serviceFolder, { clusterName: 'ci-cluster' }, join(scratch, 'package'), home);
  packaged = readZip(await readFile(join(scratch, 'package', 'admission.zip')));
}, 120_000);

afterAll(async () => {
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe('packaging builds from the current source', () => {
  it('ships the admission bundle of the changed source, not the bundle dist/ held', () => {
    const text = bundleText(packaged);

    expect(text).toContain(packagedMarker);
    expect(text).not.toContain('the bundle of an earlier build');
  });

  it('builds before `osls deploy function` packages a function, as before `osls package`', async () => {
    const pluginModule = (await import(pathToFileURL(join(serviceFolder, 'serverless', 'plugin.mjs')).href)) as {
      readonly default: PluginClass;
    };
    const plugin = new pluginModule.default(
      { serviceDir: serviceFolder, service: { provider: { stage: 'ci' } }, classes: { Error } },
      {},
      { log: { notice: () => undefined } },
    );
    const changed = marker();
    await changeSource(changed);

    // osls's deploy function spawns package:function; package runs createDeploymentArtifacts.
    expect(Object.keys(plugin.hooks)).toEqual(
      expect.arrayContaining(['before:package:function:package', 'before:package:createDeploymentArtifacts']),
    );
    await plugin.hooks['before:package:function:package']!();
    expect(await readFile(join(serviceFolder, 'dist', 'admission', 'index.js'), 'utf8')).toContain(changed);
  }, 60_000);
});
