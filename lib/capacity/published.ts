/**
 * The published form of a capacity: what the sync writes into the snapshot and admission reads back. The distinct Node
 * shapes (labels but the hostname, taints, cordon) each with the names of its Nodes, and the NodePools as the fields
 * fit reads of them. Its reader is a boundary of its own, lean because admission bundles it: every field's type and
 * every enumerated value is checked with its path, the Kubernetes syntax the sync's own read already checked is not.
 */
import { MalformedInputError } from '../errors/index.ts';
import {
  isJsonObject,
  objectList,
  optionalBoolean,
  optionalInteger,
  optionalObject,
  optionalString,
  previewInput,
  stringList,
  stringMap,
  typeMismatch,
  type JsonObject,
} from '../json/index.ts';
import { HOSTNAME_LABEL } from './labels.ts';
import { SUPPORTED_OPERATORS, type NodePool } from './node-pools.ts';
import type { NodeShape, ShapeMember } from './nodes.ts';
import { isQuantity } from './quantity.ts';
import { readTaints, requiredString } from './taints.ts';

/** The version of the published form; a reader refuses another, and the endpoint then judges without capacity. */
const PUBLISHED_FORMAT = 1;

/** A member as published: its name, or [name, hostname] when its hostname label differs from its name. */
type PublishedMember = string | readonly [string, string];

function memberOf(member: ShapeMember): PublishedMember | [string] {
  if (member.hostname === undefined) return [member.name];
  return member.hostname === member.name ? member.name : [member.name, member.hostname];
}

/** The published form of Node shapes and NodePools: plain JSON, canonical for equal capacities. */
function publishCapacity(shapes: readonly NodeShape[], nodePools: readonly NodePool[]): JsonObject {
  return JSON.parse(
    JSON.stringify({
      format: PUBLISHED_FORMAT,
      nodeShapes: shapes.map((shape) => ({
        labels: shape.labels,
        taints: shape.taints,
        unschedulable: shape.unschedulable,
        // A member without a hostname label is a one-element list, so a plain string always means "hostname = name".
        nodes: shape.members.map(memberOf),
      })),
      nodePools,
    }),
  ) as JsonObject;
}

function invalid(path: string, expected: string, value: unknown): MalformedInputError {
  return new MalformedInputError(`${path}: expected ${expected}, got ${previewInput(value)}`, {
    context: { field: path },
  });
}

function quantitiesFrom(value: unknown, path: string): Readonly<Record<string, string>> {
  const map = stringMap(value, path);
  for (const [resource, quantity] of Object.entries(map))
    if (!isQuantity(quantity)) throw invalid(`${path}.${resource}`, 'a quantity', quantity);
  return map;
}

function memberFrom(value: unknown, path: string): ShapeMember {
  if (typeof value === 'string' && value !== '') return { name: value, hostname: value };
  if (
    Array.isArray(value) &&
    value.length >= 1 &&
    value.length <= 2 &&
    value.every((part) => typeof part === 'string')
  ) {
    const [name, hostname] = value as [string, string?];
    if (name !== '') return { name, hostname };
  }
  throw typeMismatch(path, 'a Node name, or [name] or [name, hostname]', value);
}

function shapeFrom(value: JsonObject, path: string): NodeShape {
  const nodes = Array.isArray(value.nodes) ? (value.nodes as readonly unknown[]) : [];
  if (nodes.length === 0) throw typeMismatch(`${path}.nodes`, 'a non-empty list', value.nodes);
  const labels = stringMap(value.labels, `${path}.labels`);
  if (Object.hasOwn(labels, HOSTNAME_LABEL))
    throw new MalformedInputError(`${path}.labels: a shape's labels leave out ${HOSTNAME_LABEL}`, {
      context: { field: `${path}.labels` },
    });
  return {
    labels,
    taints: readTaints(value.taints, `${path}.taints`),
    unschedulable: optionalBoolean(value.unschedulable, `${path}.unschedulable`) ?? false,
    members: nodes.map((member, index) => memberFrom(member, `${path}.nodes[${index}]`)),
  };
}

function nodePoolFrom(value: JsonObject, path: string): NodePool {
  const reference = optionalObject(value.nodeClassRef, `${path}.nodeClassRef`) ?? {};
  return {
    name: requiredString(value.name, `${path}.name`),
    labels: stringMap(value.labels, `${path}.labels`),
    requirements: objectList(value.requirements, `${path}.requirements`).map((requirement, index) => {
      const at = `${path}.requirements[${index}]`;
      const operator = optionalString(requirement.operator, `${at}.operator`);
      if (!SUPPORTED_OPERATORS.has(operator))
        throw invalid(`${at}.operator`, `one of ${[...SUPPORTED_OPERATORS].join(', ')}`, operator);
      return {
        key: requiredString(requirement.key, `${at}.key`),
        operator,
        values: stringList(requirement.values, `${at}.values`),
      };
    }),
    taints: readTaints(value.taints, `${path}.taints`),
    nodeClassRef: {
      group: requiredString(reference.group, `${path}.nodeClassRef.group`),
      kind: requiredString(reference.kind, `${path}.nodeClassRef.kind`),
      name: requiredString(reference.name, `${path}.nodeClassRef.name`),
    },
    weight: optionalInteger(value.weight, `${path}.weight`),
    replicas: optionalInteger(value.replicas, `${path}.replicas`),
    limits: quantitiesFrom(value.limits, `${path}.limits`),
    resources: quantitiesFrom(value.resources, `${path}.resources`),
    ready: optionalBoolean(value.ready, `${path}.ready`),
    notReadyReason: optionalString(value.notReadyReason, `${path}.notReadyReason`),
    deleting: optionalBoolean(value.deleting, `${path}.deleting`) ?? false,
  };
}

/** Node shapes and NodePools from their published form; throws MalformedInputError naming the field. */
function readPublishedCapacity(value: unknown, path: string): { shapes: NodeShape[]; nodePools: NodePool[] } {
  if (!isJsonObject(value)) throw typeMismatch(path, 'an object', value);
  if (value.format !== PUBLISHED_FORMAT)
    throw new MalformedInputError(
      `${path}.format: expected ${PUBLISHED_FORMAT}, got ${previewInput(value.format)}; this reader knows only that form`,
      { context: { field: `${path}.format` } },
    );
  return {
    shapes: objectList(value.nodeShapes, `${path}.nodeShapes`).map((shape, index) =>
      shapeFrom(shape, `${path}.nodeShapes[${index}]`),
    ),
    nodePools: objectList(value.nodePools, `${path}.nodePools`).map((pool, index) =>
      nodePoolFrom(pool, `${path}.nodePools[${index}]`),
    ),
  };
}

export { publishCapacity, readPublishedCapacity };
