import { isDns1123Label, isDns1123Subdomain, isInt64, labelValueProblem, previewInput, qualifiedNameProblem } from '../values/index.ts';
import type { LabelSelector, LabelSelectorRequirement, NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm, Toleration } from '../scheduling/index.ts';
import { budgetIssues, ruleCost } from './budget.ts';
import {
  LIMITS,
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  RESERVED_KEYS,
  type MutationAdd,
  type MutationRemove,
  type NodeAffinityRemoval,
  type NormalizedRule,
  type RuleIssue,
  type RuleVerdict,
  type WorkloadSelector,
} from './types.ts';

type Json = Record<string, unknown>;

const NODE_OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);
const LABEL_OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);
const TOLERATION_OPERATORS = new Set(['Equal', 'Exists']);
const TAINT_EFFECTS = new Set(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']);
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
/** Issues kept per rule: enough to fix a rule, few enough to bound a status and a snapshot entry. */
const MAX_ISSUES = 32;

/** Collects issues under field paths while one resource is validated; past MAX_ISSUES it only counts them. */
class IssueList {
  readonly issues: RuleIssue[] = [];
  private dropped = 0;

  add(field: string, reason: string): void {
    if (this.issues.length < MAX_ISSUES) this.issues.push({ field, reason });
    else this.dropped += 1;
  }

  get count(): number {
    return this.issues.length + this.dropped;
  }

  /** The issues, the last one saying how many more were found when some were dropped. */
  reported(): readonly RuleIssue[] {
    return this.dropped === 0 ? this.issues : [...this.issues, { field: '', reason: `and ${this.dropped} more issues` }];
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reports fields outside `known`: a misspelt selector field would otherwise widen a match silently. */
function rejectUnknownFields(value: Json, known: readonly string[], path: string, issues: IssueList): void {
  for (const field of Object.keys(value)) {
    if (!known.includes(field)) issues.add(`${path}.${field}`, `unknown field; expected one of ${known.join(', ')}`);
  }
}

function expectObject(value: unknown, path: string, issues: IssueList): value is Json {
  if (isObject(value)) return true;
  issues.add(path, 'must be an object');
  return false;
}

function stringList(value: unknown, path: string, issues: IssueList, check?: (item: string) => string | undefined): string[] | undefined {
  if (!Array.isArray(value)) {
    issues.add(path, 'must be a list of strings');
    return undefined;
  }
  const items: string[] = [];
  value.forEach((item, index) => {
    if (typeof item !== 'string') {
      issues.add(`${path}[${index}]`, 'must be a string');
      return;
    }
    const problem = check?.(item);
    if (problem !== undefined) issues.add(`${path}[${index}]`, problem);
    items.push(item);
  });
  return items;
}

function labelKeyProblem(key: string, reservedAllowed: boolean): string | undefined {
  const problem = qualifiedNameProblem(key);
  if (problem !== undefined) return `"${key}" is not a valid label key: ${problem}`;
  if (!reservedAllowed && RESERVED_KEYS.has(key)) {
    return `"${key}" is reserved for the product's managed capacity placement and cannot be used in rules`;
  }
  return undefined;
}

/** Reports a map of more than LIMITS.configuredListItems entries. */
function boundedMap(value: Json, path: string, issues: IssueList, what: string): void {
  const size = Object.keys(value).length;
  if (size > LIMITS.configuredListItems) issues.add(path, `has ${size} ${what}, above the limit of ${LIMITS.configuredListItems}`);
}

function labelMap(value: unknown, path: string, issues: IssueList, reservedAllowed: boolean): Record<string, string> | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  boundedMap(value, path, issues, 'entries');
  const map: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    const keyProblem = labelKeyProblem(key, reservedAllowed);
    if (keyProblem !== undefined) issues.add(`${path}.${key}`, keyProblem);
    if (typeof item !== 'string') {
      issues.add(`${path}.${key}`, 'value must be a string');
      continue;
    }
    const valueProblem = labelValueProblem(item);
    if (valueProblem !== undefined) issues.add(`${path}.${key}`, `value is not a valid label value: ${valueProblem}`);
    map[key] = item;
  }
  return map;
}

/** Where a term sits: Kubernetes validates the values of required terms as label values, not those of preferred ones. */
type TermPlacement = 'required' | 'preferred';

function nodeSelectorRequirement(value: unknown, path: string, issues: IssueList, placement: TermPlacement): NodeSelectorRequirement | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  rejectUnknownFields(value, ['key', 'operator', 'values'], path, issues);
  const { key, operator } = value;
  if (typeof key !== 'string') issues.add(`${path}.key`, 'must be a string');
  else {
    const problem = labelKeyProblem(key, false);
    if (problem !== undefined) issues.add(`${path}.key`, problem);
  }
  if (typeof operator !== 'string' || !NODE_OPERATORS.has(operator)) {
    issues.add(`${path}.operator`, `must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt (got ${previewInput(operator)})`);
    return undefined;
  }
  const values = value.values === undefined ? [] : stringList(value.values, `${path}.values`, issues) ?? [];
  if (values.length > LIMITS.configuredValuesPerExpression) {
    issues.add(`${path}.values`, `has ${values.length} values, above the limit of ${LIMITS.configuredValuesPerExpression}`);
  }
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) issues.add(`${path}.values`, `operator ${operator} needs at least one value`);
      values.forEach((item, index) => {
        const problem = labelValueProblem(item);
        if (problem !== undefined) issues.add(`${path}.values[${index}]`, `is not a valid label value: ${problem}`);
      });
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) issues.add(`${path}.values`, `operator ${operator} takes no values`);
      break;
    default:
      if (values.length !== 1) issues.add(`${path}.values`, `operator ${operator} needs exactly one value`);
      else if (!isInt64(values[0]!) || values[0]!.length > 63) {
        issues.add(`${path}.values[0]`, `operator ${operator} needs a 64-bit integer value of at most 63 characters (got ${previewInput(values[0])})`);
      } else if (placement === 'required' && labelValueProblem(values[0]!) !== undefined) {
        // The API server validates every value of a required term as a label value: a signed operand would make the Pod fail creation.
        issues.add(`${path}.values[0]`, `a required term's ${operator} value must be a label value, so it cannot carry a sign (got ${previewInput(values[0])})`);
      }
  }
  if (typeof key !== 'string') return undefined;
  return values.length === 0 ? { key, operator } : { key, operator, values };
}

