import type { Writable } from 'node:stream';
import { STAMP_ANNOTATION, type Pod } from '../engine/index.ts';
import { diffScheduling, schedulingDiffLines, schedulingFieldsOf, type DiffSign } from '../scheduling/index.ts';

/** The environment variables the colour decision reads; commands pass `process.env`, tests their own. */
type ColourEnvironment = Readonly<Record<string, string | undefined>>;

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

// The stamp is the webhook's record of the change shown, not a part of it.
const shownAnnotation = (key: string): boolean => key !== STAMP_ANNOTATION;

/** One diff line as "S text" (S the sign), green for + and red for - when `colour`. */
export function diffLine(sign: DiffSign, text: string, colour: boolean): string {
  const [open, close] = colour ? COLOURS[sign] : ['', ''];
  return `${open}${sign} ${text}${close}`;
}

/** The semantic diff of two Pods' scheduling fields, one "S text" line each (S the sign); green + and red - when `colour`. */
export function schedulingDiff(before: Pod, after: Pod, colour: boolean): string[] {
  return schedulingDiffLines(
    diffScheduling(schedulingFieldsOf(before, shownAnnotation), schedulingFieldsOf(after, shownAnnotation)),
  ).map(({ sign, text }) => diffLine(sign, text, colour));
}

/**
 * A line diff of two texts (longest common subsequence), for documents with no semantic diff (a whole patched
 * resource): each line signed ' ', '-' or '+'. Inputs are one resource, so the quadratic table is fine.
 */
export function lineDiff(before: string, after: string): { readonly sign: DiffSign; readonly text: string }[] {
  const left = before === '' ? [] : before.split('\n');
  const right = after === '' ? [] : after.split('\n');
  const common: number[][] = Array.from({ length: left.length + 1 }, () => new Array<number>(right.length + 1).fill(0));
  for (let i = left.length - 1; i >= 0; i -= 1) {
    for (let j = right.length - 1; j >= 0; j -= 1) {
      common[i]![j] =
        left[i] === right[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const lines: { sign: DiffSign; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i < left.length && j < right.length && left[i] === right[j]) {
      lines.push({ sign: ' ', text: left[i]! });
      i += 1;
      j += 1;
    } else if (i < left.length && (j === right.length || common[i + 1]![j]! >= common[i]![j + 1]!)) {
      lines.push({ sign: '-', text: left[i]! });
      i += 1;
    } else {
      lines.push({ sign: '+', text: right[j]! });
      j += 1;
    }
  }
  return lines;
}
