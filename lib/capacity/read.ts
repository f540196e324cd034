/**
 * The one boundary of capacity input: Nodes (v1) and NodePools (karpenter.sh/v1) from untrusted JSON or parsed YAML, as
 * `kubectl get nodes,nodepools -o yaml` prints them (a List), as several documents, or as an API list (NodeList,
 * NodePoolList). Every field read is checked with its path; the fields fit does not depend on are not read. Objects of
 * other kinds are left out and listed. A malformed Node or NodePool fails the whole read, naming the object and the
 * field, because a capacity missing a Node would judge Pods against less than the cluster has.
 */
import { MalformedInputError } from '../errors/index.ts';
import {
  IssueList,
  isJsonObject,
  isRawInteger,
  objectList,
  optionalBoolean,
  optionalInteger,
  optionalObject,
  optionalString,
  previewInput,
  stringList,
  stringMap,
  typeMismatch,
  memberPath,
  type JsonObject,
} from '../json/index.ts';
import { qualifiedNameProblem } from '../syntax/index.ts';
import { nodePoolLabelProblem } from './labels.ts';
import type { NodePool, NodePoolRequirement } from './node-pools.ts';
import type { CapacityNode } from './nodes.ts';
import { isQuantity } from './quantity.ts';
import { readTaints, requiredString } from './taints.ts';

/**
 * An object of another kind, left out of the capacity.
 * @internal Exported for tests: the tests assert which objects the boundary skips, and why.
 */
interface SkippedObject {
  /** Where it was: "nodes.yaml: document 1, items[4]". */
  readonly where: string;
  readonly kind: string;
  readonly name: string;
}

/** What a read found: the Nodes and NodePools, and what it left out. */
interface CapacityObjects {
  readonly nodes: readonly CapacityNode[];
  readonly nodePools: readonly NodePool[];
  readonly skipped: readonly SkippedObject[];
}

/** At most this many problems are listed in one error; the rest are counted. */
const MAX_ISSUES = 20;

const NODE_POOL_API_VERSION = 'karpenter.sh/v1';
const NODE_POOL_OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte']);
// karpenter.sh_nodepools.yaml: Gt, Lt, Gte and Lte take one value that CEL's int() reads as non-negative.
const NON_NEGATIVE_INTEGER = /^\+?\d+$/;

/** A map of resource quantities (spec.limits, status.resources): strings, or numbers as a YAML file may hold them. */
function quantities(value: unknown, path: string): Record<string, string> {
  const map = optionalObject(value, path) ?? {};
  const result: Record<string, string> = {};
  for (const [resource, quantity] of Object.entries(map)) {
    const at = memberPath(path, resource);
    const text = typeof quantity === 'number' ? String(quantity) : isRawInteger(quantity) ? quantity.rawJSON : quantity;
    if (typeof text !== 'string') throw typeMismatch(at, 'a quantity (a string or a number)', quantity);
    if (!isQuantity(text))
      throw new MalformedInputError(
        `${at}: expected a quantity such as 1000, 250m or 64Gi, got ${previewInput(text)}`,
        {
          context: { field: at },
        },
      );
    result[resource] = text;
  }
  return result;
}

function readNode(object: JsonObject): CapacityNode {
  const metadata = optionalObject(object.metadata, 'metadata');
  const spec = optionalObject(object.spec, 'spec');
  return {
    name: requiredString(metadata?.name, 'metadata.name'),
    labels: stringMap(metadata?.labels, 'metadata.labels'),
    taints: readTaints(spec?.taints, 'spec.taints'),
    unschedulable: optionalBoolean(spec?.unschedulable, 'spec.unschedulable') ?? false,
  };
}

