/** What the measuring scripts (build, bench, scale) share: the median of runs and the wall time of a fresh process. */
import { spawnSync } from 'node:child_process';

/** The median of measurements (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Wall time of one fresh `node ARGS` process (this process's Node), in milliseconds; fails unless it exits 0. */
export function timeNodeProcess(
  args: readonly string[],
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', ...options });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr.trim()}`);
  return elapsed;
}
