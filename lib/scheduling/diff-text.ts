/**
 * The one text of each part of a scheduling diff, which every rendering of it prints (explain's and test's lines,
 * report's change line). Requirements read `example.com/node-pool In [legacy]`, `kubernetes.io/arch Exists`,
 * `example.com/generation Gt 5`, `field metadata.name In [node-1]`; tolerations as kubectl describe prints them
 * (`example.com/spot=true:NoSchedule`, `node.kubernetes.io/not-ready:NoExecute op=Exists for 300s`); nodeSelector
 * pairs `key=value`; annotations `key: value`.
 */
import type { Toleration } from './core-shapes.ts';
import type { Preference, Requirement, Term } from './requirements.ts';
import { canonicalJson, previewInput } from '../json/index.ts';

/** The heading of each field, in the order of a Pod. */
const FIELD_HEADINGS = {
  annotations: 'annotations',
  nodeSelector: 'nodeSelector',
  tolerations: 'tolerations',
  required: 'required node affinity (terms ORed)',
  preferred: 'preferred node affinity',
  topologySpreadConstraints: 'topologySpreadConstraints',
} as const;

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

/** An annotation as `key: value`, the value quoted when it would not read back as itself. */
function annotationText(key: string, value: string): string {
  return `${token(key)}: ${annotationValue(value)}`;
}

/** A nodeSelector pair as `key=value`. */
function nodeSelectorText(key: string, value: string): string {
  return `${token(key)}=${token(value)}`;
}

/** A requirement as a person reads it, its values as given; `field` marks a matchFields requirement. */
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

/** A term's requirements on one line, in its order. */
function termText(term: Term): string {
  const texts = requirementTexts(term);
  return texts.length === 0 ? '(no requirements: matches no node)' : texts.join(', ');
}

/** A term on one line whatever its order: requirements sorted, each with its values as a sorted set. */
function termSetText(term: Term): string {
  const texts = [
    ...term.expressions.map((item) => requirementText(asSet(item), false)),
    ...term.fields.map((item) => requirementText(asSet(item), true)),
  ].sort();
  return texts.length === 0 ? termText(term) : texts.join(', ');
}

function asSet(requirement: Requirement): Requirement {
  return { ...requirement, values: [...new Set(requirement.values)].sort() };
}

/** A toleration as kubectl describe prints it; an absent operator is Equal. */
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

/** A preferred term as `weight N: requirements`; `termOf` renders the term (as written, or as a set). */
function preferenceText(preference: Preference, termOf: (term: Term) => string = termText): string {
  return `weight ${preference.weight}: ${termOf(preference.term)}`;
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

/** The note of a field the same as Kubernetes reads it yet written differently: reordered, or with other repeats. */
function sameAsSetNote(heading: string, repeats: boolean): string {
  return `${heading}: ${repeats ? 'repeats only' : 'reordered only'} (the same as a set)`;
}

/**
 * Why no Pod term holds a selector term, for explain: the requirements that the Pod term holding most of some selector
 * term lacks, as `example.com/node-pool In [legacy]` (the first such selector term and Pod term, in their order).
 */
function missingRequirementsText(podTerms: readonly Term[], selectorTerms: readonly Term[]): string {
  let best: { readonly selector: Term; readonly missing: readonly Requirement[] } | undefined;
  for (const selector of selectorTerms) {
    const wanted = [...selector.expressions, ...selector.fields];
    for (const pod of podTerms) {
      const missing = wanted.filter((requirement) => !pod.ids.has(requirement.id));
      if (best === undefined || missing.length < best.missing.length) best = { selector, missing };
    }
  }
  if (best === undefined) return '';
  return requirementTexts(best.selector, best.missing).join(', ');
}

export {
  FIELD_HEADINGS,
  missingRequirementsText,
  annotationText,
  nodeSelectorText,
  requirementTexts,
  termText,
  termSetText,
  tolerationText,
  preferenceText,
  spreadText,
  sameAsSetNote,
};
