/**
 * The static cost estimate the API server computes for x-kubernetes-validations rules when a CRD
 * is created, ported from cel-go (checker/cost.go) and k8s.io/apiserver (cel/common/schemas.go,
 * apiextensions validation) for the CEL subset the CRD uses. A function or field it does not
 * know throws, so it also catches rules that would not compile against the schema.
 *
 * A rule's cost is its estimated cost times the maximum number of nodes it runs on (the product of
 * maxItems/maxProperties above it, or a request-size estimate when one is missing).
 * test/real-cluster/crd.test.ts holds these estimates to the ones a real API server reports for variants of the CRD.
 */
import { parse } from '@bufbuild/cel';
import type { SchemaNode } from './structural-schema.ts';

/** Per rule (cost x cardinality) and per CRD limits, from apiextensions validation. */
export const COST_LIMITS = Object.freeze({ perRule: 10_000_000, perCrd: 100_000_000 });

/** The estimate for one rule. */
export interface RuleCost {
  readonly path: string;
  readonly rule: string;
  readonly cost: number;
  readonly cardinality: number;
  readonly total: number;
}

// apiserver DefaultMaxRequestSizeBytes.
const MAX_REQUEST_BYTES = 3 * 1024 * 1024;
const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const LIST_CREATE = 10;

type Decl =
  | { readonly kind: 'string'; readonly maxSize: number }
  | { readonly kind: 'int' | 'bool' | 'double' | 'null' | 'dyn' }
  | { readonly kind: 'list'; readonly elem: Decl; readonly maxSize: number }
  | { readonly kind: 'map'; readonly key: Decl; readonly value: Decl; readonly maxSize: number }
  | { readonly kind: 'object'; readonly fields: Readonly<Record<string, Decl>> };

interface Estimate {
  readonly cost: number;
  readonly type: Decl;
}

// The parsed AST, as @bufbuild/cel returns it (cel.expr.Expr).
interface Expr {
  readonly exprKind:
    | {
        readonly case: 'constExpr';
        readonly value: { readonly constantKind: { readonly case: string | undefined; readonly value?: unknown } };
      }
    | { readonly case: 'identExpr'; readonly value: { readonly name: string } }
    | {
        readonly case: 'selectExpr';
        readonly value: { readonly operand?: Expr; readonly field: string; readonly testOnly: boolean };
      }
    | {
        readonly case: 'callExpr';
        readonly value: { readonly target?: Expr; readonly function: string; readonly args: readonly Expr[] };
      }
    | { readonly case: 'listExpr'; readonly value: { readonly elements: readonly Expr[] } }
    | {
        readonly case: 'comprehensionExpr';
        readonly value: {
          readonly iterVar: string;
          readonly iterRange?: Expr;
          readonly accuVar: string;
          readonly accuInit?: Expr;
          readonly loopCondition?: Expr;
          readonly loopStep?: Expr;
          readonly result?: Expr;
        };
      }
    | { readonly case: string | undefined; readonly value?: unknown };
}

const ceil = Math.ceil;

/** The minimum serialized size of data matching the schema (SchemaDeclType.MinSerializedSize). */
function minSerializedSize(schema: SchemaNode): number {
  switch (schema.type) {
    case 'string':
      return 2;
    case 'boolean':
      return 4;
    case 'integer':
    case 'number':
      return 1;
    case 'object': {
      if (schema.additionalProperties !== undefined) return 2;
      let size = 2;
      for (const name of schema.required ?? []) {
        const child = schema.properties?.[name];
        if (child !== undefined && child.default === undefined) size += name.length + minSerializedSize(child) + 4;
      }
      return size;
    }
    default:
      return 2;
  }
}

/** The CEL declaration of a schema node with its size bounds (SchemaDeclType). */
function declOf(schema: SchemaNode): Decl {
  switch (schema.type) {
    case 'string': {
      if (schema.maxLength !== undefined) return { kind: 'string', maxSize: schema.maxLength * 4 };
      if (schema.enum !== undefined)
        return { kind: 'string', maxSize: Math.max(...schema.enum.map((item) => String(item).length)) };
      return { kind: 'string', maxSize: MAX_REQUEST_BYTES - 2 };
    }
    case 'integer':
      return { kind: 'int' };
    case 'number':
      return { kind: 'double' };
    case 'boolean':
      return { kind: 'bool' };
    case 'array': {
      const items = schema.items ?? {};
      const maxSize = schema.maxItems ?? Math.floor((MAX_REQUEST_BYTES - 2) / (minSerializedSize(items) + 1));
      return { kind: 'list', elem: declOf(items), maxSize };
    }
    case 'object': {
      if (schema.additionalProperties !== undefined) {
        const values = schema.additionalProperties;
        const maxSize = schema.maxProperties ?? Math.floor((MAX_REQUEST_BYTES - 2) / (minSerializedSize(values) + 6));
        // The API server declares map keys as a plain string of size 0 (apiextensions-apiserver schema/cel
        // sizeEstimator: the key's DeclType has no MaxElements), so a rule over the keys costs as if they were empty.
        return { kind: 'map', key: { kind: 'string', maxSize: 0 }, value: declOf(values), maxSize };
      }
      return {
        kind: 'object',
        fields: Object.fromEntries(
          Object.entries(schema.properties ?? {}).map(([name, child]) => [name, declOf(child)]),
        ),
      };
    }
    default:
      return { kind: 'dyn' };
  }
}

