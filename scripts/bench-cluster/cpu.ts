/** The CPU time of processes, read from Linux's /proc, so that a round can say what each process spent per Pod. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

// proc(5): utime and stime, fields 14 and 15 of /proc/PID/stat, count every thread of the process in clock ticks.
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Milliseconds of CPU (user and system, all threads) the process has used so far; undefined once it is gone. */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** CPU milliseconds of each named process now, to subtract from a later reading. */
export function cpuReading(pids: Readonly<Record<string, number | undefined>>): Map<string, number> {
  const reading = new Map<string, number>();
  for (const [name, pid] of Object.entries(pids)) {
    const used = cpuMs(pid);
    if (used !== undefined) reading.set(name, used);
  }
  return reading;
}

/** What each process spent between two readings, in milliseconds. */
export function cpuSpent(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([name, used]) => [name, used - (before.get(name) ?? used)]));
}
