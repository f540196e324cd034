/**
 * The scheduling fields of two Pods compared as Kubernetes reads them: tolerations, required terms (ORed), the
 * requirements of a term (ANDed), the values of a requirement and preferred terms (weight and term) as sets.
 */
import type { PodFacts } from '../engine/index.ts';
import { tolerationIdentity, type Requirement, type Term, type Toleration } from '../scheduling/index.ts';
import { canonicalJson, isJsonObject, previewInput } from '../values/index.ts';

/** Longest change line, in characters; the rest is cut with "…". */
const MAX_CHANGE_CHARS = 240;

/** One field's members: identity → how a person reads it. */
type Members = ReadonlyMap<string, string>;

function requirementText(requirement: Requirement, field: boolean): string {
  const values = [...new Set(requirement.values)].sort();
  return `${field ? 'field:' : ''}${requirement.key} ${requirement.operator}${values.length === 0 ? '' : ` [${values.join(',')}]`}`;
}

function termText(term: Term): string {
  const parts = [
    ...term.expressions.map((item) => requirementText(item, false)),
    ...term.fields.map((item) => requirementText(item, true)),
  ];
  return `{${[...new Set(parts)].sort().join(', ')}}`;
}

function tolerationText(toleration: Toleration): string {
  const operator = toleration.operator || 'Equal';
  const match = operator === 'Equal' ? `=${toleration.value ?? ''}` : `:${operator}`;
  const effect = toleration.effect ? `:${toleration.effect}` : '';
  const seconds = toleration.tolerationSeconds === undefined ? '' : `/${previewInput(toleration.tolerationSeconds)}s`;
  return `${toleration.key || '*'}${match}${effect}${seconds}`;
}

/**
 * A spread constraint without what the API server merges into it: with matchLabelKeys, the API server adds an In
 * requirement per key (with the Pod's own label value) to labelSelector at creation, which the template never has.
 */
function spreadIdentity(constraint: unknown): string {
  if (!isJsonObject(constraint) || !Array.isArray(constraint.matchLabelKeys) || !isJsonObject(constraint.labelSelector))
    return canonicalJson(constraint);
  const keys = new Set(constraint.matchLabelKeys.filter((key): key is string => typeof key === 'string'));
  const { matchExpressions, ...selector } = constraint.labelSelector;
  const kept = Array.isArray(matchExpressions)
    ? matchExpressions.filter(
        (item) => !(isJsonObject(item) && item.operator === 'In' && typeof item.key === 'string' && keys.has(item.key)),
      )
    : [];
  const labelSelector = kept.length === 0 ? selector : { ...selector, matchExpressions: kept };
  const normalized: Record<string, unknown> = { ...constraint, labelSelector };
  if (Object.keys(labelSelector).length === 0) delete normalized.labelSelector;
  return canonicalJson(normalized);
}

function spreadText(constraint: unknown): string {
  const fields = isJsonObject(constraint) ? constraint : {};
  const part = (value: unknown): string =>
    typeof value === 'string' || typeof value === 'number' ? String(value) : '?';
  return `${part(fields.topologyKey)}:${part(fields.whenUnsatisfiable)}:maxSkew=${part(fields.maxSkew)}`;
}

function members<T>(items: readonly T[], identity: (item: T) => string, text: (item: T) => string): Members {
  const result = new Map<string, string>();
  for (const item of items) {
    const id = identity(item);
    if (!result.has(id)) result.set(id, text(item));
  }
  return result;
}

/** "-x" for each member only the running Pod has, then "+y" for each only the rollout's has; each group sorted. */
function difference(rollout: Members, running: Members): string[] {
  const removed = [...running]
    .filter(([id]) => !rollout.has(id))
    .map(([, text]) => text)
    .sort();
  const added = [...rollout]
    .filter(([id]) => !running.has(id))
    .map(([, text]) => text)
    .sort();
  return [...removed.map((text) => `-${text}`), ...added.map((text) => `+${text}`)];
}

function pairs(map: Readonly<Record<string, string>>, keys?: readonly string[]): Members {
  const result = new Map<string, string>();
  for (const key of keys ?? Object.keys(map)) {
    if (!Object.hasOwn(map, key)) continue;
    const value = map[key]!;
    result.set(`${key}\u0000${value}`, `${key}=${value}`);
  }
  return result;
}

/**
 * What a rollout would change on the running Pod: one line of `field: -before +after` parts (nodeSelector,
 * tolerations, nodeAffinity required, nodeAffinity preferred, topologySpreadConstraints, then the annotations
 * `annotationKeys` names), members sorted, at most 240 characters; "" when the scheduling is the same. Independent of
 * the order of tolerations, terms, requirements, values and preferences on either Pod.
 */
function schedulingChange(rollout: PodFacts, running: PodFacts, annotationKeys: readonly string[]): string {
  const fields: [string, string[]][] = [
    ['nodeSelector', difference(pairs(rollout.nodeSelector), pairs(running.nodeSelector))],
    [
      'tolerations',
      difference(
        members(rollout.tolerations, tolerationIdentity, tolerationText),
        members(running.tolerations, tolerationIdentity, tolerationText),
      ),
    ],
    [
      'nodeAffinity required',
      difference(
        members(rollout.nodeAffinity.required ?? [], (term) => term.id, termText),
        members(running.nodeAffinity.required ?? [], (term) => term.id, termText),
      ),
    ],
    [
      'nodeAffinity preferred',
      difference(
        members(
          rollout.nodeAffinity.preferred,
          (item) => item.id,
          (item) => `${item.weight}${termText(item.term)}`,
        ),
        members(
          running.nodeAffinity.preferred,
          (item) => item.id,
          (item) => `${item.weight}${termText(item.term)}`,
        ),
      ),
    ],
    [
      'topologySpreadConstraints',
      difference(
        members(rollout.topologySpreadConstraints, spreadIdentity, spreadText),
        members(running.topologySpreadConstraints, spreadIdentity, spreadText),
      ),
    ],
    ['annotations', difference(pairs(rollout.annotations, annotationKeys), pairs(running.annotations, annotationKeys))],
  ];
  const line = fields
    .filter(([, parts]) => parts.length > 0)
    .map(([name, parts]) => `${name}: ${parts.join(' ')}`)
    .join('; ');
  return boundedLine(line);
}

/** A line cut to 240 characters, the cut marked with "…". */
function boundedLine(line: string): string {
  return line.length <= MAX_CHANGE_CHARS ? line : `${line.slice(0, MAX_CHANGE_CHARS - 1)}…`;
}

export { boundedLine, schedulingChange, MAX_CHANGE_CHARS };
