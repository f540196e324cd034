/** infra/rbac-report.yaml: the optional, read-only access `podmutation report --kubeconfig` needs. */
import { describe, expect, it } from 'vitest';
import { infraManifests } from '../support/rbac.ts';

const manifests = infraManifests('rbac-report.yaml');

describe('infra/rbac-report.yaml', () => {
  it('holds one ClusterRole, its binding for people and its binding for the sync', () => {
    expect(manifests.map(({ kind, metadata }) => `${kind}/${metadata.name}`)).toEqual([
      'ClusterRole/podmutation-report',
      'ClusterRoleBinding/podmutation-report',
      'ClusterRoleBinding/podmutation-sync-report',
    ]);
  });

  it('binds the ClusterRole to the sync group and ServiceAccount of infra/rbac.yaml, for the progress report', () => {
    expect(manifests[2]).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'podmutation-report' },
      subjects: [
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'podmutation-sync' },
        { kind: 'ServiceAccount', name: 'podmutation-sync', namespace: 'podmutation-system' },
      ],
    });
  });

  it('lets the report get and list the rules, Pods and workloads, and nothing else', () => {
    expect(manifests[0]!.rules).toEqual([
      { apiGroups: ['agent.cloudpilot.ai'], resources: ['podmutations'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      {
        apiGroups: ['apps'],
        resources: ['replicasets', 'deployments', 'statefulsets', 'daemonsets'],
        verbs: ['get', 'list'],
      },
      { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: ['get', 'list'] },
      { apiGroups: ['argoproj.io'], resources: ['rollouts'], verbs: ['get', 'list'] },
    ]);
  });

  it('binds the ClusterRole to the placeholder group podmutation-report', () => {
    expect(manifests[1]).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'podmutation-report' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'podmutation-report' }],
    });
  });

  it('uses no wildcard anywhere', () => {
    expect(JSON.stringify(manifests)).not.toContain('"*"');
  });
});
