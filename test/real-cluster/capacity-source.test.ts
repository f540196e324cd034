/**
 * lib/cluster's createCapacitySource against the real API server, as the sync's identity of infra/rbac.yaml: it lists
 * the Nodes, a cluster without Karpenter's NodePool CRD has no NodePools, and once the CRD is applied the NodePools
 * created through it are read, so that a misspelt target pool fits nowhere. An identity without the grant is refused
 * with the file to apply.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import { createCapacitySource } from '../../lib/cluster/index.ts';
import { nodePoolObject, placementOf } from '../capacity/support.ts';
import type { ControlPlane } from './control-plane.ts';
import { installNodePoolCrd } from './karpenter.ts';
import { kubectlObjects, kubectlOk, untilAllowed } from './kubectl.ts';
import { TEST_NODES } from './nodes.ts';
import { useControlPlane } from './use-control-plane.ts';

const cluster = useControlPlane();

const SYNC = 'system:serviceaccount:podmutation-system:podmutation-sync';
const OUTSIDER = 'capacity-outsider';

let syncKubeconfig: string;

/** A kubeconfig with a fresh token of ServiceAccount podmutation-system/NAME. */
async function tokenOf(plane: ControlPlane, name: string): Promise<string> {
  const token = (await kubectlOk(plane, ['create', 'token', name, '-n', 'podmutation-system'])).trim();
  return plane.tokenKubeconfig(name, token);
}

/** The capacity as the identity of this kubeconfig reads it. */
function readAs(kubeconfig: string) {
  return createCapacitySource({ mode: 'kubeconfigFile', path: kubeconfig }, { pageSize: 2 }).read();
}

beforeAll(async () => {
  const plane = cluster();
  // Kubeconfig mode of docs/operations.md: the ServiceAccount and its binding, not the EKS group's.
  await kubectlOk(plane, [
    'apply',
    '-f',
    new URL('../../infra/rbac.yaml', import.meta.url).pathname,
    '-l',
    'podmutation.agent.cloudpilot.ai/access!=eks-access-entry',
  ]);
  await kubectlObjects(plane, 'apply', [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: OUTSIDER, namespace: 'podmutation-system' } },
  ]);
  await untilAllowed(plane, SYNC, ['list', 'nodes', `--as=${SYNC}`]);
  syncKubeconfig = await tokenOf(plane, 'podmutation-sync');
}, 120_000);

describe('the capacity read from the real API server', () => {
  it('lists every Node, page by page, and no NodePool where the CRD is absent', async () => {
    const read = await readAs(syncKubeconfig);

    expect(read.nodes.map((node) => node.name).sort()).toEqual(TEST_NODES.map((node) => node.name).sort());
    expect(read.nodePools).toEqual([]);
  });

  it('refuses an identity without the grant, naming the file to apply', async () => {
    const outsider = await tokenOf(cluster(), OUTSIDER);

    const read = readAs(outsider);

    // Nodes and NodePools are listed together; whichever refusal comes first names the same file.
    await expect(read).rejects.toHaveProperty('context.reason', 'forbidden');
    await expect(read).rejects.toThrow(/list (nodes|nodepools) .*apply infra\/rbac\.yaml \(the sync\)/);
  });

  it(
    "reads the NodePools of Karpenter's CRD once applied, so that a misspelt pool fits nowhere",
    async () => {
      const plane = cluster();
      await installNodePoolCrd(plane);
      await kubectlObjects(plane, 'create', [
        nodePoolObject('general', {
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        }),
      ]);

      const capacity = Capacity.of(await readAs(syncKubeconfig));

      expect(capacity.judge(placementOf({ nodeSelector: { 'karpenter.sh/nodepool': 'general' } })).kind).toBe('fits');
      const misspelt = capacity.judge(placementOf({ nodeSelector: { 'karpenter.sh/nodepool': 'genral' } }));
      expect(misspelt.kind).toBe('nowhere');
    },
    20 * 60_000,
  );
});
