/** The RBAC manifests of infra/, read as the tests of each read them. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
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

/** The verbs of a read grant. */
export const READ = ['get', 'list'];

/** The subjects of a binding to the placeholder group an optional access file binds (report's, rollout's). */
export function groupSubjects(group: string): unknown[] {
  return [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }];
}

/** The verbs of the capacity's grant: Nodes and NodePools are listed, never fetched one by one or watched. */
export const LIST = ['list'];

/**
 * Asserts: ClusterRole `role` reads only the cluster-scoped PodMutations and RuntimeClasses, lists only the
 * PodPlacements, Nodes and NodePools, and binds `subjects`.
 */
export function expectClusterScopedReads(manifests: readonly RbacManifest[], role: string, subjects: unknown[]): void {
  expect(grantsOf(namedManifest(manifests, 'ClusterRole', role))).toEqual({
    'agent.cloudpilot.ai:podmutations': READ,
    'agent.cloudpilot.ai:podplacements': LIST,
    'node.k8s.io:runtimeclasses': READ,
    ':nodes': LIST,
    'karpenter.sh:nodepools': LIST,
  });
  expect(namedManifest(manifests, 'ClusterRoleBinding', role)).toMatchObject({
    roleRef: { kind: 'ClusterRole', name: role },
    subjects,
  });
}

/** Asserts that a per-namespace file is one RoleBinding of the ClusterRole `role`, without a namespace. */
export function expectNamespaceRoleBinding(
  perNamespace: readonly RbacManifest[],
  role: string,
  subjects: unknown[],
): void {
  expect(perNamespace).toEqual([
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: role, labels: { 'app.kubernetes.io/name': 'podmutation' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects,
    },
  ]);
}
