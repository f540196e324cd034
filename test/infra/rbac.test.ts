import { describe, expect, it } from 'vitest';
import { loadCrd, loadInfraManifest } from './corpus.ts';

interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly rules?: readonly {
    readonly apiGroups: readonly string[];
    readonly resources: readonly string[];
    readonly verbs: readonly string[];
    readonly resourceNames?: readonly string[];
  }[];
  readonly roleRef?: { readonly apiGroup: string; readonly kind: string; readonly name: string };
  readonly subjects?: readonly Record<string, string>[];
}

const manifests = loadInfraManifest('rbac.yaml') as Manifest[];
type NamedCrd = ReturnType<typeof loadCrd> & { readonly spec: { readonly names: { readonly plural: string } } };
const crd = loadCrd() as NamedCrd;
const placementCrd = loadCrd('podplacement-crd.yaml') as NamedCrd;

function find(kind: string, name: string): Manifest {
  const found = manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
  if (found === undefined) throw new Error(`infra/rbac.yaml has no ${kind} ${name}`);
  return found;
}

describe('infra/rbac.yaml', () => {
  it('holds the namespace, the ClusterRole, the ServiceAccount and two bindings', () => {
    expect(manifests.map(({ kind, metadata }) => `${kind}/${metadata.name}`)).toEqual([
      'Namespace/podmutation-system',
      'ClusterRole/podmutation-sync',
      'ClusterRoleBinding/podmutation-sync',
      'ServiceAccount/podmutation-sync',
      'ClusterRoleBinding/podmutation-sync-serviceaccount',
    ]);
  });

  it('lets the sync read PodMutations and PodPlacements, patch their status, get the kube-system namespace and list Nodes and NodePools, and nothing else', () => {
    expect(find('ClusterRole', 'podmutation-sync').rules).toEqual([
      {
        apiGroups: ['agent.cloudpilot.ai'],
        resources: ['podmutations', 'podplacements'],
        verbs: ['get', 'list', 'watch'],
      },
      {
        apiGroups: ['agent.cloudpilot.ai'],
        resources: ['podmutations/status', 'podplacements/status'],
        verbs: ['patch'],
      },
      { apiGroups: [''], resources: ['namespaces'], resourceNames: ['kube-system'], verbs: ['get'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['list'] },
      { apiGroups: ['karpenter.sh'], resources: ['nodepools'], verbs: ['list'] },
    ]);
  });

  it("names the CRDs' group and plurals in the ClusterRole", () => {
    const resources = find('ClusterRole', 'podmutation-sync')
      .rules!.filter((rule) => rule.apiGroups[0] === crd.spec.group)
      .flatMap((rule) => rule.resources.map((resource) => `${rule.apiGroups[0]}:${resource}`));
    const [mutations, placements] = [crd, placementCrd].map((each) => `${each.spec.group}:${each.spec.names.plural}`);
    expect(resources).toEqual([mutations, placements, `${mutations}/status`, `${placements}/status`]);
  });

  it('uses no wildcard anywhere', () => {
    expect(JSON.stringify(manifests)).not.toContain('"*"');
  });

  it('binds the ClusterRole to the Kubernetes group podmutation-sync for the EKS access entry', () => {
    expect(find('ClusterRoleBinding', 'podmutation-sync')).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'podmutation-sync' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'podmutation-sync' }],
    });
  });

  it('binds the ClusterRole to the ServiceAccount podmutation-sync in podmutation-system for kubeconfig mode', () => {
    expect(find('ServiceAccount', 'podmutation-sync').metadata.namespace).toBe('podmutation-system');
    expect(find('ClusterRoleBinding', 'podmutation-sync-serviceaccount')).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'podmutation-sync' },
      subjects: [{ kind: 'ServiceAccount', name: 'podmutation-sync', namespace: 'podmutation-system' }],
    });
  });
});
