/**
 * What the API server does with a custom resource on create, for the subset of structural
 * schemas infra/crd.yaml uses: check apiVersion, kind and metadata.name, drop status (status
 * subresource), prune unknown fields and non-nullable nulls, apply defaults, validate the schema,
 * then evaluate every x-kubernetes-validations rule with `self` bound to the node it is attached to.
 * Errors carry the API server's wording (the message of each cause, after its "Invalid value: …:"
 * prefix), so that test/real-cluster/crd.test.ts can hold this emulation to the real server's answers.
 * A keyword outside the subset throws, so the CRD cannot silently outgrow this emulation.
 */
import type { CelInput } from '@bufbuild/cel';
import { omitKey } from '../support/objects.ts';
import { evaluateCel } from './cel.ts';

/** A node of a structural schema (the keywords the CRD uses). */
export interface SchemaNode {
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: SchemaNode;
  readonly items?: SchemaNode;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
  readonly format?: string;
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly 'x-kubernetes-validations'?: readonly ValidationRule[];
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** One x-kubernetes-validations entry. */
export interface ValidationRule {
  readonly rule: string;
  readonly message: string;
}

/** One rejection: the field path (as the validator writes it; '' for a cause without one) and the reason. */
export interface CrdError {
  readonly field: string;
  readonly message: string;
  /** Set for CEL rejections: the rule that rejected. */
  readonly rule?: string;
}

/** The API server's answer to a create: accepted, or rejected with every error; and the object it would store. */
export interface CrdVerdict {
  readonly accepted: boolean;
  readonly errors: readonly CrdError[];
  /** The resource as the API server stores it after decoding: pruned, defaulted, without a sent status. */
  readonly stored?: Json;
}

/** The parts of a CustomResourceDefinition the emulation reads. */
export interface CustomResourceDefinition {
  readonly spec: {
    readonly group: string;
    readonly names: { readonly kind: string };
    readonly versions: readonly {
      readonly name: string;
      readonly storage?: boolean;
      readonly subresources?: { readonly status?: object };
      readonly schema: { readonly openAPIV3Schema: SchemaNode };
    }[];
  };
}

const KNOWN_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'additionalProperties',
  'items',
  'required',
  'enum',
  'default',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minimum',
  'maximum',
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-preserve-unknown-fields',
]);
// Numeric formats name the type in type errors and bound int32 values; date-time is the one string format checked.
const IGNORED_FORMATS = new Set(['int32', 'int64']);
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function childPath(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}

/** Throws on a keyword the emulation does not implement. */
function assertSupported(schema: SchemaNode, path: string): void {
  for (const keyword of Object.keys(schema)) {
    if (!KNOWN_KEYWORDS.has(keyword))
      throw new Error(`schema keyword ${keyword} at ${path || '(root)'} is not emulated`);
  }
  if (schema.format !== undefined && !IGNORED_FORMATS.has(schema.format) && schema.format !== 'date-time') {
    throw new Error(`format ${schema.format} at ${path || '(root)'} is not emulated`);
  }
  for (const [name, child] of Object.entries(schema.properties ?? {})) assertSupported(child, childPath(path, name));
  if (schema.items !== undefined) assertSupported(schema.items, `${path}[]`);
  if (schema.additionalProperties !== undefined) assertSupported(schema.additionalProperties, `${path}.*`);
}

/**
 * Drops fields the schema does not declare and nulls of non-nullable fields, as decoding does. A node with
 * x-kubernetes-preserve-unknown-fields keeps its undeclared fields as they came; its declared fields are pruned by
 * their own schemas (the extension does not reach below the node that sets it).
 */
function prune(value: unknown, schema: SchemaNode): unknown {
  if (Array.isArray(value)) return schema.items === undefined ? value : value.map((item) => prune(item, schema.items!));
  if (!isObject(value)) return value;
  if (schema.additionalProperties !== undefined) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, prune(item, schema.additionalProperties!)]),
    );
  }
  if (schema.properties === undefined) return value;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const pruned: Json = {};
  for (const [key, item] of Object.entries(value)) {
    const child = schema.properties[key];
    if (item === null) continue;
    if (child === undefined) {
      if (preserve) pruned[key] = item;
      continue;
    }
    pruned[key] = prune(item, child);
  }
  return pruned;
}

