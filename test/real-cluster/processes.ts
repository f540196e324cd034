/**
 * The processes of the real-cluster suite: each server is started so that it dies with the process that started it,
 * even when that process is killed (setpriv --pdeathsig from util-linux, which every Debian system has), so a crashed
 * or interrupted run leaves no server behind; free loopback ports; polling until a condition holds.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { freePort } from '../support/ports.ts';

/** A server process with its log file. */
interface Supervised {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** The exit code or signal once it has exited. */
  readonly exited: () => string | undefined;
  /** The last lines of its log, for a failure message. */
  readonly logTail: (lines?: number) => string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  readonly stop: (graceMs?: number) => Promise<void>;
}

// PR_SET_PDEATHSIG: the kernel sends the signal when the thread that forked the child ends. Node forks from its main
// thread (libuv's uv_spawn), so the signal comes when this process ends, however it ends.
const HAS_SETPRIV = spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Starts `command` with its output appended to `logFile`, killed with SIGKILL if this process dies first. */
function startSupervised(
  name: string,
  command: string,
  args: readonly string[],
  options: { logFile: string; env?: NodeJS.ProcessEnv; cwd?: string },
): Supervised {
  const fd = openSync(options.logFile, 'a');
  const [file, argv] = HAS_SETPRIV
    ? ['setpriv', ['--pdeathsig', 'KILL', '--', command, ...args]]
    : [command, [...args]];
  const child = spawn(file, argv, {
    stdio: ['ignore', fd, fd],
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  closeSync(fd);
  let exit: string | undefined;
  const closed = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      exit = signal ?? String(code);
      resolve();
    });
    child.on('error', (error) => {
      exit = `failed to start: ${error.message}`;
      resolve();
    });
  });
  // A parent that exits normally (vitest ending a worker) kills what is left as well.
  const onExit = (): void => {
    if (exit === undefined) child.kill('SIGKILL');
  };
  process.on('exit', onExit);
  return {
    name,
    child,
    logFile: options.logFile,
    exited: () => exit,
    logTail: (lines = 30) => tail(options.logFile, lines),
    stop: async (graceMs = 5_000) => {
      process.off('exit', onExit);
      if (exit !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}

/**
 * Polls `probe` every `intervalMs` until it returns a value other than undefined, and returns it; fails after
 * `timeoutMs` with `what` and the last error the probe threw. `failFast` stops early with its message (a process died).
 */
async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: {
    readonly timeoutMs?: number;
    readonly intervalMs?: number;
    readonly failFast?: () => string | undefined;
  } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let lastError: unknown;
  for (;;) {
    const fatal = options.failFast?.();
    if (fatal !== undefined) throw new Error(`${what}: ${fatal}`);
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError === undefined ? '' : ` (last error: ${(lastError as Error).message})`;
      throw new Error(`timed out after ${options.timeoutMs ?? 60_000} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
}

export { startSupervised, freePort, waitFor, HAS_SETPRIV };
export type { Supervised };
