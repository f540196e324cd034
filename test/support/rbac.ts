/** The RBAC manifests of infra/, read as the tests of each read them. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

/** A ClusterRole or binding of an infra/ manifest, as far as the tests read it. */
export interface RbacManifest {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly rules?: readonly {
    readonly apiGroups: readonly string[];
    readonly resources: readonly string[];
    readonly verbs: readonly string[];
    readonly resourceNames?: readonly string[];
  }[];
  readonly roleRef?: unknown;
  readonly subjects?: readonly unknown[];
}

/** Every document of infra/FILE. */
export function infraManifests(file: string): RbacManifest[] {
  return parseAllDocuments(readFileSync(fileURLToPath(new URL(`../../infra/${file}`, import.meta.url)), 'utf8')).map(
    (document) => document.toJS() as RbacManifest,
  );
}

/** The manifest of that kind and name; throws when there is none. */
export function namedManifest(manifests: readonly RbacManifest[], kind: string, name: string): RbacManifest {
  const found = manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name}`);
  return found;
}

/** Every verb a role grants, per `group:resource` (the core group is ""). */
export function grantsOf(role: RbacManifest): Record<string, string[]> {
  const granted: Record<string, string[]> = {};
  for (const rule of role.rules ?? []) {
    for (const group of rule.apiGroups)
      for (const resource of rule.resources) (granted[`${group}:${resource}`] ??= []).push(...rule.verbs);
  }
  return granted;
}