// The checks Karpenter's CRD makes of a requirement (karpenter.sh_nodepools.yaml), so that a file holds no NodePool
// the API server would refuse.
function readRequirement(requirement: JsonObject, path: string): NodePoolRequirement {
  const key = requiredString(requirement.key, `${path}.key`);
  const keyProblem = qualifiedNameProblem(key);
  if (keyProblem !== undefined)
    throw new MalformedInputError(`${path}.key: ${previewInput(key)} is not a label key: ${keyProblem}`, {
      context: { field: `${path}.key` },
    });
  const restricted = nodePoolLabelProblem(key);
  if (restricted !== undefined)
    throw new MalformedInputError(`${path}.key: ${restricted} (Karpenter's NodePool CRD refuses it)`, {
      context: { field: `${path}.key` },
    });
  const operator = requiredString(requirement.operator, `${path}.operator`);
  if (!NODE_POOL_OPERATORS.has(operator))
    throw new MalformedInputError(
      `${path}.operator: expected one of ${[...NODE_POOL_OPERATORS].join(', ')}, got ${previewInput(operator)}`,
      { context: { field: `${path}.operator` } },
    );
  const values = stringList(requirement.values, `${path}.values`);
  optionalInteger(requirement.minValues, `${path}.minValues`);
  const bounded = operator === 'Gt' || operator === 'Lt' || operator === 'Gte' || operator === 'Lte';
  if (operator === 'In' && values.length === 0)
    throw new MalformedInputError(`${path}.values: In needs at least one value`, {
      context: { field: `${path}.values` },
    });
  if (bounded && (values.length !== 1 || !NON_NEGATIVE_INTEGER.test(values[0]!)))
    throw new MalformedInputError(`${path}.values: ${operator} needs exactly one non-negative integer`, {
      context: { field: `${path}.values` },
    });
  return { key, operator, values };
}

function readyCondition(status: JsonObject | undefined): { ready: boolean | undefined; reason: string } {
  for (const [index, condition] of objectList(status?.conditions, 'status.conditions').entries()) {
    const at = `status.conditions[${index}]`;
    if (optionalString(condition.type, `${at}.type`) !== 'Ready') continue;
    const state = optionalString(condition.status, `${at}.status`);
    const reason =
      optionalString(condition.message, `${at}.message`) || optionalString(condition.reason, `${at}.reason`);
    return { ready: state === 'True' ? true : state === 'False' ? false : undefined, reason };
  }
  return { ready: undefined, reason: '' };
}

// long function: one NodePool's fields, each read with its path in the order the API lists them.
function readNodePool(object: JsonObject): NodePool {
  const apiVersion = optionalString(object.apiVersion, 'apiVersion');
  if (apiVersion !== NODE_POOL_API_VERSION)
    throw new MalformedInputError(`apiVersion: expected ${NODE_POOL_API_VERSION}, got ${previewInput(apiVersion)}`, {
      context: { field: 'apiVersion' },
    });
  const metadata = optionalObject(object.metadata, 'metadata');
  const spec = optionalObject(object.spec, 'spec');
  const template = optionalObject(spec?.template, 'spec.template');
  const templateMetadata = optionalObject(template?.metadata, 'spec.template.metadata');
  const templateSpec = optionalObject(template?.spec, 'spec.template.spec');
  const reference = optionalObject(templateSpec?.nodeClassRef, 'spec.template.spec.nodeClassRef');
  if (reference === undefined)
    throw new MalformedInputError('spec.template.spec.nodeClassRef: required, and missing', {
      context: { field: 'spec.template.spec.nodeClassRef' },
    });
  const replicas = spec?.replicas;
  const status = optionalObject(object.status, 'status');
  const { ready, reason } = readyCondition(status);
  const labels = stringMap(templateMetadata?.labels, 'spec.template.metadata.labels');
  for (const key of Object.keys(labels)) {
    const restricted = nodePoolLabelProblem(key);
    const at = memberPath('spec.template.metadata.labels', key);
    if (restricted !== undefined)
      throw new MalformedInputError(`${at}: ${restricted} (Karpenter's NodePool CRD refuses it)`, {
        context: { field: at },
      });
  }
  return {
    name: requiredString(metadata?.name, 'metadata.name'),
    labels,
    requirements: objectList(templateSpec?.requirements, 'spec.template.spec.requirements').map((requirement, index) =>
      readRequirement(requirement, `spec.template.spec.requirements[${index}]`),
    ),
    taints: readTaints(templateSpec?.taints, 'spec.template.spec.taints'),
    nodeClassRef: {
      group: requiredString(reference.group, 'spec.template.spec.nodeClassRef.group'),
      kind: requiredString(reference.kind, 'spec.template.spec.nodeClassRef.kind'),
      name: requiredString(reference.name, 'spec.template.spec.nodeClassRef.name'),
    },
    weight: optionalInteger(spec?.weight, 'spec.weight'),
    replicas: isRawInteger(replicas) ? Number(replicas.rawJSON) : optionalInteger(replicas, 'spec.replicas'),
    limits: quantities(spec?.limits, 'spec.limits'),
    resources: quantities(status?.resources, 'status.resources'),
    ready,
    notReadyReason: ready === false ? reason : '',
    deleting: optionalString(metadata?.deletionTimestamp, 'metadata.deletionTimestamp') !== '',
  };
}