function nodeSelectorTerm(value: unknown, path: string, issues: IssueList, placement: TermPlacement): NodeSelectorTerm | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  rejectUnknownFields(value, ['matchExpressions', 'matchFields'], path, issues);
  if (value.matchFields !== undefined) {
    issues.add(`${path}.matchFields`, 'matchFields is not supported in rules; use matchExpressions on node labels');
  }
  const expressions = value.matchExpressions;
  if (expressions === undefined || (Array.isArray(expressions) && expressions.length === 0)) {
    issues.add(`${path}.matchExpressions`, 'a term needs at least one requirement (an empty term matches no node)');
    return undefined;
  }
  if (!Array.isArray(expressions)) {
    issues.add(`${path}.matchExpressions`, 'must be a list of requirements');
    return undefined;
  }
  if (expressions.length > LIMITS.configuredExpressionsPerTerm) {
    issues.add(
      `${path}.matchExpressions`,
      `has ${expressions.length} requirements, above the limit of ${LIMITS.configuredExpressionsPerTerm}`,
    );
  }
  const requirements = expressions.map((item, index) => nodeSelectorRequirement(item, `${path}.matchExpressions[${index}]`, issues, placement));
  return { matchExpressions: requirements.filter((item): item is NodeSelectorRequirement => item !== undefined) };
}