/** sizeOrUnknown: the maximum size of a string, list or map; 1 for scalars. */
function sizeOf(type: Decl): number {
  return 'maxSize' in type ? type.maxSize : 1;
}

function union(left: Decl, right: Decl): Decl {
  if (left.kind === 'string' && right.kind === 'string')
    return { kind: 'string', maxSize: Math.max(left.maxSize, right.maxSize) };
  return left;
}

function estimate(expr: Expr | undefined, scope: ReadonlyMap<string, Decl>): Estimate {
  if (expr === undefined) throw new Error('incomplete expression');
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'constExpr': {
      const constant = (kind.value as { constantKind: { case: string | undefined; value?: unknown } }).constantKind;
      if (constant.case === 'stringValue')
        return { cost: 0, type: { kind: 'string', maxSize: String(constant.value).length } };
      if (constant.case === 'boolValue') return { cost: 0, type: { kind: 'bool' } };
      if (constant.case === 'int64Value' || constant.case === 'uint64Value') return { cost: 0, type: { kind: 'int' } };
      throw new Error(`no cost model for constant ${constant.case}`);
    }
    case 'identExpr': {
      const { name } = kind.value as { name: string };
      const type = scope.get(name);
      if (type === undefined) throw new Error(`undeclared reference to ${name}`);
      return { cost: 1, type };
    }
    case 'selectExpr': {
      const { operand, field, testOnly } = kind.value as { operand?: Expr; field: string; testOnly: boolean };
      const target = estimate(operand, scope);
      let type: Decl;
      if (target.type.kind === 'object') {
        const declared = target.type.fields[field];
        if (declared === undefined) throw new Error(`undefined field ${field}`);
        type = declared;
      } else if (target.type.kind === 'map') type = target.type.value;
      else if (target.type.kind === 'dyn') type = { kind: 'dyn' };
      else throw new Error(`cannot select ${field} from a ${target.type.kind}`);
      // A presence test (has()) costs nothing beyond its operand: Kubernetes builds every CEL environment with
      // PresenceTestHasCost(false) (k8s.io/apiserver pkg/cel/environment/base.go).
      return testOnly ? { cost: target.cost, type: { kind: 'bool' } } : { cost: target.cost + 1, type };
    }
    case 'listExpr': {
      const { elements } = kind.value as { elements: readonly Expr[] };
      const items = elements.map((element) => estimate(element, scope));
      const elem = items.map((item) => item.type).reduce(union, items[0]?.type ?? { kind: 'dyn' });
      return {
        cost: items.reduce((sum, item) => sum + item.cost, LIST_CREATE),
        type: { kind: 'list', elem, maxSize: items.length },
      };
    }
    case 'comprehensionExpr': {
      const comprehension = kind.value as Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'];
      const range = estimate(comprehension.iterRange, scope);
      const init = estimate(comprehension.accuInit, scope);
      const iterType =
        range.type.kind === 'list'
          ? range.type.elem
          : range.type.kind === 'map'
            ? range.type.key
            : { kind: 'dyn' as const };
      const inner = new Map(scope).set(comprehension.iterVar, iterType).set(comprehension.accuVar, init.type);
      const condition = estimate(comprehension.loopCondition, inner);
      const step = estimate(comprehension.loopStep, inner);
      // A macro that builds a list (map, filter) appends to the accumulator once per element: its result holds at most
      // as many elements as the range times what one step appends.
      const appended = accumulatedList(comprehension.loopStep, comprehension.accuVar, step.type);
      const accumulated: Decl | undefined =
        appended === undefined
          ? undefined
          : { kind: 'list', elem: appended.elem, maxSize: sizeOf(range.type) * appended.maxSize };
      const result = estimate(
        comprehension.result,
        new Map(scope).set(comprehension.accuVar, accumulated ?? init.type),
      );
      return {
        cost: range.cost + init.cost + result.cost + sizeOf(range.type) * (condition.cost + step.cost),
        type: result.type,
      };
    }
    case 'callExpr':
      return estimateCall(kind.value as { target?: Expr; function: string; args: readonly Expr[] }, scope);
    default:
      throw new Error(`no cost model for ${kind.case}`);
  }
}

/** For a loop step `accu + [x]`, the list it appends (its element type and size); else undefined. */
function accumulatedList(
  step: Expr | undefined,
  accuVar: string,
  stepType: Decl,
): { elem: Decl; maxSize: number } | undefined {
  if (step?.exprKind.case !== 'callExpr') return undefined;
  const call = step.exprKind.value as { function: string; args: readonly Expr[] };
  const [left, right] = call.args;
  const isAccu = left?.exprKind.case === 'identExpr' && (left.exprKind.value as { name: string }).name === accuVar;
  if (call.function !== '_+_' || !isAccu || right?.exprKind.case !== 'listExpr' || stepType.kind !== 'list')
    return undefined;
  return { elem: stepType.elem, maxSize: (right.exprKind.value as { elements: readonly Expr[] }).elements.length };
}

