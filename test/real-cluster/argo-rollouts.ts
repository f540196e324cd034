/**
 * The Argo Rollouts controller of argo-rollouts.test.ts, built from the Go module in ./argo-rollouts (go.mod pins
 * github.com/argoproj/argo-rollouts) into the gitignored cache, keyed by a digest of that module's sources, with the
 * CRDs the same module ships (manifests/crds) copied beside it; only the first run compiles. Measured on the 2-core
 * build machine: the first build takes about 4 minutes (237 s with the modules already downloaded, 40 s more to
 * download them), a cached start a few milliseconds.
 */
import { existsSync } from 'node:fs';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuild, runGo, sourceDigest } from './go-build.ts';

/** The controller's main package, and the module whose CRDs are applied with it. */
const MODULE = 'github.com/argoproj/argo-rollouts';
const MAIN = `${MODULE}/cmd/rollouts-controller`;

/** The built controller and the CRDs of the same release. */
interface ArgoRollouts {
  /** The argo-rollouts version of go.mod, such as v1.10.1. */
  readonly release: string;
  readonly controller: string;
  /** The CRD manifests of manifests/crds (Rollout, AnalysisRun, AnalysisTemplate, ClusterAnalysisTemplate, Experiment). */
  readonly crds: readonly string[];
  /** Seconds the build took, or undefined when the cache already held it. */
  readonly builtSeconds: number | undefined;
}

const MODULE_DIR = fileURLToPath(new URL('./argo-rollouts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE_ROOT = join(ROOT, '.cache', 'argo-rollouts');
const SOURCES = ['go.mod', 'go.sum', 'tools.go'];

async function argoRelease(): Promise<string> {
  const goMod = await readFile(join(MODULE_DIR, 'go.mod'), 'utf8');
  const release = /^require github\.com\/argoproj\/argo-rollouts (v\d+\.\d+\.\d+)\s*$/m.exec(goMod)?.[1];
  if (release === undefined) throw new Error(`${join(MODULE_DIR, 'go.mod')} requires no ${MODULE} release`);
  return release;
}

function buildArguments(outDir: string): string[] {
  return ['build', '-trimpath', '-buildvcs=false', '-ldflags=-s -w', '-o', `${outDir}/`, MAIN];
}

function crdsIn(dir: string, files: readonly string[]): string[] {
  return files
    .filter((file) => file.endsWith('-crd.yaml'))
    .sort()
    .map((file) => join(dir, file));
}

/** Builds the controller into `scratch` and copies the CRDs of the module go.mod pins beside it. */
async function buildInto(scratch: string): Promise<void> {
  await runGo(MODULE_DIR, buildArguments(scratch));
  const moduleDir = (await runGo(MODULE_DIR, ['list', '-m', '-f', '{{.Dir}}', MODULE])).trim();
  const sourceCrds = join(moduleDir, 'manifests', 'crds');
  for (const file of crdsIn(sourceCrds, await readdir(sourceCrds)))
    await copyFile(file, join(scratch, file.slice(sourceCrds.length + 1)));
}

/**
 * The controller and CRDs of the release go.mod pins: from the cache when a build of the same sources is there,
 * otherwise built first.
 */
async function argoRollouts(log: (line: string) => void = () => undefined): Promise<ArgoRollouts> {
  const release = await argoRelease();
  const dir = join(
    CACHE_ROOT,
    `argo-rollouts-${release}-${await sourceDigest(MODULE_DIR, SOURCES, buildArguments(''))}`,
  );
  const builtSeconds = await cachedBuild(
    {
      dir,
      release,
      built: () => existsSync(join(dir, 'build.json')),
      build: buildInto,
      what: `the Argo Rollouts controller ${release}`,
      takes: 'about 4 minutes',
    },
    log,
  );
  return {
    release,
    controller: join(dir, 'rollouts-controller'),
    crds: crdsIn(dir, await readdir(dir)),
    builtSeconds,
  };
}

export { argoRollouts };
export type { ArgoRollouts };