function preferredTerm(value: unknown, path: string, issues: IssueList): PreferredSchedulingTerm | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  rejectUnknownFields(value, ['weight', 'preference'], path, issues);
  const { weight } = value;
  if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > 100) {
    issues.add(`${path}.weight`, `must be an integer from 1 to 100 (got ${previewInput(weight)})`);
  }
  const preference = nodeSelectorTerm(value.preference, `${path}.preference`, issues, 'preferred');
  if (preference === undefined || typeof weight !== 'number') return undefined;
  return { weight, preference };
}

function nodeAffinity(value: unknown, path: string, issues: IssueList): NodeAffinity | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  const requiredField = 'requiredDuringSchedulingIgnoredDuringExecution';
  const preferredField = 'preferredDuringSchedulingIgnoredDuringExecution';
  rejectUnknownFields(value, [requiredField, preferredField], path, issues);
  const required = value[requiredField];
  const preferred = value[preferredField];
  if (required === undefined && preferred === undefined) {
    issues.add(path, `must set ${requiredField} or ${preferredField}`);
    return undefined;
  }
  const result: { -readonly [K in keyof NodeAffinity]: NodeAffinity[K] } = {};
  if (required !== undefined) {
    const requiredPath = `${path}.${requiredField}`;
    if (expectObject(required, requiredPath, issues)) {
      rejectUnknownFields(required, ['nodeSelectorTerms'], requiredPath, issues);
      const terms = required.nodeSelectorTerms;
      if (!Array.isArray(terms) || terms.length === 0) {
        issues.add(`${requiredPath}.nodeSelectorTerms`, 'must be a list of at least one term');
      } else {
        if (terms.length > LIMITS.configuredRequiredTerms) {
          issues.add(`${requiredPath}.nodeSelectorTerms`, `has ${terms.length} terms, above the limit of ${LIMITS.configuredRequiredTerms}`);
        }
        const parsed = terms.map((term, index) => nodeSelectorTerm(term, `${requiredPath}.nodeSelectorTerms[${index}]`, issues, 'required'));
        result.requiredDuringSchedulingIgnoredDuringExecution = {
          nodeSelectorTerms: parsed.filter((term): term is NodeSelectorTerm => term !== undefined),
        };
      }
    }
  }
  if (preferred !== undefined) {
    const preferredPath = `${path}.${preferredField}`;
    if (!Array.isArray(preferred) || preferred.length === 0) {
      issues.add(preferredPath, 'must be a list of at least one weighted term, or be omitted');
    } else {
      if (preferred.length > LIMITS.configuredPreferredTerms) {
        issues.add(preferredPath, `has ${preferred.length} terms, above the limit of ${LIMITS.configuredPreferredTerms}`);
      }
      const parsed = preferred.map((term, index) => preferredTerm(term, `${preferredPath}[${index}]`, issues));
      result.preferredDuringSchedulingIgnoredDuringExecution = parsed.filter(
        (term): term is PreferredSchedulingTerm => term !== undefined,
      );
    }
  }
  return result;
}

