/** infra/rbac-rollout.yaml: the optional access `podmutation rollout --kubeconfig` needs, and no more. */
import { describe, expect, it } from 'vitest';
import { infraManifests } from '../support/rbac.ts';

const manifests = infraManifests('rbac-rollout.yaml');

/** Every verb granted per group:resource. */
function grants(): Record<string, string[]> {
  const granted: Record<string, string[]> = {};
  for (const rule of manifests[0]!.rules ?? []) {
    for (const group of rule.apiGroups)
      for (const resource of rule.resources) (granted[`${group}:${resource}`] ??= []).push(...rule.verbs);
  }
  return granted;
}

describe('infra/rbac-rollout.yaml', () => {
  it('holds one ClusterRole and its binding for people', () => {
    expect(manifests.map(({ kind, metadata }) => `${kind}/${metadata.name}`)).toEqual([
      'ClusterRole/podmutation-rollout',
      'ClusterRoleBinding/podmutation-rollout',
    ]);
  });

  it('lets the rollout read what the report reads and the budgets, patch the restartable workloads and delete Pods, and nothing else', () => {
    const read = ['get', 'list', 'watch'];
    expect(grants()).toEqual({
      'agent.cloudpilot.ai:podmutations': ['get', 'list'],
      ':pods': [...read, 'delete'],
      'apps:replicasets': read,
      'apps:deployments': [...read, 'patch'],
      'apps:statefulsets': [...read, 'patch'],
      'apps:daemonsets': [...read, 'patch'],
      'batch:jobs': read,
      'batch:cronjobs': read,
      'argoproj.io:rollouts': [...read, 'patch'],
      'policy:poddisruptionbudgets': read,
    });
  });

  it('grants no create, update or eviction, and no wildcard', () => {
    const verbs = Object.values(grants()).flat();
    expect(verbs.filter((verb) => ['create', 'update', '*'].includes(verb))).toEqual([]);
    expect(Object.keys(grants()).filter((resource) => resource.includes('eviction') || resource.includes('*'))).toEqual(
      [],
    );
  });

  it('binds the ClusterRole to the placeholder group podmutation-rollout', () => {
    expect(manifests[1]).toMatchObject({
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'podmutation-rollout' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'podmutation-rollout' }],
    });
  });
});
