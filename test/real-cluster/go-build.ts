/**
 * The suite's Go builds (the control plane of binaries.ts, the Argo Rollouts controller of argo-rollouts.ts), each kept
 * in the gitignored cache under a folder named for its release and a digest of its module's sources and build
 * arguments, so that only the first run compiles and a change of either builds again.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

// GOTOOLCHAIN=local: the machine's Go, never one downloaded behind the build's back; -mod=readonly: go.sum is complete.
const GO_ENV = { CGO_ENABLED: '0', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' };

/** 12 hex digits of a SHA-256 over each source file of the module (its name, NUL, its bytes) and the arguments. */
async function sourceDigest(moduleDir: string, sources: readonly string[], args: readonly string[]): Promise<string> {
  const digest = createHash('sha256');
  for (const file of sources)
    digest
      .update(file)
      .update('\0')
      .update(await readFile(join(moduleDir, file)));
  digest.update(args.join(' '));
  return digest.digest('hex').slice(0, 12);
}

/** Runs `go ARGS` in the module's folder and returns what it printed on stdout; fails with the last of its output. */
function runGo(moduleDir: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, {
      cwd: moduleDir,
      env: { ...process.env, ...GO_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      keep(chunk);
    });
    child.stderr.on('data', keep);
    child.on('error', (error) =>
      reject(
        new Error(`cannot run go (${error.message}); the real-cluster suite builds with Go 1.26 or later`, {
          cause: error,
        }),
      ),
    );
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`go ${args[0]} exited with ${code}:\n${output}`)),
    );
  });
}

/** One build kept in the cache. */
interface CachedBuild {
  /** Its folder in the cache. */
  readonly dir: string;
  /** The release it builds, written to build.json. */
  readonly release: string;
  /** True when `dir` holds a finished build. */
  readonly built: () => boolean;
  /** Builds into the (empty) scratch folder. */
  readonly build: (scratch: string) => Promise<void>;
  /** What the log lines call it, and how long its first build takes. */
  readonly what: string;
  readonly takes: string;
}

/**
 * Builds into a scratch folder renamed into place once finished (so an interrupted build is never taken for a finished
 * one), with a build.json of the release and the time it took, unless the cache holds it already; the seconds the build
 * took, or undefined when it was cached.
 */
async function cachedBuild(build: CachedBuild, log: (line: string) => void): Promise<number | undefined> {
  if (build.built()) return undefined;
  const { dir, release } = build;
  await mkdir(dirname(dir), { recursive: true });
  const scratch = `${dir}.building-${process.pid}`;
  await rm(scratch, { recursive: true, force: true });
  log(`building ${build.what} from Go modules into ${dir}; the first build takes ${build.takes}`);
  const started = Date.now();
  try {
    await mkdir(scratch, { recursive: true });
    await build.build(scratch);
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
  log(`built ${build.what} in ${builtSeconds.toFixed(0)} s`);
  return builtSeconds;
}

export { cachedBuild, runGo, sourceDigest };