/** Fills absent fields that declare a default, inside objects that are present. */
function applyDefaults(value: unknown, schema: SchemaNode): unknown {
  if (Array.isArray(value))
    return schema.items === undefined ? value : value.map((item) => applyDefaults(item, schema.items!));
  if (!isObject(value)) return value;
  if (schema.additionalProperties !== undefined) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, applyDefaults(item, schema.additionalProperties!)]),
    );
  }
  const defaulted: Json = { ...value };
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    if (defaulted[key] === undefined && child.default !== undefined) defaulted[key] = structuredClone(child.default);
    if (defaulted[key] !== undefined) defaulted[key] = applyDefaults(defaulted[key], child);
  }
  return defaulted;
}

function typeMatches(value: unknown, type: SchemaNode['type']): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

interface SchemaErrors {
  readonly errors: CrdError[];
  /** Errors of the types that keep the API server from evaluating any CEL rule (see BLOCKED). */
  blocking: number;
}

// apiextensions-apiserver registry/customresource strategy.go hasBlockingErr: a type, required, enum, maxLength, maxItems
// or maxProperties error skips every CEL rule of the object, and the answer says so in a cause without a field.
const BLOCKED: CrdError = {
  field: '',
  message:
    'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};
const RFC1123_SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

function blockingError(found: SchemaErrors, field: string, message: string): void {
  found.errors.push({ field, message });
  found.blocking += 1;
}

/** Validates the value against the schema keywords (not CEL). */
/** The int32 format check of kube-openapi, which reports its finding without a field. */
function checkNumericFormat(value: unknown, schema: SchemaNode, path: string, found: SchemaErrors): void {
  if (typeof value !== 'number' || schema.format === undefined || !IGNORED_FORMATS.has(schema.format)) return;
  const fits = Number.isInteger(value) && (schema.format !== 'int32' || (value >= INT32.min && value <= INT32.max));
  if (!fits)
    found.errors.push({
      field: '',
      message: `Checked value must be of type integer with format ${schema.format} in ${path}`,
    });
}

/**
 * Validates the value against the schema keywords (not CEL), in the words of kube-openapi's validators as
 * apiextensions-apiserver converts them to causes (apiserver/validation/validation.go).
 */
function validateSchema(value: unknown, schema: SchemaNode, path: string, found: SchemaErrors): void {
  checkNumericFormat(value, schema, path, found);
  if (!typeMatches(value, schema.type)) {
    // kube-openapi's type validator names the format instead of the type for a value that is neither string nor list.
    const expected =
      schema.format !== undefined && typeof value !== 'string' && !Array.isArray(value) ? schema.format : schema.type;
    blockingError(found, path, `must be of type ${expected}`);
    return;
  }
  if (schema.enum !== undefined && !schema.enum.includes(value)) {
    blockingError(found, path, `supported values: ${schema.enum.map((item) => JSON.stringify(item)).join(', ')}`);
  }
  if (typeof value === 'string') {
    // Both count characters (runes), whatever the maxLength message says.
    const characters = [...value].length;
    if (schema.maxLength !== undefined && characters > schema.maxLength)
      blockingError(found, path, `may not be more than ${schema.maxLength} bytes`);
    if (schema.minLength !== undefined && characters < schema.minLength) {
      found.errors.push({ field: path, message: `should be at least ${schema.minLength} chars long` });
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) {
      found.errors.push({ field: path, message: `should match '${schema.pattern}'` });
    }
    if (schema.format === 'date-time' && !DATE_TIME.test(value)) {
      found.errors.push({ field: path, message: 'must be of type date-time' });
    }
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) {
      found.errors.push({ field: path, message: `should be greater than or equal to ${schema.minimum}` });
    }
    if (schema.maximum !== undefined && value > schema.maximum) {
      found.errors.push({ field: path, message: `should be less than or equal to ${schema.maximum}` });
    }
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      blockingError(found, path, `must have at most ${schema.maxItems} items`);
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      found.errors.push({ field: path, message: `should have at least ${schema.minItems} items` });
    }
    if (schema['x-kubernetes-list-type'] === 'map') {
      const keys = value.map((item) =>
        JSON.stringify((schema['x-kubernetes-list-map-keys'] ?? []).map((key) => (item as Json)[key])),
      );
      if (new Set(keys).size !== keys.length) found.errors.push({ field: path, message: 'Duplicate value' });
    }
    if (schema.items !== undefined)
      value.forEach((item, index) => validateSchema(item, schema.items!, `${path}[${index}]`, found));
  }
  if (isObject(value)) {
    const size = Object.keys(value).length;
    // kube-openapi's maxProperties error becomes the same "Too many" cause as maxItems.
    if (schema.maxProperties !== undefined && size > schema.maxProperties)
      blockingError(found, path, `must have at most ${schema.maxProperties} items`);
    if (schema.minProperties !== undefined && size < schema.minProperties) {
      found.errors.push({ field: path, message: `should have at least ${schema.minProperties} properties` });
    }
    for (const name of schema.required ?? []) {
      if (value[name] === undefined) blockingError(found, childPath(path, name), 'Required value');
    }
    for (const [key, item] of Object.entries(value)) {
      const child = schema.properties?.[key] ?? schema.additionalProperties;
      if (child !== undefined) validateSchema(item, child, childPath(path, key), found);
    }
  }
}