function toleration(value: unknown, path: string, issues: IssueList): Toleration | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  rejectUnknownFields(value, ['key', 'operator', 'value', 'effect', 'tolerationSeconds'], path, issues);
  const { key, operator, value: tolerated, effect, tolerationSeconds } = value;
  for (const [field, item] of Object.entries({ key, operator, value: tolerated, effect })) {
    if (item !== undefined && typeof item !== 'string') issues.add(`${path}.${field}`, 'must be a string');
  }
  if (typeof key === 'string' && key !== '') {
    const problem = qualifiedNameProblem(key);
    if (problem !== undefined) issues.add(`${path}.key`, `"${key}" is not a valid label key: ${problem}`);
  }
  // As in Kubernetes, an absent operator means Equal.
  const effectiveOperator = operator === undefined || operator === '' ? 'Equal' : operator;
  if (typeof effectiveOperator === 'string' && !TOLERATION_OPERATORS.has(effectiveOperator)) {
    issues.add(`${path}.operator`, `must be Equal, Exists or absent (got ${previewInput(operator)})`);
  }
  if (effectiveOperator === 'Exists' && typeof tolerated === 'string' && tolerated !== '') {
    issues.add(`${path}.value`, 'operator Exists takes no value');
  }
  if (effectiveOperator === 'Equal' && typeof tolerated === 'string') {
    const problem = labelValueProblem(tolerated);
    if (problem !== undefined) issues.add(`${path}.value`, `is not a valid label value: ${problem}`);
  }
  if ((key === undefined || key === '') && effectiveOperator !== 'Exists') {
    issues.add(`${path}.operator`, 'an empty key requires operator Exists');
  }
  if (typeof effect === 'string' && !TAINT_EFFECTS.has(effect)) {
    issues.add(`${path}.effect`, `must be empty, NoSchedule, PreferNoSchedule or NoExecute (got ${previewInput(effect)})`);
  }
  if (tolerationSeconds !== undefined) {
    if (typeof tolerationSeconds !== 'number' || !Number.isSafeInteger(tolerationSeconds)) {
      issues.add(`${path}.tolerationSeconds`, 'must be an integer');
    } else if (effect !== 'NoExecute') {
      issues.add(`${path}.tolerationSeconds`, 'is only valid with effect NoExecute');
    }
  }
  return value as Toleration;
}

function tolerationList(value: unknown, path: string, issues: IssueList): Toleration[] | undefined {
  if (!Array.isArray(value)) {
    issues.add(path, 'must be a list of tolerations');
    return undefined;
  }
  if (value.length > LIMITS.configuredListItems) issues.add(path, `has ${value.length} tolerations, above the limit of ${LIMITS.configuredListItems}`);
  return value
    .map((item, index) => toleration(item, `${path}[${index}]`, issues))
    .filter((item): item is Toleration => item !== undefined);
}

function labelSelector(value: unknown, path: string, issues: IssueList): LabelSelector | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  rejectUnknownFields(value, ['matchLabels', 'matchExpressions'], path, issues);
  const result: { matchLabels?: Record<string, string>; matchExpressions?: LabelSelectorRequirement[] } = {};
  if (value.matchLabels !== undefined) {
    const matchLabels = labelMap(value.matchLabels, `${path}.matchLabels`, issues, true);
    if (matchLabels !== undefined && Object.keys(matchLabels).length === 0) {
      issues.add(`${path}.matchLabels`, 'must hold at least one label; omit it to select on matchExpressions only');
    }
    if (matchLabels !== undefined) result.matchLabels = matchLabels;
  }
  if (value.matchExpressions !== undefined) {
    if (!Array.isArray(value.matchExpressions)) issues.add(`${path}.matchExpressions`, 'must be a list of requirements');
    else {
      if (value.matchExpressions.length === 0) issues.add(`${path}.matchExpressions`, 'must hold at least one requirement; omit it to select on matchLabels only');
      if (value.matchExpressions.length > LIMITS.configuredListItems) {
        issues.add(`${path}.matchExpressions`, `has ${value.matchExpressions.length} requirements, above the limit of ${LIMITS.configuredListItems}`);
      }
      result.matchExpressions = [];
      value.matchExpressions.forEach((item: unknown, index: number) => {
        const itemPath = `${path}.matchExpressions[${index}]`;
        if (!expectObject(item, itemPath, issues)) return;
        rejectUnknownFields(item, ['key', 'operator', 'values'], itemPath, issues);
        const { key, operator } = item;
        if (typeof key !== 'string') issues.add(`${itemPath}.key`, 'must be a string');
        else {
          const problem = labelKeyProblem(key, true);
          if (problem !== undefined) issues.add(`${itemPath}.key`, problem);
        }
        if (typeof operator !== 'string' || !LABEL_OPERATORS.has(operator)) {
          issues.add(`${itemPath}.operator`, `must be one of In, NotIn, Exists, DoesNotExist (got ${previewInput(operator)})`);
          return;
        }
        const values = item.values === undefined ? [] : stringList(item.values, `${itemPath}.values`, issues, labelValueProblem) ?? [];
        if (values.length > LIMITS.configuredValuesPerExpression) {
          issues.add(`${itemPath}.values`, `has ${values.length} values, above the limit of ${LIMITS.configuredValuesPerExpression}`);
        }
        if ((operator === 'In' || operator === 'NotIn') && values.length === 0) {
          issues.add(`${itemPath}.values`, `operator ${operator} needs at least one value`);
        }
        if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) {
          issues.add(`${itemPath}.values`, `operator ${operator} takes no values`);
        }
        if (typeof key === 'string') result.matchExpressions!.push(values.length === 0 ? { key, operator } : { key, operator, values });
      });
    }
  }
  // A label selector left with nothing (its only content misspelt or pruned) would select every Pod (issue #9).
  if (value.matchLabels === undefined && value.matchExpressions === undefined) {
    issues.add(path, 'must set matchLabels or matchExpressions: an empty label selector would select every Pod');
  }
  return result;
}

