/**
 * The real `podmutation` CLI as the scenarios run it against their cluster: `report` and `rollout` with the admin's
 * kubeconfig, `sync --once`, and what each prints read back (the report's JSON, the rollout's JSON lines, the sync's
 * report line).
 */
import type { MigrationReport } from '../../lib/report/index.ts';
import type { RolloutRecord } from '../../lib/rollout/index.ts';
import type { SyncReport } from '../../lib/sync/index.ts';
import { runPodmutation, type CliRun } from '../support/cli.ts';
import type { ControlPlane } from './control-plane.ts';

/** `podmutation report --kubeconfig ADMIN ARGS`, as it printed it. */
function reportRun(plane: ControlPlane, args: readonly string[]): Promise<CliRun> {
  return runPodmutation(['report', '--kubeconfig', plane.adminKubeconfig, ...args]);
}

/** `podmutation report --kubeconfig ADMIN ARGS -o json`, and the report it printed. */
async function reportJson(
  plane: ControlPlane,
  args: readonly string[],
): Promise<{ readonly run: CliRun; readonly result: MigrationReport }> {
  const run = await reportRun(plane, [...args, '-o', 'json']);
  if (!run.stdout.startsWith('{'))
    throw new Error(`podmutation report printed no report (exit ${run.code}): ${run.stderr}`);
  return { run, result: JSON.parse(run.stdout) as MigrationReport };
}

/** The records `podmutation rollout -o json` printed, one JSON line each. */
function rolloutRecords(stdout: string): RolloutRecord[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as RolloutRecord);
}

/** `podmutation rollout --kubeconfig ADMIN -o json ARGS`, and the records it printed. */
async function rolloutJson(
  plane: ControlPlane,
  args: readonly string[],
): Promise<{ readonly run: CliRun; readonly records: RolloutRecord[] }> {
  const run = await runPodmutation(['rollout', '--kubeconfig', plane.adminKubeconfig, '-o', 'json', ...args]);
  return { run, records: rolloutRecords(run.stdout) };
}

/** `podmutation sync --once ARGS`, and the report it prints as its last line (undefined when it printed none). */
async function syncOnce(
  args: readonly string[],
): Promise<{ readonly run: CliRun; readonly report: SyncReport | undefined }> {
  const run = await runPodmutation(['sync', '--once', ...args]);
  const line = run.stdout.trim().split('\n').at(-1) ?? '';
  return { run, report: line.startsWith('{') ? (JSON.parse(line) as SyncReport) : undefined };
}

export { reportJson, reportRun, rolloutJson, rolloutRecords, syncOnce };