/**
 * Converts a validated node to CEL input, typed by its schema as Kubernetes does (integer fields are int). Fields kept
 * by x-kubernetes-preserve-unknown-fields are not accessible in CEL, so they are left out.
 */
function toTypedCel(value: unknown, schema: SchemaNode): CelInput {
  if (Array.isArray(value)) return value.map((item) => toTypedCel(item, schema.items ?? {}));
  if (isObject(value)) {
    const declared = Object.entries(value).filter(
      ([key]) => schema.properties === undefined || Object.hasOwn(schema.properties, key),
    );
    return new Map(
      declared.map(([key, item]) => [
        key,
        toTypedCel(item, schema.properties?.[key] ?? schema.additionalProperties ?? {}),
      ]),
    );
  }
  if (typeof value === 'number' && schema.type === 'integer') return BigInt(value);
  return value as CelInput;
}

/** Evaluates every rule on every present node, depth first. */
function validateRules(value: unknown, schema: SchemaNode, path: string, errors: CrdError[]): void {
  const rules = schema['x-kubernetes-validations'] ?? [];
  if (rules.length > 0) {
    const self = toTypedCel(value, schema);
    for (const { rule, message } of rules) {
      const outcome = evaluateCel(rule, { self });
      if (!outcome.ok) errors.push({ field: path, message: `${outcome.error} evaluating rule: ${rule}`, rule });
      else if (outcome.value !== true) errors.push({ field: path, message, rule });
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, index) => validateRules(item, schema.items!, `${path}[${index}]`, errors));
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const child = schema.properties?.[key] ?? schema.additionalProperties;
      if (child !== undefined) validateRules(item, child, childPath(path, key), errors);
    }
  }
}

/** Builds the create-time admission of one CRD's storage version; the returned function is pure. */
export function createCrdAdmission(crd: CustomResourceDefinition): (resource: unknown) => CrdVerdict {
  const version = crd.spec.versions.find((candidate) => candidate.storage === true);
  if (version === undefined) throw new Error('the CRD has no storage version');
  const schema = version.schema.openAPIV3Schema;
  assertSupported(schema, '');
  const apiVersion = `${crd.spec.group}/${version.name}`;
  const hasStatusSubresource = version.subresources?.status !== undefined;

  return (resource) => {
    if (!isObject(resource)) return { accepted: false, errors: [{ field: '', message: 'must be an object' }] };
    const errors: CrdError[] = [];
    if (resource.kind !== crd.spec.names.kind)
      errors.push({ field: 'kind', message: `must be ${crd.spec.names.kind}` });
    if (resource.apiVersion !== apiVersion) errors.push({ field: 'apiVersion', message: `must be ${apiVersion}` });
    // customResourceValidator.Validate returns type meta errors alone, before anything else is validated.
    if (errors.length > 0) return { accepted: false, errors };
    const found: SchemaErrors = { errors, blocking: 0 };
    // ObjectMeta validation of a custom resource (NameIsDNSSubdomain).
    const name = isObject(resource.metadata) ? resource.metadata.name : undefined;
    if (typeof name !== 'string' || name.length === 0)
      blockingError(found, 'metadata.name', 'name or generateName is required');
    else {
      if (name.length > 253) errors.push({ field: 'metadata.name', message: 'must be no more than 253 characters' });
      if (!DNS1123_SUBDOMAIN.test(name)) errors.push({ field: 'metadata.name', message: RFC1123_SUBDOMAIN });
    }
    // With a status subresource, a create ignores whatever status the client sent.
    const sent = omitKey(resource, 'status');
    const decoded = applyDefaults(prune(hasStatusSubresource ? sent : resource, schema), schema) as Json;
    // metadata is ObjectMeta, validated above rather than by the CRD schema.
    const object = { ...decoded, metadata: resource.metadata };
    validateSchema(object, { ...schema, properties: { ...schema.properties, metadata: {} } }, '', found);
    if (found.blocking > 0) errors.push(BLOCKED);
    else validateRules(object, schema, '', errors);
    return { accepted: errors.length === 0, errors, stored: object };
  };
}