/** The selector dimensions; a selector must set at least one, or say all: true (issue #9). */
const SELECTOR_DIMENSIONS = ['namespaces', 'kinds', 'names', 'labelSelector', 'nodeAffinityMatch', 'nodeSelectorMatch', 'tolerationsMatch'] as const;

/** A dimension's list of names: at least one, at most LIMITS.selectorNames, each passing `check`. */
function nameList(value: unknown, path: string, issues: IssueList, what: string, check: (item: string) => string | undefined): string[] | undefined {
  const items = stringList(value, path, issues, check);
  if (items === undefined) return undefined;
  if (items.length === 0) issues.add(path, `must list at least one ${what}; omit it to select any ${what}`);
  if (items.length > LIMITS.selectorNames) issues.add(path, `has ${items.length} entries, above the limit of ${LIMITS.selectorNames}`);
  return items;
}

function workloadSelector(value: unknown, path: string, issues: IssueList): WorkloadSelector {
  if (value === undefined) {
    issues.add(path, 'is required: set at least one dimension, or all: true to select every Pod');
    return {};
  }
  if (!expectObject(value, path, issues)) return {};
  rejectUnknownFields(value, ['all', ...SELECTOR_DIMENSIONS], path, issues);
  if (value.all !== undefined && typeof value.all !== 'boolean') issues.add(`${path}.all`, 'must be a boolean');
  const dimensions = SELECTOR_DIMENSIONS.filter((dimension) => value[dimension] !== undefined);
  // all: false counts as absent, as mutationRemove.nodeAffinity.all does.
  if (value.all === true && dimensions.length > 0) {
    issues.add(`${path}.all`, `all: true selects every Pod and takes no other dimension (got ${dimensions.join(', ')})`);
  }
  if (value.all !== true && dimensions.length === 0) {
    issues.add(path, 'sets no dimension; to select every Pod say all: true (an empty selector, for example one whose only field was misspelt and pruned, selects nothing here)');
  }
  const selector: { -readonly [K in keyof WorkloadSelector]: WorkloadSelector[K] } = {};
  if (value.all === true) selector.all = true;
  if (value.namespaces !== undefined) {
    selector.namespaces = nameList(value.namespaces, `${path}.namespaces`, issues, 'namespace', (namespace) =>
      isDns1123Label(namespace) ? undefined : `"${namespace}" is not a valid namespace name (DNS-1123 label)`,
    );
  }
  if (value.kinds !== undefined) {
    selector.kinds = nameList(value.kinds, `${path}.kinds`, issues, 'kind', (kind) =>
      kind.length <= 63 && /^[A-Za-z][A-Za-z0-9]*$/.test(kind) ? undefined : `"${kind}" is not a valid kind name (a letter, then letters and digits, at most 63)`,
    );
  }
  if (value.names !== undefined) {
    selector.names = nameList(value.names, `${path}.names`, issues, 'name', (name) =>
      isDns1123Subdomain(name) ? undefined : `"${name}" is not a valid workload name (DNS-1123 subdomain)`,
    );
  }
  if (value.labelSelector !== undefined) selector.labelSelector = labelSelector(value.labelSelector, `${path}.labelSelector`, issues);
  if (value.nodeAffinityMatch !== undefined) {
    selector.nodeAffinityMatch = nodeAffinity(value.nodeAffinityMatch, `${path}.nodeAffinityMatch`, issues);
  }
  if (value.nodeSelectorMatch !== undefined) {
    const pairs = labelMap(value.nodeSelectorMatch, `${path}.nodeSelectorMatch`, issues, false);
    if (pairs !== undefined && Object.keys(pairs).length === 0) issues.add(`${path}.nodeSelectorMatch`, 'must hold at least one pair; omit it to select any nodeSelector');
    selector.nodeSelectorMatch = pairs;
  }
  if (value.tolerationsMatch !== undefined) {
    const tolerations = tolerationList(value.tolerationsMatch, `${path}.tolerationsMatch`, issues);
    if (tolerations?.length === 0) issues.add(`${path}.tolerationsMatch`, 'must list at least one toleration; omit it to select any tolerations');
    tolerations?.forEach((item, index) => {
      // An entry whose fields were all pruned would match any toleration.
      if (Object.keys(item).length === 0) issues.add(`${path}.tolerationsMatch[${index}]`, 'must set at least one field: an empty entry matches any toleration');
    });
    selector.tolerationsMatch = tolerations;
  }
  return dropUndefined(selector);
}

