/**
 * The structural part of validation, run from the schema declaration (lib/api/schema.ts) for the JSON Schema subset a
 * structural schema uses: types, required and unknown fields, list and map bounds, string bounds, enumerations and
 * integer ranges, alternatives of different types (lib/rule-tests' test file format uses them); then each node's named
 * checks (lib/api/checks.ts). Every issue names its field path. Also the normalization of a valid value: only declared
 * fields, and the values the declaration marks absent left out.
 */
import { isJsonObject, previewInput, type IssueSink, type JsonObject } from '../values/index.ts';
import { CHECKS, KEY_CHECKS } from './checks.ts';

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
  readonly 'x-checked-by-parent'?: boolean;
  readonly 'x-noun'?: string;
  readonly 'x-message'?: string;
  readonly 'x-required'?: string;
  readonly 'x-min'?: string;
  readonly 'x-forbidden'?: string;
  readonly 'x-absent-when'?: 'false' | 'empty';
}

const PATTERNS = new Map<string, RegExp>();

function patternOf(source: string): RegExp {
  let pattern = PATTERNS.get(source);
  if (pattern === undefined) {
    pattern = new RegExp(source);
    PATTERNS.set(source, pattern);
  }
  return pattern;
}

function typeMatches(value: unknown, type: SchemaNode['type']): boolean {
  switch (type) {
    case 'object':
      return isJsonObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isSafeInteger(value);
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
  const reason = schema['x-message'] ?? (schema.enum !== undefined ? `must be one of ${schema.enum.join(', ')}` : expectedType(schema));
  return schema.type === 'integer' || schema.enum !== undefined ? `${reason} (got ${previewInput(value)})` : reason;
}

function limit(issues: IssueSink, path: string, schema: SchemaNode, size: number): void {
  const noun = schema['x-noun'] ?? 'items';
  const maximum = schema.maxItems ?? schema.maxProperties;
  const minimum = schema.minItems ?? schema.minProperties;
  if (maximum !== undefined && size > maximum) issues.add(path, `has ${size} ${noun}, above the limit of ${maximum}`);
  if (minimum !== undefined && size < minimum) issues.add(path, schema['x-min'] ?? `must hold at least ${minimum} ${noun}`);
}

function validateString(schema: SchemaNode, value: string, path: string, issues: IssueSink, prefix: string): void {
  // A named check or the parent's validates the syntax with a reason in words; the pattern is then the CRD's only.
  if (schema['x-check'] !== undefined || schema['x-checked-by-parent'] === true) return;
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    issues.add(path, `${prefix}must be at most ${schema.maxLength} characters (got ${value.length})`);
  } else if (schema.pattern !== undefined && !patternOf(schema.pattern).test(value)) {
    issues.add(path, `${prefix}${previewInput(value)} does not match ${schema.pattern}`);
  }
}

function validateObject(schema: SchemaNode, value: JsonObject, path: string, issues: IssueSink): void {
  const join = (key: string) => (path === '' ? key : `${path}.${key}`);
  if (schema.additionalProperties !== undefined) {
    limit(issues, path, schema, Object.keys(value).length);
    const keyCheck = schema['x-key-check'];
    for (const [key, item] of Object.entries(value)) {
      if (keyCheck !== undefined) KEY_CHECKS[keyCheck](key, join(key), issues);
      validateNode(schema.additionalProperties, item, join(key), issues, 'value ');
    }
    return;
  }
  const properties = schema.properties ?? {};
  const known = Object.keys(properties);
  limit(issues, path, schema, Object.keys(value).length);
  for (const key of Object.keys(value)) {
    // Unknown fields are rejected: a misspelt selector field would otherwise widen the match.
    if (!Object.hasOwn(properties, key)) issues.add(join(key), `unknown field; expected one of ${known.join(', ')}`);
  }
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) issues.add(join(name), properties[name]?.['x-required'] ?? 'is required');
  }
  for (const [name, child] of Object.entries(properties)) {
    // A null where the declaration has a default is the default, as the API server prunes the null and defaults.
    if (value[name] !== undefined && !(value[name] === null && child.default !== undefined)) validateNode(child, value[name], join(name), issues, '');
  }
}

/** Validates `value` at `path` against one node: its structure, its children, then its named check. */
function validateNode(schema: SchemaNode, value: unknown, path: string, issues: IssueSink, prefix: string): void {
  if (schema['x-forbidden'] !== undefined) {
    issues.add(path, schema['x-forbidden']);
    return;
  }
  if (schema.anyOf !== undefined) {
    const branch = schema.anyOf.find((option) => typeMatches(value, option.type));
    if (branch === undefined) issues.add(path, `${prefix}${schema['x-message'] ?? 'has the wrong type'}`);
    else validateNode(branch, value, path, issues, prefix);
    return;
  }
  if (!typeMatches(value, schema.type)) {
    issues.add(path, `${prefix}${wrongValue(schema, value)}`);
    return;
  }
  if (schema.enum !== undefined && !schema.enum.includes(value as string)) {
    issues.add(path, `${prefix}${wrongValue(schema, value)}`);
    return;
  }
  if (typeof value === 'number' && ((schema.minimum !== undefined && value < schema.minimum) || (schema.maximum !== undefined && value > schema.maximum))) {
    issues.add(path, `${prefix}${wrongValue(schema, value)}`);
    return;
  }
  if (typeof value === 'string') validateString(schema, value, path, issues, prefix);
  if (Array.isArray(value)) {
    limit(issues, path, schema, value.length);
    if (schema.items !== undefined) value.forEach((item, index) => validateNode(schema.items!, item, `${path}[${index}]`, issues, ''));
  }
  if (isJsonObject(value)) validateObject(schema, value, path, issues);
  const check = schema['x-check'];
  if (check === undefined) return;
  // A map value's reasons say "value", as its key's say the key: both sit at the same path.
  const sink: IssueSink = prefix === '' ? issues : { add: (field, reason) => issues.add(field, `${prefix}${reason}`) };
  (CHECKS[check] as (checked: unknown, at: string, into: IssueSink) => void)(value, path, sink);
}

/** Validates a value against the declaration's node, adding every issue under `path`. */
function validateStructure(schema: object, value: unknown, path: string, issues: IssueSink): void {
  validateNode(schema, value, path, issues, '');
}

/**
 * A valid value normalized: declared fields only (a valid value has no others), and the values the declaration marks
 * absent left out (all: false, an empty list of values). Pure; the input is not edited.
 */
function normalizeStructure<T>(schema: object, value: T): T {
  return normalizeNode(schema, value) as T;
}

function isAbsent(schema: SchemaNode, value: unknown): boolean {
  const when = schema['x-absent-when'];
  return (when === 'false' && value === false) || (when === 'empty' && Array.isArray(value) && value.length === 0);
}

function normalizeNode(schema: SchemaNode, value: unknown): unknown {
  if (Array.isArray(value)) {
    const list: readonly unknown[] = value;
    return schema.items === undefined ? [...list] : list.map((item) => normalizeNode(schema.items!, item));
  }
  if (!isJsonObject(value)) return value;
  if (schema.additionalProperties !== undefined) return { ...value };
  const result: JsonObject = {};
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const item = value[name];
    if (item !== undefined && !isAbsent(child, item)) result[name] = normalizeNode(child, item);
  }
  return result;
}

export { validateStructure, normalizeStructure };
export type { SchemaNode };
