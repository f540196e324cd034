/**
 * infra/rbac-rollout.yaml and infra/rbac-rollout-namespace.yaml: the optional access `podmutation rollout
 * --kubeconfig` needs, and no more, per namespace or in every namespace. The real API server's answers are in
 * test/real-cluster/rbac.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  expectClusterScopedReads,
  expectNamespaceRoleBinding,
  grantsOf,
  groupSubjects,
  infraManifests,
  namedManifest,
  READ,
} from '../support/rbac.ts';

const manifests = infraManifests('rbac-rollout.yaml');
const perNamespace = infraManifests('rbac-rollout-namespace.yaml');
const report = infraManifests('rbac-report.yaml');
const GROUP = groupSubjects('podmutation-rollout');

describe('infra/rbac-rollout.yaml', () => {
  it('holds the namespaced ClusterRole, the cluster-scoped one and its binding, and the every-namespace binding', () => {
    expect(manifests.map(({ kind, metadata }) => `${kind}/${metadata.name}`)).toEqual([
      'ClusterRole/podmutation-rollout',
      'ClusterRole/podmutation-rollout-cluster-scoped',
      'ClusterRoleBinding/podmutation-rollout-cluster-scoped',
      'ClusterRoleBinding/podmutation-rollout',
    ]);
  });

  it('lets the rollout read what the report reads and the budgets, patch the restartable workloads and evict Pods, and nothing else', () => {
    expect(grantsOf(namedManifest(manifests, 'ClusterRole', 'podmutation-rollout'))).toEqual({
      ':pods': READ,
      ':pods/eviction': ['create'],
      'apps:replicasets': READ,
      'apps:controllerrevisions': READ,
      'apps:deployments': [...READ, 'patch'],
      'apps:statefulsets': [...READ, 'patch'],
      'apps:daemonsets': [...READ, 'patch'],
      'batch:jobs': READ,
      'batch:cronjobs': READ,
      'argoproj.io:rollouts': [...READ, 'patch'],
      'policy:poddisruptionbudgets': READ,
    });
  });

  it('reads at least what the report reads, in the namespaces and in the whole cluster', () => {
    const reads = (role: Record<string, string[]>) =>
      Object.entries(role).flatMap(([resource, verbs]) =>
        verbs.filter((verb) => READ.includes(verb)).map((verb) => `${resource} ${verb}`),
      );
    for (const [rollout, reportRole] of [
      ['podmutation-rollout', 'podmutation-report'],
      ['podmutation-rollout-cluster-scoped', 'podmutation-report-cluster-scoped'],
    ] as const) {
      const granted = reads(grantsOf(namedManifest(manifests, 'ClusterRole', rollout)));
      expect(
        reads(grantsOf(namedManifest(report, 'ClusterRole', reportRole))).filter((read) => !granted.includes(read)),
      ).toEqual([]);
    }
  });

  it('reads only the cluster-scoped PodMutations and RuntimeClasses, and lists the PodPlacements, Nodes and NodePools, in the whole cluster', () => {
    expectClusterScopedReads(manifests, 'podmutation-rollout-cluster-scoped', GROUP);
  });

  it('grants the namespaced access in every namespace only in the binding the scope label marks', () => {
    const everyNamespace = manifests.filter(
      (manifest) => manifest.metadata.labels?.['podmutation.agent.cloudpilot.ai/scope'] === 'all-namespaces',
    );
    expect(everyNamespace.map(({ kind, metadata }) => `${kind}/${metadata.name}`)).toEqual([
      'ClusterRoleBinding/podmutation-rollout',
    ]);
    expect(everyNamespace[0]).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'podmutation-rollout' },
      subjects: GROUP,
    });
  });

  it('grants no delete, update or watch, no create but of evictions, and no wildcard', () => {
    const grants = manifests.flatMap((manifest) => Object.entries(grantsOf(manifest)));
    const verbs = grants.flatMap(([, granted]) => granted);
    expect(verbs.filter((verb) => ['delete', 'deletecollection', 'update', 'watch', '*'].includes(verb))).toEqual([]);
    expect(grants.filter(([, granted]) => granted.includes('create')).map(([resource]) => resource)).toEqual([
      ':pods/eviction',
    ]);
    expect(grants.map(([resource]) => resource).filter((resource) => resource.includes('*'))).toEqual([]);
  });
});

describe('infra/rbac-rollout-namespace.yaml', () => {
  it('is one RoleBinding of the namespaced ClusterRole, without a namespace, so that kubectl apply -n places it', () => {
    expectNamespaceRoleBinding(perNamespace, 'podmutation-rollout', GROUP);
  });
});
