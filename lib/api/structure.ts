/**
 * The structural part of validation, run from the schema declaration (lib/api/schema.ts) for the JSON Schema subset a
 * structural schema uses: types, required and unknown fields, list and map bounds, string bounds, enumerations and
 * integer ranges, alternatives of different types (lib/rule-tests' test file format uses them); then each node's named
 * checks (lib/api/checks.ts). Every issue names its field path. The same walk
 * normalizes a valid value: only declared fields, and the values the declaration marks absent left out.
 */
import { isJsonObject, isRawInteger, previewInput, type IssueSink, type JsonObject } from '../json/index.ts';
import { isInt64 } from '../syntax/index.ts';
import { CHECKS, KEY_CHECKS } from './checks.ts';
import { RULES, type RuleName } from './rules.ts';

/** A node of the declaration, as the validator reads it (TypeBox schemas are JSON Schema objects). */
interface SchemaNode {
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'boolean';
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: SchemaNode;
  readonly items?: SchemaNode;
  /** Alternatives told apart by their type (a boolean or a string): the first whose type the value has applies. */
  readonly anyOf?: readonly SchemaNode[];
  readonly enum?: readonly string[];
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: unknown;
  readonly 'x-check'?: keyof typeof CHECKS;
  readonly 'x-key-check'?: keyof typeof KEY_CHECKS;
  /** Rules the CRD enforces with CEL; the validator enforces them in the node's named check. */
  readonly 'x-cel'?: readonly RuleName[];
  readonly 'x-checked-by-parent'?: boolean;
  readonly 'x-noun'?: string;
  readonly 'x-message'?: string;
  readonly 'x-required'?: string;
  readonly 'x-min'?: string;
  /** One reason for a required field that is absent, too few items or entries, and a value of the wrong type. */
  readonly 'x-reason'?: string;
  readonly 'x-forbidden'?: RuleName;
  readonly 'x-absent-when'?: 'false' | 'empty';
}

type Check = (checked: unknown, at: string, into: IssueSink) => void;
type KeyCheck = (key: string, at: string, into: IssueSink) => void;

/**
 * A declaration node read once into one fixed shape. The validator visits every node of every rule (10,000 rules
 * again on a cold start), and TypeBox's nodes each have their own set of keys: reading them directly made every
 * access polymorphic and validation about twice as slow.
 */
interface Node {
  readonly schema: SchemaNode;
  readonly type: SchemaNode['type'];
  readonly forbidden: string | undefined;
  readonly enumeration: readonly string[] | undefined;
  readonly minimum: number | undefined;
  readonly maximum: number | undefined;
  /** Only for strings without a named check (which says what is wrong in words). */
  readonly maxLength: number | undefined;
  readonly pattern: RegExp | undefined;
  readonly maxSize: number | undefined;
  readonly minSize: number | undefined;
  readonly items: Node | undefined;
  readonly alternatives: readonly Node[] | undefined;
  readonly additional: Node | undefined;
  readonly keyCheck: KeyCheck | undefined;
  readonly properties: readonly Property[];
  readonly declared: ReadonlySet<string>;
  /** The declared names, for the reason of an unknown field. */
  readonly known: string;
  readonly required: readonly string[];
  readonly check: Check | undefined;
  readonly absentWhen: SchemaNode['x-absent-when'];
}

interface Property {
  readonly name: string;
  readonly node: Node;
  readonly hasDefault: boolean;
}

const NODES = new WeakMap<SchemaNode, Node>();

function nodeOf(schema: SchemaNode): Node {
  let node = NODES.get(schema);
  if (node !== undefined) return node;
  const properties = schema.properties ?? {};
  const checkedInWords = schema['x-check'] !== undefined || schema['x-checked-by-parent'] === true;
  const check = schema['x-check'];
  const keyCheck = schema['x-key-check'];
  node = {
    schema,
    type: schema.type,
    forbidden: schema['x-forbidden'] === undefined ? undefined : RULES[schema['x-forbidden']],
    enumeration: schema.enum,
    minimum: schema.minimum,
    maximum: schema.maximum,
    maxLength: checkedInWords ? undefined : schema.maxLength,
    pattern: checkedInWords || schema.pattern === undefined ? undefined : new RegExp(schema.pattern),
    maxSize: schema.maxItems ?? schema.maxProperties,
    minSize: schema.minItems ?? schema.minProperties,
    items: schema.items === undefined ? undefined : nodeOf(schema.items),
    alternatives: schema.anyOf?.map(nodeOf),
    additional: schema.additionalProperties === undefined ? undefined : nodeOf(schema.additionalProperties),
    keyCheck: keyCheck === undefined ? undefined : KEY_CHECKS[keyCheck],
    properties: Object.entries(properties).map(([name, child]) => ({
      name,
      node: nodeOf(child),
      hasDefault: child.default !== undefined,
    })),
    declared: new Set(Object.keys(properties)),
    known: Object.keys(properties).join(', '),
    required: schema.required ?? [],
    check: check === undefined ? undefined : (CHECKS[check] as Check),
    absentWhen: schema['x-absent-when'],
  };
  NODES.set(schema, node);
  return node;
}