function keyList(value: unknown, path: string, issues: IssueList, reservedAllowed: boolean): string[] | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  rejectUnknownFields(value, ['keys'], path, issues);
  if (!Array.isArray(value.keys) || value.keys.length === 0) {
    issues.add(`${path}.keys`, 'must be a list of at least one label key');
    return undefined;
  }
  if (value.keys.length > LIMITS.configuredListItems) issues.add(`${path}.keys`, `has ${value.keys.length} keys, above the limit of ${LIMITS.configuredListItems}`);
  return stringList(value.keys, `${path}.keys`, issues, (key) => labelKeyProblem(key, reservedAllowed));
}

function mutationRemove(value: unknown, path: string, issues: IssueList): MutationRemove {
  if (value === undefined) return {};
  if (!expectObject(value, path, issues)) return {};
  rejectUnknownFields(value, ['nodeAffinity', 'nodeSelector', 'tolerations'], path, issues);
  const remove: { -readonly [K in keyof MutationRemove]: MutationRemove[K] } = {};
  if (value.nodeAffinity !== undefined) {
    const affinityPath = `${path}.nodeAffinity`;
    if (expectObject(value.nodeAffinity, affinityPath, issues)) {
      rejectUnknownFields(value.nodeAffinity, ['keys', 'all'], affinityPath, issues);
      const { keys, all } = value.nodeAffinity;
      if (all !== undefined && typeof all !== 'boolean') issues.add(`${affinityPath}.all`, 'must be a boolean');
      // all: false counts as absent.
      const hasAll = all === true;
      const hasKeys = keys !== undefined;
      if (hasAll === hasKeys) {
        issues.add(affinityPath, 'exactly one of keys (a non-empty list of label keys) or all: true must be set');
      } else if (hasAll) {
        remove.nodeAffinity = { all: true } satisfies NodeAffinityRemoval;
      } else if (!Array.isArray(keys) || keys.length === 0) {
        issues.add(`${affinityPath}.keys`, 'must be a list of at least one label key');
      } else {
        if (keys.length > LIMITS.configuredListItems) issues.add(`${affinityPath}.keys`, `has ${keys.length} keys, above the limit of ${LIMITS.configuredListItems}`);
        remove.nodeAffinity = { keys: stringList(keys, `${affinityPath}.keys`, issues, (key) => labelKeyProblem(key, false)) ?? [] };
      }
    }
  }
  if (value.nodeSelector !== undefined) {
    const keys = keyList(value.nodeSelector, `${path}.nodeSelector`, issues, false);
    if (keys !== undefined) remove.nodeSelector = { keys };
  }
  if (value.tolerations !== undefined) {
    const keys = keyList(value.tolerations, `${path}.tolerations`, issues, true);
    if (keys !== undefined) remove.tolerations = { keys };
  }
  return remove;
}

