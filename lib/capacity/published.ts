/**
 * The published form of a capacity: what the sync writes into the snapshot and admission reads back. The distinct Node
 * shapes (labels but the hostname, taints, cordon) each with the names of its Nodes, and the NodePools as the fields
 * fit reads of them. Read back through the same boundary as a file (readCapacityObjects), so that a stored capacity is
 * checked as any other input is.
 */
import { MalformedInputError } from '../errors/index.ts';
import { isJsonObject, objectList, previewInput, typeMismatch, type JsonObject } from '../values/index.ts';
import { HOSTNAME_LABEL } from './labels.ts';
import type { NodePool } from './node-pools.ts';
import type { NodeShape, ShapeMember } from './nodes.ts';
import { readCapacityObjects } from './read.ts';

/** The version of the published form; a reader refuses another, and the endpoint then judges without capacity. */
const PUBLISHED_FORMAT = 1;

/** A member as published: its name, or [name, hostname] when its hostname label differs from its name. */
type PublishedMember = string | readonly [string, string];

function memberOf(member: ShapeMember): PublishedMember | [string] {
  if (member.hostname === undefined) return [member.name];
  return member.hostname === member.name ? member.name : [member.name, member.hostname];
}

// The NodePool as the karpenter.sh/v1 object it was read from, with only the fields fit reads.
function nodePoolObject(pool: NodePool): JsonObject {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    // Any deletionTimestamp says "being deleted"; the time itself is not read.
    metadata: { name: pool.name, ...(pool.deleting ? { deletionTimestamp: 'set' } : {}) },
    spec: {
      template: {
        metadata: { labels: { ...pool.labels } },
        spec: {
          requirements: pool.requirements.map((requirement) => ({ ...requirement, values: [...requirement.values] })),
          taints: pool.taints.map((taint) => ({ ...taint })),
          nodeClassRef: { ...pool.nodeClassRef },
        },
      },
      ...(pool.weight === undefined ? {} : { weight: pool.weight }),
      ...(pool.replicas === undefined ? {} : { replicas: pool.replicas }),
      limits: { ...pool.limits },
    },
    status: {
      resources: { ...pool.resources },
      conditions:
        pool.ready === undefined
          ? []
          : [{ type: 'Ready', status: pool.ready ? 'True' : 'False', message: pool.notReadyReason }],
    },
  };
}

/** The published form of Node shapes and NodePools: plain JSON, canonical for equal capacities. */
function publishCapacity(shapes: readonly NodeShape[], nodePools: readonly NodePool[]): JsonObject {
  return {
    format: PUBLISHED_FORMAT,
    nodeShapes: shapes.map((shape) => ({
      labels: { ...shape.labels },
      taints: shape.taints.map((taint) => ({ ...taint })),
      unschedulable: shape.unschedulable,
      // A member without a hostname label is a one-element list, so that a plain string always means "hostname = name".
      nodes: shape.members.map(memberOf),
    })),
    nodePools: nodePools.map(nodePoolObject),
  };
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
  const members = nodes.map((member, index) => memberFrom(member, `${path}.nodes[${index}]`));
  // The shape's labels, taints and cordon read as a Node's are, through the one boundary.
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: members[0]!.name, labels: value.labels },
    spec: { taints: value.taints, unschedulable: value.unschedulable },
  };
  const [read] = readCapacityObjects([node], path).nodes;
  if (Object.hasOwn(read!.labels, HOSTNAME_LABEL))
    throw new MalformedInputError(`${path}.labels: a shape's labels leave out ${HOSTNAME_LABEL}`, {
      context: { field: `${path}.labels` },
    });
  return { labels: read!.labels, taints: read!.taints, unschedulable: read!.unschedulable, members };
}

/** Node shapes and NodePools from their published form; throws MalformedInputError naming the field. */
function readPublishedCapacity(value: unknown, path: string): { shapes: NodeShape[]; nodePools: NodePool[] } {
  if (!isJsonObject(value)) throw typeMismatch(path, 'an object', value);
  if (value.format !== PUBLISHED_FORMAT)
    throw new MalformedInputError(
      `${path}.format: expected ${PUBLISHED_FORMAT}, got ${previewInput(value.format)}; this reader knows only that form`,
      { context: { field: `${path}.format` } },
    );
  const shapes = objectList(value.nodeShapes, `${path}.nodeShapes`).map((shape, index) =>
    shapeFrom(shape, `${path}.nodeShapes[${index}]`),
  );
  const pools = readCapacityObjects(objectList(value.nodePools, `${path}.nodePools`), `${path}.nodePools`);
  if (pools.nodes.length > 0 || pools.skipped.length > 0)
    throw new MalformedInputError(`${path}.nodePools: holds objects other than NodePools`, {
      context: { field: `${path}.nodePools` },
    });
  return { shapes, nodePools: [...pools.nodePools] };
}

export { publishCapacity, readPublishedCapacity };
