/**
 * The Argo Rollouts controller of argo-rollouts.test.ts, built from the Go module in ./argo-rollouts (go.mod pins
 * github.com/argoproj/argo-rollouts) into the gitignored cache, keyed by a digest of that module's sources, with the
 * CRDs the same module ships (manifests/crds) copied beside it; only the first run compiles. Measured on the 2-core
 * build machine: the first build takes about 4 minutes (237 s with the modules already downloaded, 40 s more to
 * download them), a cached start a few milliseconds.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
// GOTOOLCHAIN=local: the machine's Go, never one downloaded behind the build's back; -mod=readonly: go.sum is complete.
const GO_ENV = { CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' };

async function argoRelease(): Promise<string> {
  const goMod = await readFile(join(MODULE_DIR, 'go.mod'), 'utf8');
  const release = /^require github\.com\/argoproj\/argo-rollouts (v\d+\.\d+\.\d+)\s*$/m.exec(goMod)?.[1];
  if (release === undefined) throw new Error(`${join(MODULE_DIR, 'go.mod')} requires no ${MODULE} release`);
  return release;
}

function buildArguments(outDir: string): string[] {
  return ['build', '-trimpath', '-buildvcs=false', '-ldflags=-s -w', '-o', `${outDir}/`, MAIN];
}

async function cacheKey(): Promise<string> {
  const digest = createHash('sha256');
  for (const file of SOURCES)
    digest
      .update(file)
      .update('\0')
      .update(await readFile(join(MODULE_DIR, file)));
  digest.update(buildArguments('').join(' '));
  return digest.digest('hex').slice(0, 12);
}

function go(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, {
      cwd: MODULE_DIR,
      env: { ...process.env, ...GO_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      output = (output + chunk.toString('utf8')).slice(-20_000);
    });
    child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-20_000)));
    child.on('error', (error) => reject(new Error(`cannot run go (${error.message})`, { cause: error })));
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`go ${args[0]} exited with ${code}:\n${output}`)),
    );
  });
}

function crdsIn(dir: string, files: readonly string[]): string[] {
  return files
    .filter((file) => file.endsWith('-crd.yaml'))
    .sort()
    .map((file) => join(dir, file));
}

/**
 * The controller and CRDs of the release go.mod pins: from the cache when a build of the same sources is there,
 * otherwise built first (into a scratch folder renamed into place, so an interrupted build is never taken for a
 * finished one).
 */
async function argoRollouts(log: (line: string) => void = () => undefined): Promise<ArgoRollouts> {
  const release = await argoRelease();
  const dir = join(CACHE_ROOT, `argo-rollouts-${release}-${await cacheKey()}`);
  const controller = join(dir, 'rollouts-controller');
  if (existsSync(join(dir, 'build.json')))
    return { release, controller, crds: crdsIn(dir, await readdir(dir)), builtSeconds: undefined };

  await mkdir(CACHE_ROOT, { recursive: true });
  const scratch = `${dir}.building-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  log(
    `building the Argo Rollouts controller ${release} from Go modules into ${dir}; the first build takes about 4 minutes`,
  );
  const started = Date.now();
  try {
    await mkdir(scratch, { recursive: true });
    await go(buildArguments(scratch));
    const moduleDir = (await go(['list', '-m', '-f', '{{.Dir}}', MODULE])).trim();
    const sourceCrds = join(moduleDir, 'manifests', 'crds');
    for (const file of crdsIn(sourceCrds, await readdir(sourceCrds)))
      await copyFile(file, join(scratch, file.slice(sourceCrds.length + 1)));
    await writeFile(
      join(scratch, 'build.json'),
      `${JSON.stringify({ release, builtAt: new Date().toISOString(), seconds: (Date.now() - started) / 1000 })}\n`,
    );
    await rm(dir, { recursive: true, force: true });
    await rename(scratch, dir);
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
  const builtSeconds = (Date.now() - started) / 1000;
  log(`built the Argo Rollouts controller in ${builtSeconds.toFixed(0)} s`);
  return { release, controller, crds: crdsIn(dir, await readdir(dir)), builtSeconds };
}

export { argoRollouts };
export type { ArgoRollouts };