function annotationMap(value: unknown, path: string, issues: IssueList): Record<string, string> | undefined {
  if (!expectObject(value, path, issues)) return undefined;
  boundedMap(value, path, issues, 'annotations');
  const map: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    const problem = qualifiedNameProblem(key);
    if (problem !== undefined) issues.add(`${path}.${key}`, `"${key}" is not a valid annotation key: ${problem}`);
    if (key.startsWith(PRODUCT_ANNOTATION_PREFIX)) {
      issues.add(`${path}.${key}`, `annotations under ${PRODUCT_ANNOTATION_PREFIX} are managed by the product`);
    }
    if (typeof item !== 'string') issues.add(`${path}.${key}`, 'value must be a string');
    else {
      if (item.length > LIMITS.annotationValueChars) {
        issues.add(`${path}.${key}`, `value has ${item.length} characters, above the limit of ${LIMITS.annotationValueChars}`);
      }
      map[key] = item;
    }
  }
  return map;
}

function mutationAdd(value: unknown, path: string, issues: IssueList): MutationAdd {
  if (value === undefined) return {};
  if (!expectObject(value, path, issues)) return {};
  rejectUnknownFields(value, ['annotations', 'nodeSelector', 'tolerations', 'nodeAffinity'], path, issues);
  const add: { -readonly [K in keyof MutationAdd]: MutationAdd[K] } = {};
  if (value.annotations !== undefined) add.annotations = annotationMap(value.annotations, `${path}.annotations`, issues);
  if (value.nodeSelector !== undefined) add.nodeSelector = labelMap(value.nodeSelector, `${path}.nodeSelector`, issues, false);
  if (value.tolerations !== undefined) add.tolerations = tolerationList(value.tolerations, `${path}.tolerations`, issues);
  if (value.nodeAffinity !== undefined) add.nodeAffinity = nodeAffinity(value.nodeAffinity, `${path}.nodeAffinity`, issues);
  return dropUndefined(add);
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}

function removesSomething(remove: MutationRemove): boolean {
  return remove.nodeAffinity !== undefined || (remove.nodeSelector?.keys.length ?? 0) > 0 || (remove.tolerations?.keys.length ?? 0) > 0;
}

function addsSomething(add: MutationAdd): boolean {
  return (
    Object.keys(add.annotations ?? {}).length > 0 ||
    Object.keys(add.nodeSelector ?? {}).length > 0 ||
    (add.tolerations?.length ?? 0) > 0 ||
    add.nodeAffinity !== undefined
  );
}

/** Name used to report a resource, even an invalid one. */
function reportedName(resource: unknown): string {
  if (isObject(resource) && isObject(resource.metadata) && typeof resource.metadata.name === 'string' && resource.metadata.name !== '') {
    return resource.metadata.name;
  }
  return '<unnamed>';
}

/**
 * Validates one PodMutation resource against the API contract and normalizes it
 * (defaults applied, unknown fields rejected). Pure; every issue names its field path.
 */
