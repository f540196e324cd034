/**
 * The control plane's binaries, built from the Go module beside this file (go.mod pins k8s.io/kubernetes and etcd)
 * into a gitignored cache keyed by the release and a digest of the module's sources, so only the first run compiles.
 * Measured on the 2-core build machine: the first build takes about 8 minutes (485 s with empty Go caches, module
 * downloads included), a cached start a few milliseconds.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The commands the suite runs, each built from the module. */
const COMMANDS = {
  etcd: './etcd',
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
  'kube-scheduler': 'k8s.io/kubernetes/cmd/kube-scheduler',
  kubectl: 'k8s.io/kubernetes/cmd/kubectl',
} as const;

type Command = keyof typeof COMMANDS;

/** Where each built command is, and the release it was built from. */
interface ControlPlaneBinaries {
  /** The k8s.io/kubernetes version of go.mod, such as v1.37.2. */
  readonly release: string;
  readonly dir: string;
  /** Absolute path of one command. */
  readonly path: (command: Command) => string;
  /** Seconds the build took, or undefined when the cache already held it. */
  readonly builtSeconds: number | undefined;
}

const MODULE_DIR = fileURLToPath(new URL('.', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE_ROOT = join(ROOT, '.cache', 'control-plane');
// The sources whose change must rebuild: the module, its checksums and the one main of our own.
const SOURCES = ['go.mod', 'go.sum', 'tools.go', 'etcd/main.go'];

/** The release k8s.io/kubernetes is required at in go.mod. */
async function kubernetesRelease(): Promise<string> {
  const goMod = await readFile(join(MODULE_DIR, 'go.mod'), 'utf8');
  const release = /^\s*k8s\.io\/kubernetes (v\d+\.\d+\.\d+)\s*$/m.exec(goMod)?.[1];
  if (release === undefined) throw new Error(`${join(MODULE_DIR, 'go.mod')} requires no k8s.io/kubernetes release`);
  return release;
}

/**
 * Version stamps the Kubernetes release process sets (hack/lib/version.sh): without them /version and kubectl version
 * say v0.0.0-master, which kubectl's version-skew warning and every client reading /version would see.
 */
function versionFlags(release: string): string {
  const [major, minor] = release.slice(1).split('.');
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']
    .flatMap((pkg) => [
      `-X ${pkg}.gitVersion=${release}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
    ])
    .join(' ');
}

function buildArguments(release: string, outDir: string): string[] {
  // -s -w drop the symbol tables: a third smaller and a faster link, and nothing here reads them.
  return [
    'build',
    '-trimpath',
    '-buildvcs=false',
    `-ldflags=-s -w ${versionFlags(release)}`,
    '-o',
    `${outDir}/`,
    ...Object.values(COMMANDS),
  ];
}

async function cacheKey(release: string): Promise<string> {
  const digest = createHash('sha256');
  for (const file of SOURCES)
    digest
      .update(file)
      .update('\0')
      .update(await readFile(join(MODULE_DIR, file)));
  digest.update(buildArguments(release, '').join(' '));
  return digest.digest('hex').slice(0, 12);
}

function run(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: MODULE_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) =>
      reject(
        new Error(
          `cannot run ${command} (${error.message}); the real-cluster suite builds the control plane with Go 1.26 or later`,
          { cause: error },
        ),
      ),
    );
    child.on('close', (code) => {
      if (code === 0) resolve();
      else {
        log(output);
        reject(new Error(`${command} ${args.slice(0, 1).join(' ')} exited with ${code}:\n${output}`));
      }
    });
  });
}

/**
 * The binaries of the release go.mod pins: from the cache when a build of the same sources is there, otherwise
 * built first (into a scratch folder renamed into place, so an interrupted build is never taken for a finished one).
 */
async function controlPlaneBinaries(log: (line: string) => void = () => undefined): Promise<ControlPlaneBinaries> {
  const release = await kubernetesRelease();
  const dir = join(CACHE_ROOT, `kubernetes-${release}-${await cacheKey(release)}`);
  const path = (command: Command): string => join(dir, command);
  if ((Object.keys(COMMANDS) as Command[]).every((command) => existsSync(path(command))))
    return { release, dir, path, builtSeconds: undefined };

  await mkdir(CACHE_ROOT, { recursive: true });
  const scratch = `${dir}.building-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  log(
    `building the control plane (Kubernetes ${release}, etcd) from Go modules into ${dir}; the first build takes about 8 minutes on 2 cores`,
  );
  const started = Date.now();
  // GOTOOLCHAIN=local: the machine's Go, never one downloaded behind the build's back; -mod=readonly: go.sum is complete.
  const env = { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' };
  try {
    await run('go', buildArguments(release, scratch), env, log);
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
  log(`built the control plane in ${builtSeconds.toFixed(0)} s`);
  return { release, dir, path, builtSeconds };
}

/** The binaries a setup built or found, handed to a test file (which cannot rebuild them) by folder and release. */
function binariesAt(found: { readonly dir: string; readonly release: string }): ControlPlaneBinaries {
  return { ...found, path: (command) => join(found.dir, command), builtSeconds: undefined };
}

export { controlPlaneBinaries, binariesAt, COMMANDS };
export type { ControlPlaneBinaries, Command };
