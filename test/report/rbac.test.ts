/**
 * infra/rbac-report.yaml and infra/rbac-report-namespace.yaml: the optional, read-only access `podmutation report
 * --kubeconfig` needs, per namespace or in every namespace. The real API server's answers are in
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

const manifests = infraManifests('rbac-report.yaml');
const perNamespace = infraManifests('rbac-report-namespace.yaml');
const ALL_NAMESPACES = 'podmutation.agent.cloudpilot.ai/scope';
const GROUP = groupSubjects('podmutation-report');

describe('infra/rbac-report.yaml', () => {
  it('holds the namespaced ClusterRole, the cluster-scoped one and its binding, and the every-namespace binding', () => {
    expect(manifests.map(({ kind, metadata }) => `${kind}/${metadata.name}`)).toEqual([
      'ClusterRole/podmutation-report',
      'ClusterRole/podmutation-report-cluster-scoped',
      'ClusterRoleBinding/podmutation-report-cluster-scoped',
      'ClusterRoleBinding/podmutation-report',
    ]);
  });

  it('lets the report get and list, in the namespaces bound, the Pods and their workloads, and nothing else', () => {
    expect(grantsOf(namedManifest(manifests, 'ClusterRole', 'podmutation-report'))).toEqual({
      ':pods': READ,
      'apps:replicasets': READ,
      'apps:deployments': READ,
      'apps:statefulsets': READ,
      'apps:daemonsets': READ,
      'apps:controllerrevisions': READ,
      'batch:jobs': READ,
      'batch:cronjobs': READ,
      'argoproj.io:rollouts': READ,
    });
  });

  it('lets it read, in the whole cluster, only the cluster-scoped PodMutations and RuntimeClasses, and list the PodPlacements, Nodes and NodePools', () => {
    expectClusterScopedReads(manifests, 'podmutation-report-cluster-scoped', GROUP);
  });

  it('binds the namespaced reads in every namespace only in the binding the scope label marks', () => {
    const everyNamespace = manifests.filter((manifest) => manifest.metadata.labels?.[ALL_NAMESPACES] !== undefined);

    expect(everyNamespace).toEqual([namedManifest(manifests, 'ClusterRoleBinding', 'podmutation-report')]);
    expect(everyNamespace[0]).toMatchObject({
      metadata: { labels: { [ALL_NAMESPACES]: 'all-namespaces' } },
      roleRef: { kind: 'ClusterRole', name: 'podmutation-report' },
      subjects: GROUP,
    });
  });

  it('grants no write and binds no one but the placeholder group, the sync least of all', () => {
    const verbs = manifests.flatMap((manifest) => Object.values(grantsOf(manifest)).flat());
    expect(new Set(verbs)).toEqual(new Set(READ));
    const subjects = [...manifests, ...perNamespace].flatMap((manifest) => manifest.subjects ?? []);
    expect(subjects).toEqual([...GROUP, ...GROUP, ...GROUP]);
  });

  it('uses no wildcard anywhere', () => {
    expect(JSON.stringify([...manifests, ...perNamespace])).not.toContain('"*"');
  });
});

describe('infra/rbac-report-namespace.yaml', () => {
  it('is one RoleBinding of the namespaced ClusterRole, without a namespace, so that kubectl apply -n places it', () => {
    expectNamespaceRoleBinding(perNamespace, 'podmutation-report', GROUP);
  });
});
