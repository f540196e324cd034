/**
 * The control plane's binaries, built from the Go module beside this file (go.mod pins k8s.io/kubernetes and etcd)
 * into a gitignored cache keyed by the release and a digest of the module's sources, so only the first run compiles.
 * Measured on the 2-core build machine: the first build takes about 8 minutes (485 s with empty Go caches, module
 * downloads included), a cached start a few milliseconds.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedBuild, runGo, sourceDigest } from './go-build.ts';

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

/**
 * The binaries of the release go.mod pins: from the cache when a build of the same sources is there, otherwise
 * built first.
 */
async function controlPlaneBinaries(log: (line: string) => void = () => undefined): Promise<ControlPlaneBinaries> {
  const release = await kubernetesRelease();
  const key = await sourceDigest(MODULE_DIR, SOURCES, buildArguments(release, ''));
  const dir = join(CACHE_ROOT, `kubernetes-${release}-${key}`);
  const path = (command: Command): string => join(dir, command);
  const builtSeconds = await cachedBuild(
    {
      dir,
      release,
      built: () => (Object.keys(COMMANDS) as Command[]).every((command) => existsSync(path(command))),
      build: async (scratch) => {
        await runGo(MODULE_DIR, buildArguments(release, scratch));
      },
      what: `the control plane (Kubernetes ${release}, etcd)`,
      takes: 'about 8 minutes on 2 cores',
    },
    log,
  );
  return { release, dir, path, builtSeconds };
}

/** The binaries a setup built or found, handed to a test file (which cannot rebuild them) by folder and release. */
function binariesAt(found: { readonly dir: string; readonly release: string }): ControlPlaneBinaries {
  return { ...found, path: (command) => join(found.dir, command), builtSeconds: undefined };
}

export { controlPlaneBinaries, binariesAt, COMMANDS };
export type { ControlPlaneBinaries, Command };
