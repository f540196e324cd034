/** Pure: the PodDisruptionBudgets that select a workload's Pods and allow no disruption now. */
import { isJsonObject, objectList, optionalInteger, optionalObject, optionalString, stringList, stringMap, typeMismatch } from '../values/index.ts';

/** A label selector read from a PDB: null (matches nothing) or its labels and expressions. */
type Selector = { readonly matchLabels: Readonly<Record<string, string>>; readonly expressions: readonly { key: string; operator: string; values: readonly string[] }[] } | null;

function readSelector(value: unknown, path: string): Selector {
  const selector = optionalObject(value, path);
  // policy/v1: a null selector selects no Pods, an empty one every Pod of the namespace (PodDisruptionBudgetSpec).
  if (selector === undefined) return null;
  const expressions = objectList(selector.matchExpressions, `${path}.matchExpressions`).map((expression, index) => {
    const where = `${path}.matchExpressions[${index}]`;
    return { key: optionalString(expression.key, `${where}.key`), operator: optionalString(expression.operator, `${where}.operator`), values: stringList(expression.values, `${where}.values`) };
  });
  return { matchLabels: stringMap(selector.matchLabels, `${path}.matchLabels`), expressions };
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
function blockingBudgets(budgets: readonly unknown[], labels: Readonly<Record<string, string>>, path = 'poddisruptionbudgets'): string[] {
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

export { blockingBudgets };
