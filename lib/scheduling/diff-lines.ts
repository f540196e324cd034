/**
 * A scheduling diff as lines a person reads (explain, test), each tagged with its sign so that a terminal can colour
 * it; every part printed with diff-text.ts's text.
 */
import {
  termsChanged,
  termsRewritten,
  type EntryChanges,
  type KeyChange,
  type PlacedTerm,
  type RequiredChanges,
  type SchedulingDiff,
  type TermPair,
} from './diff.ts';
import {
  FIELD_HEADINGS,
  annotationText,
  nodeSelectorText,
  preferenceText,
  requirementTexts,
  sameAsSetNote,
  spreadText,
  termText,
  tolerationText,
} from './diff-text.ts';

/** '+' only after, '-' only before, ' ' a heading, a note or an unchanged part shown for context. */
type DiffSign = '+' | '-' | ' ';

/** One line of a rendered diff; `text` carries its own indentation. */
interface DiffLine {
  readonly sign: DiffSign;
  readonly text: string;
}

const INDENT = '  ';

function line(sign: DiffSign, depth: number, text: string): DiffLine {
  return { sign, text: `${INDENT.repeat(depth)}${text}` };
}

function keyLines(
  heading: string,
  changes: readonly KeyChange[],
  text: (key: string, value: string) => string,
): DiffLine[] {
  if (changes.length === 0) return [];
  const lines = [line(' ', 0, `${heading}:`)];
  for (const { key, before, after } of changes) {
    if (before !== undefined) lines.push(line('-', 1, text(key, before)));
    if (after !== undefined) lines.push(line('+', 1, text(key, after)));
  }
  return lines;
}

/** The entries Kubernetes reads as lost and gained; a note when the lists read the same but are written differently. */
function entryLines<T>(heading: string, changes: EntryChanges<T>, text: (entry: T) => string): DiffLine[] {
  const repeats = changes.removed.length > 0 || changes.added.length > 0;
  if (changes.reordered) return [line(' ', 0, sameAsSetNote(heading, repeats))];
  if (changes.lost.length === 0 && changes.gained.length === 0) return [];
  return [
    line(' ', 0, `${heading}:`),
    ...changes.lost.map((entry) => line('-', 1, text(entry))),
    ...changes.gained.map((entry) => line('+', 1, text(entry))),
  ];
}

/** A changed term: its kept requirements for context, then what it lost and gained, a replaced requirement's - beside its +. */
function pairLines(pair: TermPair): DiffLine[] {
  const { before, after } = pair;
  const moved = before.position === after.position ? '' : ` (was term ${before.position + 1})`;
  if (pair.removed.length === 0 && pair.added.length === 0) {
    const unchanged = moved === '' ? ' (unchanged)' : ` (was term ${before.position + 1}, unchanged)`;
    return [line(' ', 1, `term ${after.position + 1}${unchanged}: ${termText(after.term)}`)];
  }
  const lines = [line(' ', 1, `term ${after.position + 1}${moved}:`)];
  const kept = [...after.term.expressions, ...after.term.fields].filter((requirement) =>
    before.term.ids.has(requirement.id),
  );
  for (const text of requirementTexts(after.term, kept)) lines.push(line(' ', 2, text));
  const keys = [...new Set([...pair.removed, ...pair.added].map((requirement) => requirement.key))];
  for (const key of keys) {
    const removed = pair.removed.filter((requirement) => requirement.key === key);
    const added = pair.added.filter((requirement) => requirement.key === key);
    for (const text of requirementTexts(before.term, removed)) lines.push(line('-', 2, text));
    for (const text of requirementTexts(after.term, added)) lines.push(line('+', 2, text));
  }
  return lines;
}

function wholeTermLines(sign: '+' | '-', heading: string, placed: PlacedTerm): DiffLine[] {
  const texts = requirementTexts(placed.term);
  return [
    line(sign, 1, heading),
    ...(texts.length === 0 ? [termText(placed.term)] : texts).map((text) => line(sign, 2, text)),
  ];
}

/** The OR of terms as written, each term after paired with the one it succeeds, when the OR changed; else a note. */
function requiredLines(required: RequiredChanges): DiffLine[] {
  const heading = FIELD_HEADINGS.required;
  if (required.reordered) return [line(' ', 0, sameAsSetNote(heading, termsRewritten(required)))];
  if (!termsChanged(required)) return [];
  const byPosition = new Map<number, DiffLine[]>();
  for (const pair of required.pairs) byPosition.set(pair.after.position, pairLines(pair));
  for (const placed of required.added)
    byPosition.set(placed.position, wholeTermLines('+', `new term ${placed.position + 1}:`, placed));
  const positions = [...byPosition.keys()].sort((a, b) => a - b);
  return [
    line(' ', 0, `${heading}:`),
    ...positions.flatMap((position) => byPosition.get(position)!),
    ...required.removed.flatMap((placed) =>
      wholeTermLines('-', `removed term (was term ${placed.position + 1}):`, placed),
    ),
  ];
}

/**
 * The diff as lines, field by field in the order of a Pod (annotations, nodeSelector, tolerations, required and
 * preferred node affinity, topologySpreadConstraints); a field that did not change prints nothing, one that was only
 * reordered (or repeated) prints a note. Pure.
 */
function schedulingDiffLines(diff: SchedulingDiff): DiffLine[] {
  return [
    ...keyLines(FIELD_HEADINGS.annotations, diff.annotations, annotationText),
    ...keyLines(FIELD_HEADINGS.nodeSelector, diff.nodeSelector, nodeSelectorText),
    ...entryLines(FIELD_HEADINGS.tolerations, diff.tolerations, tolerationText),
    ...requiredLines(diff.required),
    ...entryLines(FIELD_HEADINGS.preferred, diff.preferred, (entry) => preferenceText(entry)),
    ...entryLines(FIELD_HEADINGS.topologySpreadConstraints, diff.topologySpreadConstraints, spreadText),
  ];
}

export { schedulingDiffLines };
export type { DiffSign };
