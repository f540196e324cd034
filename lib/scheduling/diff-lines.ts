/**
 * A scheduling diff as lines a person reads, each tagged with its sign so that a terminal can colour it. Requirements
 * read `example.com/node-pool In [legacy]`, `kubernetes.io/arch Exists`, `example.com/generation Gt 5`,
 * `field metadata.name In [node-1]`; tolerations as kubectl describe prints them
 * (`example.com/spot=true:NoSchedule`, `node.kubernetes.io/not-ready:NoExecute op=Exists for 300s`).
 */
import type { Toleration } from './kubernetes.ts';
import type { Preference, Requirement, Term } from './requirements.ts';
import { canonicalJson, previewInput } from '../values/index.ts';
import {
  termsChanged,
  type EntryChanges,
  type KeyChange,
  type PlacedTerm,
  type RequiredChanges,
  type SchedulingDiff,
  type TermPair,
} from './diff.ts';

/** '+' only after, '-' only before, ' ' a heading, a note or an unchanged part shown for context. */
type DiffSign = '+' | '-' | ' ';

/** One line of a rendered diff; `text` carries its own indentation. */
interface DiffLine {
  readonly sign: DiffSign;
  readonly text: string;
}

const INDENT = '  ';

// Label keys and values, field names and Gt/Lt operands print bare; anything else is quoted, so no token reads as two.
const BARE_TOKEN = /^[-+A-Za-z0-9_./]+$/;
// A bare spread field value must not read as a number, a boolean or null.
const BARE_WORD = /^[A-Za-z][-A-Za-z0-9_./]*$/;
const JSON_WORDS: ReadonlySet<string> = new Set(['true', 'false', 'null']);
// An annotation value prints bare unless it is empty, starts with a quote or blank, ends blank or holds a control character.
const BARE_TEXT = /^(?!["\s])[^\p{Cc}]*(?<!\s)$/u;

function token(text: string): string {
  return BARE_TOKEN.test(text) ? text : JSON.stringify(text);
}

function annotationValue(text: string): string {
  return text !== '' && BARE_TEXT.test(text) ? text : JSON.stringify(text);
}

function requirementText(requirement: Requirement, field: boolean): string {
  const { key, operator, values } = requirement;
  const operand =
    values.length === 0
      ? ''
      : (operator === 'Gt' || operator === 'Lt') && values.length === 1
        ? ` ${token(values[0]!)}`
        : ` [${values.map(token).join(', ')}]`;
  return `${field ? 'field ' : ''}${token(key)} ${token(operator)}${operand}`;
}

/** The requirements of a term in its order, each as a person reads it; matchFields marked `field`. */
function requirementTexts(
  term: Term,
  requirements: readonly Requirement[] = [...term.expressions, ...term.fields],
): string[] {
  return requirements.map((requirement) => requirementText(requirement, term.fields.includes(requirement)));
}

function termText(term: Term): string {
  const texts = requirementTexts(term);
  return texts.length === 0 ? '(no requirements: matches no node)' : texts.join(', ');
}

function tolerationText(toleration: Toleration): string {
  const { key, value, effect, tolerationSeconds } = toleration;
  const operator = toleration.operator || 'Equal';
  const match = `${key ? token(key) : ''}${value ? `=${token(value)}` : ''}${effect ? `:${token(effect)}` : ''}`;
  const parts = [
    match,
    operator === 'Equal' ? '' : `op=${token(operator)}`,
    tolerationSeconds === undefined ? '' : `for ${previewInput(tolerationSeconds)}s`,
  ];
  return parts.filter((part) => part !== '').join(' ') || 'op=Equal';
}

function preferenceText(preference: Preference): string {
  return `weight ${preference.weight}: ${termText(preference.term)}`;
}

const SPREAD_LEADING_FIELDS = ['topologyKey', 'maxSkew', 'whenUnsatisfiable'];

/** A spread constraint on one line: its leading fields first, then the others by name; nested values as JSON. */
function spreadText(constraint: unknown): string {
  if (
    typeof constraint !== 'object' ||
    constraint === null ||
    Array.isArray(constraint) ||
    Object.keys(constraint).length === 0
  ) {
    return canonicalJson(constraint);
  }
  const record = constraint as Readonly<Record<string, unknown>>;
  const names = [
    ...SPREAD_LEADING_FIELDS.filter((name) => Object.hasOwn(record, name)),
    ...Object.keys(record)
      .filter((name) => !SPREAD_LEADING_FIELDS.includes(name))
      .sort(),
  ];
  const valueText = (value: unknown) =>
    typeof value === 'string' && BARE_WORD.test(value) && !JSON_WORDS.has(value) ? value : canonicalJson(value);
  return names.map((name) => `${name}=${valueText(record[name])}`).join(' ');
}

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

function entryLines<T>(heading: string, changes: EntryChanges<T>, text: (entry: T) => string): DiffLine[] {
  if (changes.reordered) return [line(' ', 0, `${heading}: reordered only (the same as a set)`)];
  if (changes.removed.length === 0 && changes.added.length === 0) return [];
  return [
    line(' ', 0, `${heading}:`),
    ...changes.removed.map((entry) => line('-', 1, text(entry))),
    ...changes.added.map((entry) => line('+', 1, text(entry))),
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

function requiredLines(required: RequiredChanges): DiffLine[] {
  const heading = 'required node affinity (terms ORed)';
  if (required.reordered) return [line(' ', 0, `${heading}: reordered only (the same as a set)`)];
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
 * reordered prints a note. Pure.
 */
function schedulingDiffLines(diff: SchedulingDiff): DiffLine[] {
  return [
    ...keyLines('annotations', diff.annotations, (key, value) => `${token(key)}: ${annotationValue(value)}`),
    ...keyLines('nodeSelector', diff.nodeSelector, (key, value) => `${token(key)}=${token(value)}`),
    ...entryLines('tolerations', diff.tolerations, tolerationText),
    ...requiredLines(diff.required),
    ...entryLines('preferred node affinity', diff.preferred, preferenceText),
    ...entryLines('topologySpreadConstraints', diff.topologySpreadConstraints, spreadText),
  ];
}

export { schedulingDiffLines };
export type { DiffLine, DiffSign };