function estimateCall(
  call: { target?: Expr; function: string; args: readonly Expr[] },
  scope: ReadonlyMap<string, Decl>,
): Estimate {
  const target = call.target === undefined ? undefined : estimate(call.target, scope);
  const args = call.args.map((arg) => estimate(arg, scope));
  const argCost = args.reduce((sum, arg) => sum + arg.cost, target?.cost ?? 0);
  const arg = (index: number): Estimate => {
    const found = args[index];
    if (found === undefined) throw new Error(`${call.function} is missing argument ${index}`);
    return found;
  };
  const bool: Decl = { kind: 'bool' };
  switch (call.function) {
    case '_&&_':
    case '_||_':
      return { cost: argCost, type: bool };
    case '_?_:_':
      return { cost: arg(0).cost + Math.max(arg(1).cost, arg(2).cost), type: union(arg(1).type, arg(2).type) };
    case '!_':
    case '@not_strictly_false':
      return { cost: 1 + argCost, type: bool };
    case '_==_':
    case '_!=_':
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_':
      return {
        cost: ceil(Math.min(sizeOf(arg(0).type), sizeOf(arg(1).type)) * STRING_TRAVERSAL) + argCost,
        type: bool,
      };
    case '@in':
      return { cost: (arg(1).type.kind === 'list' ? sizeOf(arg(1).type) : 1) + argCost, type: bool };
    case 'size':
      return { cost: 1 + argCost, type: { kind: 'int' } };
    case '_-_':
    case '_+_': {
      const left = arg(0).type;
      const right = arg(1).type;
      // List concatenation costs one in cel-go; its result is as large as both sides.
      if (call.function === '_+_' && left.kind === 'list' && right.kind === 'list') {
        return { cost: 1 + argCost, type: { kind: 'list', elem: right.elem, maxSize: left.maxSize + right.maxSize } };
      }
      if (left.kind !== 'int') throw new Error(`no cost model for ${call.function} on ${left.kind}`);
      return { cost: 1 + argCost, type: { kind: 'int' } };
    }
    case 'sum': {
      // Kubernetes' lists library: one step per element of the target.
      if (target === undefined || target.type.kind !== 'list') throw new Error('sum needs a list target');
      return { cost: sizeOf(target.type) + argCost, type: { kind: 'int' } };
    }
    case '_[_]': {
      const container = arg(0).type;
      const type =
        container.kind === 'list'
          ? container.elem
          : container.kind === 'map'
            ? container.value
            : { kind: 'dyn' as const };
      return { cost: 1 + argCost, type };
    }
    case 'startsWith':
    case 'endsWith':
      return { cost: ceil(sizeOf(arg(0).type) * STRING_TRAVERSAL) + argCost, type: bool };
    case 'matches': {
      if (target === undefined) throw new Error('matches needs a target');
      const stringCost = ceil((sizeOf(target.type) + 1) * STRING_TRAVERSAL);
      return { cost: stringCost * ceil(sizeOf(arg(0).type) * REGEX_LENGTH) + argCost, type: bool };
    }
    case 'substring':
      // Kubernetes' strings library estimates substring as one traversal of its target.
      if (target === undefined) throw new Error('substring needs a target');
      return { cost: ceil(sizeOf(target.type) * STRING_TRAVERSAL) + argCost, type: target.type };
    default:
      throw new Error(`no cost model for function ${call.function}`);
  }
}

/** Estimates every rule of the schema, walking it from the root with the cardinality of each node. */
export function estimateRuleCosts(root: SchemaNode): RuleCost[] {
  const costs: RuleCost[] = [];
  const walk = (schema: SchemaNode, path: string, cardinality: number | undefined): void => {
    for (const { rule } of schema['x-kubernetes-validations'] ?? []) {
      const { cost } = estimate(parse(rule).expr, new Map([['self', declOf(schema)]]));
      // Below an unbounded list or map, Kubernetes assumes as many nodes as fit in one request.
      const nodes = cardinality ?? Math.floor(MAX_REQUEST_BYTES / (minSerializedSize(schema) + 1));
      costs.push({ path, rule, cost, cardinality: nodes, total: cost * nodes });
    }
    for (const [name, child] of Object.entries(schema.properties ?? {}))
      walk(child, path === '' ? name : `${path}.${name}`, cardinality);
    const times = (bound: number | undefined): number | undefined =>
      cardinality === undefined || bound === undefined ? undefined : cardinality * bound;
    if (schema.items !== undefined) walk(schema.items, `${path}[]`, times(schema.maxItems));
    if (schema.additionalProperties !== undefined) walk(schema.additionalProperties, `${path}.*`, times(undefined));
  };
  walk(root, '', 1);
  return costs;
}
