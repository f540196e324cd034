/**
 * CEL evaluation as Kubernetes does it, for tests: the standard library plus the strings
 * extension and the lists library's sum (Kubernetes enables both in every CEL environment),
 * expressions planned once.
 */
import { CelScalar, celEnv, celMethod, isCelError, listType, parse, plan, type CelInput } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

/** The result of one evaluation: a value, or the evaluation error Kubernetes would report. */
export type CelOutcome =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

// Kubernetes' lists library: <list<int>>.sum(), 0 for an empty list (the CRD's per-rule budget counts with it).
const sum = celMethod('sum', listType(CelScalar.INT), [], CelScalar.INT, function sumOf() {
  let total = 0n;
  for (const item of this) total += item as bigint;
  return total;
});
const environment = celEnv({ funcs: [...strings, sum] });
const programs = new Map<string, ReturnType<typeof plan>>();

/** Evaluates `expression` with the given variables (already CEL inputs, see `toCelInput`). */
export function evaluateCel(expression: string, bindings: Readonly<Record<string, CelInput>>): CelOutcome {
  let program = programs.get(expression);
  if (program === undefined) {
    program = plan(environment, parse(expression));
    programs.set(expression, program);
  }
  const result = program({ ...bindings });
  return isCelError(result) ? { ok: false, error: result.message } : { ok: true, value: result };
}

/**
 * Converts decoded JSON to CEL input the way Kubernetes types unstructured data without a schema:
 * objects become maps, integral numbers int, other numbers double.
 */
export function toCelInput(value: unknown): CelInput {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCelInput);
  if (typeof value === 'object') {
    return new Map(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, toCelInput(item)]));
  }
  throw new TypeError(`cannot convert ${typeof value} to CEL`);
}
