/** RuntimeClasses (node.k8s.io/v1) read from untrusted JSON: the name and the scheduling the RuntimeClass admission plugin merges into Pods. */
import type { Toleration } from '../scheduling/index.ts';
import {
  isJsonObject,
  objectList,
  optionalInt64,
  optionalObject,
  optionalString,
  stringMap,
  typeMismatch,
} from '../json/index.ts';

/** A RuntimeClass's scheduling (spec.scheduling is top-level in node.k8s.io/v1): absent fields are empty. */
interface RuntimeClassScheduling {
  readonly name: string;
  /** False when the RuntimeClass has no scheduling: the plugin then leaves a Pod's scheduling alone. */
  readonly scheduling: boolean;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
}

/** True for a node.k8s.io RuntimeClass of any version (a list item or a manifest); other objects are not. */
function isRuntimeClass(value: unknown): boolean {
  if (!isJsonObject(value) || value.kind !== 'RuntimeClass') return false;
  const { apiVersion } = value;
  return apiVersion === undefined || (typeof apiVersion === 'string' && apiVersion.startsWith('node.k8s.io/'));
}

/** The tolerations at `path`, each field checked as a core/v1 Toleration's. */
function tolerationsAt(value: unknown, path: string): readonly Toleration[] {
  return objectList(value, path).map((item, index) => {
    const itemPath = `${path}[${index}]`;
    for (const field of ['key', 'operator', 'value', 'effect'] as const)
      optionalString(item[field], `${itemPath}.${field}`);
    optionalInt64(item.tolerationSeconds, `${itemPath}.tolerationSeconds`);
    return item;
  });
}

/** Reads a RuntimeClass; throws MalformedInputError naming the field of one that is not well formed. */
function readRuntimeClass(value: unknown, path: string): RuntimeClassScheduling {
  if (!isJsonObject(value)) throw typeMismatch(path, 'an object (a RuntimeClass)', value);
  const metadata = optionalObject(value.metadata, `${path}.metadata`);
  const name = optionalString(metadata?.name, `${path}.metadata.name`);
  if (name === '') throw typeMismatch(`${path}.metadata.name`, 'the name of the RuntimeClass', undefined);
  const scheduling = optionalObject(value.scheduling, `${path}.scheduling`);
  return {
    name,
    scheduling: scheduling !== undefined,
    nodeSelector: stringMap(scheduling?.nodeSelector, `${path}.scheduling.nodeSelector`),
    tolerations: tolerationsAt(scheduling?.tolerations, `${path}.scheduling.tolerations`),
  };
}

export { isRuntimeClass, readRuntimeClass, tolerationsAt };
export type { RuntimeClassScheduling };