/** "Node ip-10-0-1-5" or "NodePool general", for messages; never throws. */
function objectName(kind: string, object: JsonObject): string {
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  return typeof metadata.name === 'string' && metadata.name !== '' ? `${kind} ${metadata.name}` : kind;
}

const LIST_KINDS = new Set(['List', 'NodeList', 'NodePoolList']);

/**
 * Reads the Nodes and NodePools of parsed documents (`source` names them in messages: a file path). A List, NodeList
 * or NodePoolList is read item by item; an object of another kind is skipped and listed. Throws one MalformedInputError
 * listing every malformed object (context.issues), each as "<source>: document 2, items[3] (Node x): spec.taints[0].effect: …".
 */
function readCapacityObjects(documents: readonly unknown[], source: string): CapacityObjects {
  const nodes: CapacityNode[] = [];
  const nodePools: NodePool[] = [];
  const skipped: SkippedObject[] = [];
  const issues = new IssueList(MAX_ISSUES);

  const visit = (value: unknown, where: string): void => {
    if (!isJsonObject(value) || isRawInteger(value)) {
      issues.add(where, `${where}: expected a Kubernetes object, got ${previewInput(value)}`);
      return;
    }
    const kind = typeof value.kind === 'string' ? value.kind : '';
    if (LIST_KINDS.has(kind)) {
      if (!Array.isArray(value.items)) {
        issues.add(
          `${where}.items`,
          `${where} (${kind || 'a list'}): items: expected a list, got ${previewInput(value.items)}`,
        );
        return;
      }
      value.items.forEach((item: unknown, index: number) => visit(item, `${where}, items[${index}]`));
      return;
    }
    if (kind !== 'Node' && kind !== 'NodePool') {
      if (kind === '')
        issues.add(where, `${where}: the object has no kind; expected a Node, a NodePool or a List of them`);
      else skipped.push({ where, kind, name: objectName(kind, value).slice(kind.length + 1) });
      return;
    }
    try {
      if (kind === 'Node') nodes.push(readNode(value));
      else nodePools.push(readNodePool(value));
    } catch (error) {
      if (!(error instanceof MalformedInputError)) throw error;
      const field = typeof error.context.field === 'string' ? error.context.field : '';
      issues.add(field, `${where} (${objectName(kind, value)}): ${error.message}`);
    }
  };

  documents.forEach((document, index) => visit(document, `${source}: document ${index + 1}`));
  if (issues.count > 0) {
    const reported = issues.reported();
    throw new MalformedInputError(reported.map((issue) => issue.reason).join('\n'), {
      context: { source, issues: reported },
    });
  }
  return { nodes, nodePools, skipped };
}

export { readCapacityObjects };
export type { CapacityObjects, SkippedObject };
