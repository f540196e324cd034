/** Pure: the PodDisruptionBudgets that select a workload's Pods and allow no disruption now. */
import { MalformedInputError } from '../errors/index.ts';
import {
  isJsonObject,
  previewInput,
  objectList,
  optionalInteger,
  optionalObject,
  optionalString,
  stringList,
  stringMap,
  typeMismatch,
} from '../values/index.ts';

/** A label selector read from a PDB: null (matches nothing) or its labels and expressions. */
type Selector = {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly expressions: readonly { key: string; operator: string; values: readonly string[] }[];
} | null;

function readSelector(value: unknown, path: string): Selector {
  const selector = optionalObject(value, path);
  // policy/v1: a null selector selects no Pods, an empty one every Pod of the namespace (PodDisruptionBudgetSpec).
  if (selector === undefined) return null;
  const expressions = objectList(selector.matchExpressions, `${path}.matchExpressions`).map((expression, index) => {
    const where = `${path}.matchExpressions[${index}]`;
    return {
      key: optionalString(expression.key, `${where}.key`),
      operator: optionalString(expression.operator, `${where}.operator`),
      values: stringList(expression.values, `${where}.values`),
    };
  });
  return { matchLabels: stringMap(selector.matchLabels, `${path}.matchLabels`), expressions };
}

/**
 * A label selector as `kubectl -l` takes it: comma-separated `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`,
 * `!k`. Throws MalformedInputError naming the requirement it cannot read.
 */
function parseLabelSelector(text: string): NonNullable<Selector> {
  const requirements = text.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  const matchLabels: Record<string, string> = {};
  const expressions: { key: string; operator: string; values: readonly string[] }[] = [];
  for (const raw of requirements) {
    const requirement = raw.trim();
    const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(requirement);
    const equality = /^([^!=\s]+)\s*(==|=|!=)\s*([^!=\s]*)$/.exec(requirement);
    if (set !== null)
      expressions.push({
        key: set[1]!,
        operator: set[2] === 'in' ? 'In' : 'NotIn',
        values: set[3]!.split(',').map((value) => value.trim()),
      });
    else if (equality !== null && equality[2] === '!=')
      expressions.push({ key: equality[1]!, operator: 'NotIn', values: [equality[3]!] });
    else if (equality !== null) matchLabels[equality[1]!] = equality[3]!;
    else if (/^![^!=\s]+$/.test(requirement))
      expressions.push({ key: requirement.slice(1), operator: 'DoesNotExist', values: [] });
    else if (/^[^!=\s]+$/.test(requirement)) expressions.push({ key: requirement, operator: 'Exists', values: [] });
    else
      throw new MalformedInputError(
        `-l ${previewInput(text)}: cannot read the requirement ${previewInput(requirement)}`,
      );
  }
  return { matchLabels, expressions };
}

/** Whether a label selector selects Pods with these labels (apimachinery labels.Selector semantics). */
function selects(selector: Selector, labels: Readonly<Record<string, string>>): boolean {
  if (selector === null) return false;
  for (const [key, value] of Object.entries(selector.matchLabels)) if (labels[key] !== value) return false;
  return selector.expressions.every(({ key, operator, values }) => {
    const has = Object.hasOwn(labels, key);
    switch (operator) {
      case 'In':
        return has && values.includes(labels[key]!);
      case 'NotIn':
        return !has || !values.includes(labels[key]!);
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      default:
        // An unknown operator is refused by the API server's validation; it selects nothing here.
        return false;
    }
  });
}

/**
 * The names of the PDBs among `budgets` (a policy/v1 list's items) whose selector selects Pods with `labels` and whose
 * status allows 0 disruptions; a PDB whose status the disruption controller has not written yet counts as 0.
 */
function blockingBudgets(
  budgets: readonly unknown[],
  labels: Readonly<Record<string, string>>,
  path = 'poddisruptionbudgets',
): string[] {
  return budgets.flatMap((budget, index) => {
    const where = `${path}[${index}]`;
    if (!isJsonObject(budget)) throw typeMismatch(where, 'an object', budget);
    const spec = optionalObject(budget.spec, `${where}.spec`);
    const status = optionalObject(budget.status, `${where}.status`);
    const metadata = optionalObject(budget.metadata, `${where}.metadata`);
    if (!selects(readSelector(spec?.selector, `${where}.spec.selector`), labels)) return [];
    const allowed = optionalInteger(status?.disruptionsAllowed, `${where}.status.disruptionsAllowed`) ?? 0;
    return allowed > 0 ? [] : [optionalString(metadata?.name, `${where}.metadata.name`)];
  });
}

export { blockingBudgets, parseLabelSelector, selects };
