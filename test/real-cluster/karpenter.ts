/**
 * Karpenter's own code as an oracle (capacity-karpenter.test.ts): the program in ./karpenter, built from
 * sigs.k8s.io/karpenter and the AWS provider at the releases its go.mod pins into the gitignored cache, keyed by a
 * digest of its sources, with the NodePool CRD the AWS provider ships (pkg/apis/crds) copied beside it; only the first
 * run compiles. It is a Go module of its own: Karpenter's controller-runtime does not compile against the client-go of
 * the control plane module (k8s.io/kubernetes v1.37.2 needs client-go v0.37.2, whose ResourceEventHandlerRegistration
 * controller-runtime v0.23 does not implement), and one module would also move the control plane's own dependencies.
 * Measured on the 2-core build machine: the first build takes about 3.5 minutes (modules downloaded included), a cached
 * start a few milliseconds.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ControlPlane } from './control-plane.ts';
import { kubectlOk } from './kubectl.ts';

const KARPENTER = 'sigs.k8s.io/karpenter';
const AWS_PROVIDER = 'github.com/aws/karpenter-provider-aws';
const CRD = 'karpenter.sh_nodepools.yaml';

/** The built oracle and the NodePool CRD of the same releases. */
interface KarpenterOracle {
  /** The sigs.k8s.io/karpenter version of go.mod, such as v1.14.1. */
  readonly release: string;
  readonly program: string;
  /** The AWS provider's karpenter.sh_nodepools.yaml. */
  readonly nodePoolCrd: string;
  /** Seconds the build took, or undefined when the cache already held it. */
  readonly builtSeconds: number | undefined;
}

/** One question: is this Pod (core/v1 JSON) compatible with this NodePool (karpenter.sh/v1 JSON)? */
interface OracleCase {
  readonly pod: unknown;
  readonly nodePool: unknown;
}

/** Karpenter's answer: whether its provisioner considers the Pod, per required term whether the NodePool's template is compatible, and whether its taints are tolerated. */
interface OracleAnswer {
  readonly accepted: boolean;
  readonly refusal?: string;
  readonly terms: readonly { readonly compatible: boolean; readonly reason?: string }[];
  readonly tolerated: boolean;
  readonly untolerated?: string;
}

const MODULE_DIR = fileURLToPath(new URL('./karpenter', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE_ROOT = join(ROOT, '.cache', 'karpenter');
const SOURCES = ['go.mod', 'go.sum', 'main.go'];
// GOTOOLCHAIN=local: the machine's Go, never one downloaded behind the build's back; -mod=readonly: go.sum is complete.
const GO_ENV = { CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' };

async function karpenterRelease(): Promise<string> {
  const goMod = await readFile(join(MODULE_DIR, 'go.mod'), 'utf8');
  const release = /^\s*sigs\.k8s\.io\/karpenter (v\d+\.\d+\.\d+)\s*$/m.exec(goMod)?.[1];
  if (release === undefined) throw new Error(`${join(MODULE_DIR, 'go.mod')} requires no ${KARPENTER} release`);
  return release;
}

function buildArguments(outDir: string): string[] {
  return ['build', '-trimpath', '-buildvcs=false', '-ldflags=-s -w', '-o', join(outDir, 'karpenter-oracle'), '.'];
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

function run(command: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: MODULE_DIR, env: { ...process.env, ...GO_ENV } });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-20_000)));
    child.on('error', (error) => reject(new Error(`cannot run ${command} (${error.message})`, { cause: error })));
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(stdout).toString('utf8'))
        : reject(new Error(`${command} ${args[0] ?? ''} exited with ${code}:\n${stderr}`)),
    );
    child.stdin.end(input ?? '');
  });
}

/**
 * The oracle of the releases go.mod pins: from the cache when a build of the same sources is there, otherwise built
 * first (into a scratch folder renamed into place, so an interrupted build is never taken for a finished one).
 */
async function karpenterOracle(log: (line: string) => void = () => undefined): Promise<KarpenterOracle> {
  const release = await karpenterRelease();
  const dir = join(CACHE_ROOT, `karpenter-${release}-${await cacheKey()}`);
  const found = { release, program: join(dir, 'karpenter-oracle'), nodePoolCrd: join(dir, CRD) };
  if (existsSync(join(dir, 'build.json'))) return { ...found, builtSeconds: undefined };

  await mkdir(CACHE_ROOT, { recursive: true });
  const scratch = `${dir}.building-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  log(`building the Karpenter oracle (${KARPENTER} ${release}) into ${dir}; the first build takes about 3.5 minutes`);
  const started = Date.now();
  try {
    await mkdir(scratch, { recursive: true });
    await run('go', buildArguments(scratch));
    const provider = (await run('go', ['list', '-m', '-f', '{{.Dir}}', AWS_PROVIDER])).trim();
    await copyFile(join(provider, 'pkg', 'apis', 'crds', CRD), join(scratch, CRD));
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
  log(`built the Karpenter oracle in ${builtSeconds.toFixed(0)} s`);
  return { ...found, builtSeconds };
}

/** Karpenter's answers to the cases, in order: one run of the oracle for the whole batch. */
async function askKarpenter(oracle: KarpenterOracle, cases: readonly OracleCase[]): Promise<readonly OracleAnswer[]> {
  const output = await run(oracle.program, [], JSON.stringify({ cases }));
  const { answers } = JSON.parse(output) as { answers: OracleAnswer[] };
  if (answers.length !== cases.length)
    throw new Error(`the oracle answered ${answers.length} of ${cases.length} cases`);
  return answers;
}

/** Karpenter's NodePool CRD of the oracle's releases applied to the control plane, and Established. */
async function installNodePoolCrd(plane: ControlPlane): Promise<void> {
  const oracle = await karpenterOracle((line) => console.log(`[karpenter oracle] ${line}`));
  // Server-side: the CRD's schema is larger than the last-applied annotation a client-side apply would write.
  await kubectlOk(plane, ['apply', '--server-side', '-f', oracle.nodePoolCrd]);
  await kubectlOk(plane, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/nodepools.karpenter.sh']);
}

export { karpenterOracle, askKarpenter, installNodePoolCrd };
export type { KarpenterOracle, OracleCase, OracleAnswer };
