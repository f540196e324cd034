/**
 * What the measuring scripts (build, bench, scale) share: the median of runs, the wall time of a fresh process, and
 * alternating rounds of in-process work.
 */
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

/** Nanoseconds per call of `work`, calling it in batches of 16 for `roundMs` milliseconds. */
function timeRound(work: () => void, roundMs: number): number {
  let calls = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(roundMs * 1e6);
  let now = start;
  while (now < deadline) {
    for (let batch = 0; batch < 16; batch += 1) work();
    calls += 16;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / calls;
}

/**
 * Median nanoseconds per call of each piece of work. Rounds alternate between them, so load from elsewhere on a
 * shared machine falls on all of them alike and their ratios stay meaningful.
 */
export function measureAlternating(
  works: readonly (() => void)[],
  options: { readonly rounds: number; readonly roundMs: number },
): number[] {
  const warmUntil = performance.now() + 300;
  while (performance.now() < warmUntil) for (const work of works) work();
  const rounds = works.map((): number[] => []);
  for (let round = 0; round < options.rounds; round += 1)
    works.forEach((work, index) => rounds[index]!.push(timeRound(work, options.roundMs)));
  return rounds.map(median);
}
