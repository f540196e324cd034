/**
 * The README's migration with a misspelt target pool (example.com/node-pool In [mergd]) against a real control plane:
 * a Deployment admitted before the rule existed runs on the legacy Nodes; `validate --capacity` over `kubectl get
 * nodes,nodepools -o yaml` warns that what the rule adds fits no Node and no NodePool; `report` (the built binary, the capacity read
 * from the cluster: its Nodes and a NodePool of Karpenter's CRD) says its recreated Pods fit nowhere, `rollout`
 * refuses to restart it (exit 1, state unschedulable, its template unchanged), and with the rule fixed `rollout`
 * restarts it through the webhook onto the merged Nodes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { nodePoolObject } from '../capacity/support.ts';
import type { Json } from './api.ts';
import { installNodePoolCrd } from './karpenter.ts';
import { kubectlObjects, kubectlOk, untilRolledOut } from './kubectl.ts';
import { TEST_NODES } from './nodes.ts';
import { livePods } from './pods.ts';
import { reportJson, reportRun, rolloutJson } from './podmutation.ts';
import { legacyTemplate, poolTerm } from './pools.ts';
import { runPodmutation } from '../support/cli.ts';
import { useControlPlane } from './use-control-plane.ts';
import { ruleFolder, serveAndRegister, type ServedWebhook } from './webhook.ts';
import { type WorkloadRecord } from '../../lib/rollout/types.ts';

const cluster = useControlPlane();

const NAMESPACE = 'misspelt';
const RULE = 'merge-legacy-pool';
const DEPLOYMENT_PATH = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/checkout`;

/** The README's migration of the namespace's Deployments from the legacy pool to `target`. */
function migration(target: string): { name: string; spec: Json } {
  return {
    name: RULE,
    spec: {
      enable: true,
      workloadSelector: {
        namespaces: [NAMESPACE],
        kinds: ['Deployment'],
        nodeAffinityMatch: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm('legacy')] },
        },
      },
      mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
      mutationAdd: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm(target)] } },
      },
    },
  };
}

type Deployment = {
  metadata: { generation: number; annotations?: Record<string, string> };
  spec: { template: { metadata?: { annotations?: Record<string, string> } } };
};

