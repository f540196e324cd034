/**
 * The CLI's start time, for `npm run bench`: fresh processes of the prebuilt bundle against
 * `node -e 0` on the same Node, runs interleaved after a warm-up so that load from elsewhere falls on all alike;
 * medians. Also runs the sources through tsx, as bin/podmutation.mjs did before the bundle, for scale.
 */
import { fileURLToPath } from 'node:url';
import { buildCli } from './build-cli.ts';
import { median, timeNodeProcess } from './measure.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/podmutation.mjs', import.meta.url));
const REVIEW = fileURLToPath(new URL('../test/fixtures/reviews/deployment-legacy-pool.json', import.meta.url));
const RUNS = 11;

/** One measured command line: its median wall time, and the target it must stay under, if any. */
export interface StartTime {
  readonly label: string;
  readonly ms: number;
  readonly targetMs?: number;
}

/** The start times and the floor (`node -e 0`) they are measured against, in milliseconds. */
export interface StartTimes {
  readonly floorMs: number;
  readonly rows: readonly StartTime[];
  readonly runs: number;
}

function time(args: readonly string[]): number {
  return timeNodeProcess(args, { cwd: ROOT });
}

/** Builds the bundle from the current sources, then times each command line in fresh processes. */
export async function measureCliStart(runs = RUNS): Promise<StartTimes> {
  await buildCli();
  const cases = [
    { label: 'node -e 0', args: ['-e', '0'] },
    { label: 'podmutation --version', args: [BIN, '--version'], targetMs: 150 },
    {
      label: 'podmutation review (one AdmissionReview)',
      args: [BIN, 'review', '--rules', 'examples/rules', REVIEW],
      targetMs: 300,
    },
    // What every start cost before the bundle: TypeScript compiled at run time.
    { label: 'podmutation --version from sources (tsx)', args: ['--import', 'tsx', 'bin/main.ts', '--version'] },
  ] as const;
  const times = cases.map(() => [] as number[]);
  for (const item of cases) time(item.args);
  for (let run = 0; run < runs; run += 1) cases.forEach((item, index) => times[index]!.push(time(item.args)));
  const [floor, ...rest] = cases.map((item, index) => ({
    label: item.label,
    ms: median(times[index]!),
    ...('targetMs' in item ? { targetMs: item.targetMs } : {}),
  }));
  return { floorMs: floor!.ms, rows: rest, runs };
}

/** The figures as lines: each command's median, its ratio to `node -e 0`, and its target. */
export function startTimeLines(times: StartTimes): string[] {
  return [
    `CLI start, median of ${times.runs} fresh processes: node -e 0 ${times.floorMs.toFixed(0)} ms`,
    ...times.rows.map(
      (row) =>
        `  ${row.label.padEnd(44)} ${`${row.ms.toFixed(0)} ms`.padStart(7)}  ${(row.ms / times.floorMs).toFixed(2)}x node -e 0${row.targetMs === undefined ? '' : `  (target under ${row.targetMs} ms)`}`,
    ),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const line of startTimeLines(await measureCliStart())) console.log(line);
}