function typeMatches(value: unknown, type: SchemaNode['type']): boolean {
  switch (type) {
    case 'object':
      return isJsonObject(value) && !isRawInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      // Beyond 2^53 an integer arrives as its digits (parseJsonExact, the rule files' YAML): a double would round it.
      return Number.isSafeInteger(value) || isRawInteger(value);
    default:
      return true;
  }
}

function expectedType(schema: SchemaNode): string {
  switch (schema.type) {
    case 'object':
      return 'must be an object';
    case 'array':
      return schema.items?.type === 'string' ? 'must be a list of strings' : 'must be a list';
    case 'string':
      return 'must be a string';
    case 'boolean':
      return 'must be a boolean';
    default:
      return 'must be an integer';
  }
}

/** The reason for a value that is not what the node declares; integers and enumerations repeat what they got. */
function wrongValue(schema: SchemaNode, value: unknown): string {
  const reason =
    schema['x-message'] ??
    schema['x-reason'] ??
    (schema.enum !== undefined ? `must be one of ${schema.enum.join(', ')}` : expectedType(schema));
  return schema.type === 'integer' || schema.enum !== undefined ? `${reason} (got ${previewInput(value)})` : reason;
}

// The range of every integer Kubernetes stores: the API server decodes a JSON integer into an int64 (format int64).
const INT64_RANGE = 'must be an integer from -9223372036854775808 to 9223372036854775807';

/**
 * The reason an integer is out of the node's range, or undefined: its minimum and maximum, then int64's. A number is
 * compared as it is; an integer kept as its digits (beyond 2^53) as a bigint.
 */
function integerRangeProblem(node: Node, value: number | { readonly rawJSON: string }): string | undefined {
  const { minimum, maximum, schema } = node;
  if (typeof value === 'number') {
    return (minimum !== undefined && value < minimum) || (maximum !== undefined && value > maximum)
      ? wrongValue(schema, value)
      : undefined;
  }
  if (!isInt64(value.rawJSON)) return `${INT64_RANGE} (got ${previewInput(value)})`;
  const digits = BigInt(value.rawJSON);
  return (minimum !== undefined && digits < BigInt(minimum)) || (maximum !== undefined && digits > BigInt(maximum))
    ? wrongValue(schema, value)
    : undefined;
}

function requiredReason(schema: SchemaNode | undefined): string {
  return schema?.['x-required'] ?? schema?.['x-reason'] ?? 'is required';
}

function limit(issues: IssueSink, path: string, node: Node, size: number): void {
  const { maxSize, minSize, schema } = node;
  if (maxSize !== undefined && size > maxSize)
    issues.add(path, `has ${size} ${schema['x-noun'] ?? 'items'}, above the limit of ${maxSize}`);
  if (minSize !== undefined && size < minSize)
    issues.add(
      path,
      schema['x-min'] ?? schema['x-reason'] ?? `must hold at least ${minSize} ${schema['x-noun'] ?? 'items'}`,
    );
}

function validateString(node: Node, value: string, path: string, { issues, prefix }: Reporting): void {
  // A named check or the parent's validates the syntax with a reason in words; the pattern is then the CRD's only.
  if (node.maxLength !== undefined && value.length > node.maxLength) {
    issues.add(path, `${prefix}must be at most ${node.maxLength} characters (got ${value.length})`);
  } else if (node.pattern !== undefined && !node.pattern.test(value)) {
    issues.add(path, `${prefix}${previewInput(value)} does not match ${node.schema.pattern}`);
  }
}

function fieldPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function isAbsent(node: Node, value: unknown): boolean {
  const when = node.absentWhen;
  return (when === 'false' && value === false) || (when === 'empty' && Array.isArray(value) && value.length === 0);
}

/** The fields of `value` among the first `end` declared ones, as they are: those a normalization kept unchanged. */
function keptFields(node: Node, value: JsonObject, end: number): JsonObject {
  const result: JsonObject = {};
  for (let index = 0; index < end; index += 1) {
    const { name } = node.properties[index]!;
    if (value[name] !== undefined) result[name] = value[name];
  }
  return result;
}

