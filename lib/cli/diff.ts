import type { Writable } from 'node:stream';
import type { Pod } from '../engine/index.ts';
import { diffScheduling, schedulingDiffLines, type DiffSign, type SchedulingFields } from '../scheduling/index.ts';

/** The environment variables the colour decision reads; commands pass `process.env`, tests their own. */
export type ColourEnvironment = Readonly<Record<string, string | undefined>>;

// FORCE_COLOR=0 and FORCE_COLOR=false turn colour off, as Node and supports-color read them.
const FORCE_COLOR_OFF: ReadonlySet<string> = new Set(['0', 'false']);

/**
 * Whether to colour a diff written to `stream`. NO_COLOR, "when present and not an empty string" (no-color.org), turns
 * colour off whatever else is set; a non-empty FORCE_COLOR turns it on without a TTY (force-color.org), or off when it
 * is 0 or false; otherwise colour only a TTY whose TERM is not dumb.
 */
export function colourWanted(stream: Writable & { readonly isTTY?: boolean }, env: ColourEnvironment): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') return !FORCE_COLOR_OFF.has(force.toLowerCase());
  return stream.isTTY === true && env.TERM !== 'dumb';
}

// SGR foreground colours, each closed by "default foreground" so that no colour leaks into the next line.
const COLOURS: Readonly<Record<DiffSign, readonly [string, string]>> = {
  '+': ['\u001b[32m', '\u001b[39m'],
  '-': ['\u001b[31m', '\u001b[39m'],
  ' ': ['', ''],
};

/** The scheduling fields rules and managed placement change, read from a Pod the engine's boundary accepted. */
function schedulingFieldsOf(pod: Pod): SchedulingFields {
  return {
    annotations: pod.metadata?.annotations,
    nodeSelector: pod.spec?.nodeSelector,
    tolerations: pod.spec?.tolerations,
    nodeAffinity: pod.spec?.affinity?.nodeAffinity,
    topologySpreadConstraints: pod.spec?.topologySpreadConstraints,
  };
}

/** The semantic diff of two Pods' scheduling fields, one "S text" line each (S the sign); green + and red - when `colour`. */
export function schedulingDiff(before: Pod, after: Pod, colour: boolean): string[] {
  return schedulingDiffLines(diffScheduling(schedulingFieldsOf(before), schedulingFieldsOf(after))).map(({ sign, text }) => {
    const [open, close] = colour ? COLOURS[sign] : ['', ''];
    return `${open}${sign} ${text}${close}`;
  });
}
