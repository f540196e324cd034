/** Pure: the PodDisruptionBudgets that select a workload's Pods, what each allows now, and what a wave has taken of them. */
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
} from '../json/index.ts';

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

/** A PodDisruptionBudget that covers some Pods, and the disruptions it allows now. */
interface Allowance {
  readonly name: string;
  readonly allowed: number;
}

/**
 * The PDBs among `budgets` (a policy/v1 list's items) whose selector selects Pods with `labels`, each with the
 * disruptions it allows now: status.disruptionsAllowed, counted as 0 while the disruption controller has not written
 * a status for the budget's current spec (status.observedGeneration below metadata.generation), as the eviction API
 * counts it (checkAndDecrement, kubernetes/kubernetes pkg/registry/core/pod/storage/eviction.go).
 */
function coveringBudgets(
  budgets: readonly unknown[],
  labels: Readonly<Record<string, string>>,
  path = 'poddisruptionbudgets',
): Allowance[] {
  return budgets.flatMap((budget, index) => {
    const where = `${path}[${index}]`;
    if (!isJsonObject(budget)) throw typeMismatch(where, 'an object', budget);
    const spec = optionalObject(budget.spec, `${where}.spec`);
    const status = optionalObject(budget.status, `${where}.status`);
    const metadata = optionalObject(budget.metadata, `${where}.metadata`);
    if (!selects(readSelector(spec?.selector, `${where}.spec.selector`), labels)) return [];
    const generation = optionalInteger(metadata?.generation, `${where}.metadata.generation`) ?? 0;
    const observed = optionalInteger(status?.observedGeneration, `${where}.status.observedGeneration`) ?? 0;
    const written = optionalInteger(status?.disruptionsAllowed, `${where}.status.disruptionsAllowed`) ?? 0;
    const name = optionalString(metadata?.name, `${where}.metadata.name`);
    return [{ name, allowed: observed < generation ? 0 : Math.max(0, written) }];
  });
}

/** A budget that cannot take one more disruption now: what it allows, and how many of those the wave has taken. */
interface Shortfall extends Allowance {
  readonly taken: number;
}

/** The disruptions a wave has taken from its budgets, by the workloads of the wave under way. */
interface WaveBudgets {
  /** The budgets among `allowances` that cannot take one more disruption, not counting those `own` (its taker's) took. */
  short(allowances: readonly Allowance[], own?: ReadonlySet<string>): Shortfall[];
  /** Takes one disruption of each budget for a workload that starts; returns their names, to give back with release. */
  take(allowances: readonly Allowance[]): ReadonlySet<string>;
  /** Gives back what take took, once the workload is done (or failed). */
  release(names: ReadonlySet<string>): void;
}

/**
 * An empty ledger of a wave's budgets. Each budget counts the wave's workloads under way that it covers; another may
 * start only while that count stays within what the budget allows. While some are under way, a budget's allowance is
 * the least read since the first of them started: a reading taken mid-restart counts the surge Pods of a Deployment
 * as healthy, and would let a second workload start beside the first.
 */
function createWaveBudgets(): WaveBudgets {
  const ledger = new Map<string, { taken: number; ceiling: number }>();
  /** What a budget allows to one more disruption beside `others` of the wave's: the least reading while any is under way. */
  const ceilingOf = (allowance: Allowance, others: number) =>
    others > 0 ? Math.min(ledger.get(allowance.name)!.ceiling, allowance.allowed) : allowance.allowed;
  return {
    short(allowances, own = new Set()) {
      return allowances.flatMap((allowance) => {
        const others = (ledger.get(allowance.name)?.taken ?? 0) - (own.has(allowance.name) ? 1 : 0);
        return others + 1 <= ceilingOf(allowance, others) ? [] : [{ ...allowance, taken: others }];
      });
    },
    take(allowances) {
      for (const allowance of allowances) {
        const taken = ledger.get(allowance.name)?.taken ?? 0;
        ledger.set(allowance.name, { taken: taken + 1, ceiling: ceilingOf(allowance, taken) });
      }
      return new Set(allowances.map(({ name }) => name));
    },
    release(names) {
      for (const name of names) {
        const entry = ledger.get(name);
        if (entry !== undefined) entry.taken = Math.max(0, entry.taken - 1);
      }
    },
  };
}

export { coveringBudgets, createWaveBudgets, parseLabelSelector, selects };
export type { Allowance, Shortfall, WaveBudgets };