/** Validates an object's fields; returns its normal form: declared, present fields in the declaration's order. */
function validateObject(node: Node, value: JsonObject, path: string, plain: Reporting): JsonObject {
  const { issues } = plain;
  const keys = Object.keys(value);
  limit(issues, path, node, keys.length);
  const { additional, keyCheck, properties } = node;
  if (additional !== undefined) {
    const values: Reporting = { issues, prefix: 'value ' };
    for (const key of keys) {
      const at = fieldPath(path, key);
      if (keyCheck !== undefined) keyCheck(key, at, issues);
      validateNode(additional, value[key], at, values);
    }
    return value;
  }
  for (const key of keys) {
    // Unknown fields are rejected: a misspelt selector field would otherwise widen the match.
    if (!node.declared.has(key)) issues.add(fieldPath(path, key), `unknown field; expected one of ${node.known}`);
  }
  for (const name of node.required) {
    if (value[name] === undefined) issues.add(fieldPath(path, name), requiredReason(node.schema.properties?.[name]));
  }
  let result: JsonObject | undefined;
  let kept = 0;
  for (let index = 0; index < properties.length; index += 1) {
    const { name, node: child, hasDefault } = properties[index]!;
    const item = value[name];
    if (item === undefined) continue;
    // A null where the declaration has a default is the default, as the API server prunes the null and defaults.
    const checked = item === null && hasDefault ? item : validateNode(child, item, fieldPath(path, name), plain);
    const normalized = isAbsent(child, item) ? undefined : checked;
    if (result === undefined && (normalized !== item || keys[kept] !== name)) result = keptFields(node, value, index);
    if (normalized === undefined) continue;
    if (result !== undefined) result[name] = normalized;
    kept += 1;
  }
  // Fields it does not declare or out of the declaration's order: a copy without them.
  return result ?? (kept === keys.length ? value : keptFields(node, value, properties.length));
}

/** Validates a list's items; returns its normal form, the list itself when every item is normal. */
function validateList(items: Node, list: readonly unknown[], path: string, plain: Reporting): readonly unknown[] {
  let result: unknown[] | undefined;
  for (let index = 0; index < list.length; index += 1) {
    const item = validateNode(items, list[index], `${path}[${index}]`, plain);
    if (result === undefined && item !== list[index]) result = list.slice(0, index);
    result?.push(item);
  }
  return result ?? list;
}

/** Where a node's issues go, and what its own reasons start with: `value ` for a map's values, else nothing. */
interface Reporting {
  readonly issues: IssueSink;
  readonly prefix: string;
}

/** The reporting of a node's children, whose reasons have no prefix of their own. */
function plainOf(reporting: Reporting): Reporting {
  return reporting.prefix === '' ? reporting : { issues: reporting.issues, prefix: '' };
}

/**
 * An issue sink that puts a prefix before each reason. A class rather than a closure made for each map value: esbuild's
 * keepNames names every closure it creates, and validating 2,500 rules of 192 map entries each took 270–450 ms with the
 * closure, 145–185 ms without it (a cold process, as on a cold start).
 */
class PrefixedIssues implements IssueSink {
  constructor(
    private readonly issues: IssueSink,
    private readonly prefix: string,
  ) {}

  add(field: string, reason: string): void {
    this.issues.add(field, `${this.prefix}${reason}`);
  }
}

/**
 * Validates `value` at `path` against one node: its structure, its children, then its named check. Returns the value
 * normalized (meaningful only when no issue was added): a part already in normal form is returned as it is.
 */
function validateNode(node: Node, value: unknown, path: string, reporting: Reporting): unknown {
  const { issues, prefix } = reporting;
  if (node.forbidden !== undefined) {
    issues.add(path, node.forbidden);
    return value;
  }
  if (node.alternatives !== undefined) {
    const branch = node.alternatives.find((option) => typeMatches(value, option.type));
    if (branch !== undefined) return validateNode(branch, value, path, reporting);
    issues.add(path, `${prefix}${node.schema['x-message'] ?? 'has the wrong type'}`);
    return value;
  }
  if (!typeMatches(value, node.type)) {
    issues.add(path, `${prefix}${wrongValue(node.schema, value)}`);
    return value;
  }
  if (node.enumeration !== undefined && !node.enumeration.includes(value as string)) {
    issues.add(path, `${prefix}${wrongValue(node.schema, value)}`);
    return value;
  }
  const outOfRange =
    node.type === 'integer' ? integerRangeProblem(node, value as number | { readonly rawJSON: string }) : undefined;
  if (outOfRange !== undefined) {
    issues.add(path, `${prefix}${outOfRange}`);
    return value;
  }
  let normalized = value;
  if (typeof value === 'string') validateString(node, value, path, reporting);
  if (Array.isArray(value)) {
    limit(issues, path, node, value.length);
    if (node.items !== undefined) normalized = validateList(node.items, value, path, plainOf(reporting));
  }
  if (isJsonObject(value) && !isRawInteger(value)) normalized = validateObject(node, value, path, plainOf(reporting));
  const { check } = node;
  if (check === undefined) return normalized;
  // A map value's reasons say "value", as its key's say the key: both sit at the same path.
  check(value, path, prefix === '' ? issues : new PrefixedIssues(issues, prefix));
  return normalized;
}

/**
 * Validates a value against the declaration's node, adding every issue under `path`. Returns it normalized, for a
 * value without issues: declared fields only (a valid value has no others), in the declaration's order, and the
 * values the declaration marks absent left out (all: false, an empty list of values). The input is not edited; a
 * part already in normal form is returned as it is, not copied (a snapshot's rules, validated again on every cold
 * start, are normalized already).
 */
function validateStructure(schema: object, value: unknown, path: string, issues: IssueSink): unknown {
  return validateNode(nodeOf(schema), value, path, { issues, prefix: '' });
}

export { validateStructure };
