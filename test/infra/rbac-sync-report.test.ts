/**
 * infra/rbac-sync-report.yaml: the read access of the sync's migration report (reportIntervalMinutes), apart from the
 * report's own, so that granting people the report never widens the sync's access.
 */
import { describe, expect, it } from 'vitest';
import { grantsOf, infraManifests, namedManifest } from '../support/rbac.ts';

const manifests = infraManifests('rbac-sync-report.yaml');
const report = infraManifests('rbac-report.yaml');
const sync = infraManifests('rbac.yaml');
const ACCESS = 'podmutation.agent.cloudpilot.ai/access';

describe('infra/rbac-sync-report.yaml', () => {
  it('holds its ClusterRole and one binding per access mode, labelled as infra/rbac.yaml labels them', () => {
    expect(
      manifests.map(({ kind, metadata }) => `${kind}/${metadata.name} ${metadata.labels?.[ACCESS] ?? ''}`),
    ).toEqual([
      'ClusterRole/podmutation-sync-report ',
      'ClusterRoleBinding/podmutation-sync-report eks-access-entry',
      'ClusterRoleBinding/podmutation-sync-report-serviceaccount kubeconfig',
    ]);
    expect(namedManifest(manifests, 'ClusterRoleBinding', 'podmutation-sync-report').subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'podmutation-sync' },
    ]);
    expect(namedManifest(manifests, 'ClusterRoleBinding', 'podmutation-sync-report-serviceaccount').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'podmutation-sync', namespace: 'podmutation-system' },
    ]);
  });

  it('reads what report -A reads, less the PodMutations, PodPlacements, Nodes and NodePools infra/rbac.yaml grants the sync already', () => {
    const reportReads = {
      ...grantsOf(namedManifest(report, 'ClusterRole', 'podmutation-report')),
      ...grantsOf(namedManifest(report, 'ClusterRole', 'podmutation-report-cluster-scoped')),
    };
    const grantedBySync = [
      'agent.cloudpilot.ai:podmutations',
      'agent.cloudpilot.ai:podplacements',
      ':nodes',
      'karpenter.sh:nodepools',
    ];
    for (const resource of grantedBySync) delete reportReads[resource];

    expect(grantsOf(namedManifest(manifests, 'ClusterRole', 'podmutation-sync-report'))).toEqual(reportReads);
    const syncGrants = grantsOf(namedManifest(sync, 'ClusterRole', 'podmutation-sync'));
    for (const resource of grantedBySync) expect(syncGrants).toHaveProperty([resource]);
  });

  it('is the only file that binds anything to the sync besides infra/rbac.yaml', () => {
    const bindsTheSync = (file: string) =>
      infraManifests(file).some((manifest) =>
        (manifest.subjects ?? []).some((subject) => JSON.stringify(subject).includes('podmutation-sync')),
      );
    expect(
      ['rbac-report.yaml', 'rbac-report-namespace.yaml', 'rbac-rollout.yaml', 'rbac-rollout-namespace.yaml'].filter(
        bindsTheSync,
      ),
    ).toEqual([]);
    expect(bindsTheSync('rbac-sync-report.yaml')).toBe(true);
  });

  it('grants no write and no wildcard', () => {
    expect(new Set(Object.values(grantsOf(manifests[0]!)).flat())).toEqual(new Set(['get', 'list']));
    expect(JSON.stringify(manifests)).not.toContain('"*"');
  });
});