export function validatePodMutation(resource: unknown): RuleVerdict {
  const issues = new IssueList();
  const name = reportedName(resource);
  const generation = isObject(resource) && isObject(resource.metadata) && typeof resource.metadata.generation === 'number'
    ? resource.metadata.generation
    : undefined;
  const invalid = (): RuleVerdict => ({
    valid: false,
    invalid: generation === undefined ? { name, issues: issues.reported() } : { name, generation, issues: issues.reported() },
  });

  if (!expectObject(resource, '', issues)) return invalid();
  if (resource.apiVersion !== POD_MUTATION_API_VERSION) {
    issues.add('apiVersion', `must be ${POD_MUTATION_API_VERSION} (got ${previewInput(resource.apiVersion)})`);
  }
  if (resource.kind !== POD_MUTATION_KIND) issues.add('kind', `must be ${POD_MUTATION_KIND} (got ${previewInput(resource.kind)})`);
  if (!isObject(resource.metadata) || typeof resource.metadata.name !== 'string' || resource.metadata.name === '') {
    issues.add('metadata.name', 'is required');
  } else if (!isDns1123Subdomain(resource.metadata.name)) {
    issues.add('metadata.name', 'must be a lowercase DNS-1123 subdomain of at most 253 characters');
  }
  const { spec } = resource;
  if (!expectObject(spec, 'spec', issues)) return invalid();
  rejectUnknownFields(spec, ['enable', 'priority', 'workloadSelector', 'mutationRemove', 'mutationAdd'], 'spec', issues);
  if (spec.enable !== undefined && typeof spec.enable !== 'boolean') issues.add('spec.enable', 'must be a boolean');
  const priority = spec.priority ?? 0;
  if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < INT32_MIN || priority > INT32_MAX) {
    issues.add('spec.priority', `must be a 32-bit integer (got ${previewInput(spec.priority)})`);
  }
  const selector = workloadSelector(spec.workloadSelector, 'spec.workloadSelector', issues);
  const remove = mutationRemove(spec.mutationRemove, 'spec.mutationRemove', issues);
  const add = mutationAdd(spec.mutationAdd, 'spec.mutationAdd', issues);
  if (issues.count === 0 && !removesSomething(remove) && !addsSomething(add)) {
    issues.add('spec', 'mutationRemove and mutationAdd are both absent or empty; a rule must remove or add something');
  }
  if (issues.count > 0) return invalid();

  const rule: NormalizedRule = {
    name,
    ...(generation === undefined ? {} : { generation }),
    enable: spec.enable === true,
    priority: priority as number,
    workloadSelector: selector,
    mutationRemove: remove,
    mutationAdd: add,
  };
  // The budget is checked on the normalized rule, exactly what a snapshot stores and admission compiles.
  for (const { field, reason } of budgetIssues(ruleCost(rule))) issues.add(field, reason);
  if (issues.count > 0) return invalid();
  return { valid: true, rule };
}

/** One line per issue, each naming the rule and the field path. */
export function describeIssues(invalid: { readonly name: string; readonly issues: readonly { field: string; reason: string }[] }): string[] {
  return invalid.issues.map((issue) => `PodMutation "${invalid.name}": ${issue.field === '' ? '(resource)' : issue.field}: ${issue.reason}`);
}

/** The PodMutation resource a normalized rule stands for (the inverse of normalization). Pure. */
export function ruleToResource(rule: NormalizedRule): Record<string, unknown> {
  return {
    apiVersion: POD_MUTATION_API_VERSION,
    kind: POD_MUTATION_KIND,
    metadata: rule.generation === undefined ? { name: rule.name } : { name: rule.name, generation: rule.generation },
    spec: {
      enable: rule.enable,
      priority: rule.priority,
      workloadSelector: rule.workloadSelector,
      mutationRemove: rule.mutationRemove,
      mutationAdd: rule.mutationAdd,
    },
  };
}