describe('a migration to a misspelt pool, reported and rolled out', () => {
  let misspelt: string;
  let fixed: string;

  beforeAll(async () => {
    const plane = cluster();
    misspelt = await ruleFolder(plane, [migration('mergd')]);
    fixed = await ruleFolder(plane, [migration('merged')]);
    // Karpenter's NodePool CRD and a NodePool that defines no example.com/node-pool: it takes no Pod that requires one.
    await installNodePoolCrd(plane);
    await kubectlObjects(plane, 'create', [
      nodePoolObject('general', {
        requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
      }),
    ]);
    await plane.ensureNamespace(NAMESPACE);
    // Admitted before any webhook exists: its Pods run on the legacy Nodes.
    await kubectlObjects(plane, 'create', [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'checkout', namespace: NAMESPACE },
        spec: { replicas: 2, selector: { matchLabels: { app: 'checkout' } }, template: legacyTemplate('checkout') },
      },
    ]);
    await untilRolledOut(plane, NAMESPACE, 'deployment/checkout');
  }, 20 * 60_000);

  it('runs the Deployment on the legacy Nodes before any rule', async () => {
    const pods = await livePods(cluster(), NAMESPACE, 'app=checkout');

    expect(pods.map((pod) => pod.spec.nodeName?.replace(/-\d+$/, ''))).toEqual(['legacy', 'legacy']);
  });

  it("warns from validate --capacity, over the cluster's Nodes and NodePools as kubectl prints them", async () => {
    const plane = cluster();
    const capacity = join(plane.dir, 'misspelt-capacity.yaml');
    await writeFile(capacity, await kubectlOk(plane, ['get', 'nodes,nodepools', '-o', 'yaml']));

    const wrong = await runPodmutation(['validate', misspelt, '--capacity', capacity]);
    const right = await runPodmutation(['validate', fixed, '--capacity', capacity]);

    expect(wrong.code, wrong.stderr).toBe(0);
    expect(wrong.stdout).toContain(
      `PodMutation "${RULE}": spec.mutationAdd: by node labels, what the rule adds fits nowhere: no Node and no NodePool takes it; closest: NodePool general`,
    );
    expect(right.code, right.stderr).toBe(0);
    expect(right.stdout).not.toContain('warning');
  });

  it('reports that its recreated Pods would fit nowhere, naming the closest Nodes and NodePool', async () => {
    const { run, result } = await reportJson(cluster(), ['--rules', misspelt, '-n', NAMESPACE]);

    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toBe('');
    const checkout = result.workloads.find((item) => item.name === 'checkout');
    expect(checkout).toMatchObject({ kind: 'Deployment', pending: 2, fit: { kind: 'nowhere' } });
    expect(checkout?.fit?.reason).toMatch(/^fits nowhere: no Node and no NodePool takes it; closest: /);
    expect(checkout?.fit?.reason).toContain('example.com/node-pool');
    expect(result.rules).toEqual([expect.objectContaining({ name: RULE, matched: 2, pending: 2, unschedulable: 2 })]);
  });

  it('prints the verdict in the table, with where the capacity came from and what a fit leaves out', async () => {
    const run = await reportRun(cluster(), ['--rules', misspelt, '-n', NAMESPACE]);

    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/^misspelt +Deployment +checkout +2 +0 +2 +0 +merge-legacy-pool .* fits nowhere: /m);
    expect(run.stdout).toContain(
      `\ncapacity: ${TEST_NODES.length} Nodes and 1 NodePool read from the cluster\nnote: where a Pod fits is `,
    );
  });

  it('refuses to restart it: unschedulable, exit 1, and its template unchanged', async () => {
    const plane = cluster();
    const before = await plane.admin.json<Deployment>('GET', DEPLOYMENT_PATH);

    const { run, records } = await rolloutJson(plane, ['--rules', misspelt, '-n', NAMESPACE]);

    expect(run.code, run.stderr).toBe(1);
    const checkout = records.filter((record): record is WorkloadRecord => record.type === 'workload');
    expect(checkout.map(({ name, state, wave }) => ({ name, state, wave }))).toEqual([
      { name: 'checkout', state: 'unschedulable', wave: 0 },
    ]);
    expect(checkout[0]?.reason).toMatch(/^fits nowhere: /);
    expect(records.at(-1)).toMatchObject({ type: 'verdict', pending: 2, unschedulable: 1, exit: 1 });
    const after = await plane.admin.json<Deployment>('GET', DEPLOYMENT_PATH);
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(after.spec.template).toEqual(before.spec.template);
  });

  describe('with the rule fixed and served by the webhook', () => {
    let webhook: ServedWebhook;

    beforeAll(async () => {
      webhook = await serveAndRegister(cluster(), { rules: [fixed] });
    });
    afterAll(async () => webhook?.stop());

    it('restarts it onto the merged Nodes, and the report reads 0 pending', async () => {
      const plane = cluster();

      const { run, records } = await rolloutJson(plane, ['--rules', fixed, '-n', NAMESPACE, '--timeout', '90s']);

      expect(run.code, run.stderr).toBe(0);
      const states = records.flatMap((record) => (record.type === 'workload' ? [record.state] : []));
      expect([states[0], states.at(-1)]).toEqual(['planned', 'done']);
      expect(records.at(-1)).toMatchObject({ type: 'verdict', pending: 0, unschedulable: 0, exit: 0 });
      const pods = await livePods(plane, NAMESPACE, 'app=checkout');
      expect(pods.map((pod) => pod.spec.nodeName)).toEqual([
        expect.stringMatching(/^merged-/),
        expect.stringMatching(/^merged-/),
      ]);
    });
  });
});
