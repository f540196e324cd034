/** The report's fixture cluster: kubectl's JSON of test/fixtures/report/cluster.json plus checkout's Pods, admitted by the engine. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileRuleSet, reviewPod, type ManagedStep, type Pod, type RuleSet } from '../../lib/engine/index.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import { podFromWorkload, readWorkloadObject } from '../../lib/workloads/index.ts';
import {
  startFakeApiServer,
  writeKubeconfig,
  type FakeApiServer,
  type WorkloadObjectInput,
} from '../cluster/fake-api-server.ts';
import { podMutation } from '../support/builders.ts';
import { fixturePath, fixtureText } from '../support/fixtures.ts';

/** A List as `kubectl get … -o json` prints it. */
export interface KubectlList {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Record<string, unknown>;
  readonly items: Record<string, unknown>[];
}

/** The rule paths: the fixture's common rules and migrate-legacy-pool, as written or as changed after checkout rolled out. */
export function rulePaths(migrate: 'as-rolled-out' | 'changed' = 'as-rolled-out'): string[] {
  return [
    fixturePath('report/rules'),
    fixturePath(migrate === 'changed' ? 'report/migrate-legacy-pool-changed.yaml' : 'report/migrate-legacy-pool.yaml'),
  ];
}

/** The compiled rules of rulePaths. */
export async function fixtureRules(migrate: 'as-rolled-out' | 'changed' = 'as-rolled-out'): Promise<RuleSet> {
  return compileRuleSet((await loadRuleFiles(rulePaths(migrate))).rules);
}

/** The fixture's objects, parsed afresh (tests may change them). */
export function fixtureList(): KubectlList {
  return JSON.parse(fixtureText('report/cluster.json')) as KubectlList;
}

/** The spec of the rule that moves the fixture's StatefulSet ledger to the db pool. */
export const MOVE_LEDGER_SPEC = {
  enable: true,
  workloadSelector: { names: ['ledger'] },
  mutationAdd: { nodeSelector: { 'example.com/pool': 'db' } },
};

/** That rule as a PodMutation, as a rule file holds it. */
export const MOVE_LEDGER = podMutation('move-ledger', MOVE_LEDGER_SPEC);

/**
 * The list with its StatefulSet ledger given `updateStrategy` (none when undefined) and `status` over its own; the
 * list is changed and returned.
 */
export function ledgerWith(
  list: KubectlList,
  updateStrategy: unknown,
  status: Record<string, unknown> = {},
): KubectlList {
  const ledger = findItem(list, 'StatefulSet', 'ledger') as { spec: Record<string, unknown>; status?: unknown };
  ledger.spec =
    updateStrategy === undefined
      ? Object.fromEntries(Object.entries(ledger.spec).filter(([key]) => key !== 'updateStrategy'))
      : { ...ledger.spec, updateStrategy };
  ledger.status = { ...(ledger.status as Record<string, unknown> | undefined), ...status };
  return list;
}

/** The object of the list with that kind and name. */
export function findItem(list: KubectlList, kind: string, name: string): Record<string, unknown> {
  const found = list.items.find((item) => item.kind === kind && (item.metadata as { name: string }).name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} in the fixture`);
  return found;
}

// What the API server's DefaultTolerationSeconds plugin adds to every Pod before the webhooks run.
const DEFAULT_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

/**
 * checkout's running Pods as the cluster made them under `rules`: the Pod its ReplicaSet creates from the Deployment's
 * template, the API server's default tolerations, then the admission engine's result, named and scheduled.
 */
export function admittedCheckoutPods(
  list: KubectlList,
  rules: RuleSet,
  managedSteps: readonly ManagedStep[] = [],
  /** Admit the Pods as Diversity's counter numbers them (0, 1), as the webhook does. */
  numbered = false,
): Pod[] {
  const deployment = readWorkloadObject(findItem(list, 'Deployment', 'checkout'), 'checkout');
  const replicaSetUid = (findItem(list, 'ReplicaSet', 'checkout-7d9f8b6c5d').metadata as { uid: string }).uid;
  return ['h2k9d', 'r7x4m'].map((suffix, index) => {
    const created = podFromWorkload(deployment, { namespace: 'production', templateHash: '7d9f8b6c5d' });
    const incoming: Pod = {
      ...created,
      spec: { ...created.spec, tolerations: [...(created.spec?.tolerations ?? []), ...DEFAULT_TOLERATIONS] },
    };
    const admitted = reviewPod(
      {
        pod: incoming,
        namespace: 'production',
        ruleSet: rules,
        context: { requestUid: `admission-${suffix}`, ...(numbered ? { sequence: index } : {}) },
      },
      { managedSteps },
    ).pod;
    const metadata = admitted.metadata!;
    return {
      ...admitted,
      metadata: {
        ...metadata,
        name: `checkout-7d9f8b6c5d-${suffix}`,
        uid: `2b7c9d1e-3f4a-4b5c-8d6e-7f8a9b0c1d2${index}`,
        creationTimestamp: '2026-11-02T08:14:05Z',
        ownerReferences: metadata.ownerReferences!.map((owner) => ({ ...owner, uid: replicaSetUid })),
      },
      spec: { ...admitted.spec, nodeName: `ip-10-0-12-${20 + index}.eu-west-1.compute.internal` },
      status: { phase: 'Running' },
    };
  });
}

/** The fixture's List with checkout's Pods admitted under the rules as they were when checkout rolled out. */
export async function clusterList(): Promise<KubectlList> {
  const list = fixtureList();
  return {
    ...list,
    items: [...admittedCheckoutPods(list, await fixtureRules()), ...list.items] as Record<string, unknown>[],
  };
}

/** Writes a value as JSON (or text as it is) to a new temporary file and returns its path. */
export function writeTemporary(name: string, content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'podmutation-report-')), name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/**
 * The list's objects as the fake API server takes them: it gives every object a uid of its own, so the references
 * name their owners by name alone.
 */
export function serverObjects(list: KubectlList): WorkloadObjectInput[] {
  return list.items.map((item) => {
    const metadata = item.metadata as { ownerReferences?: Record<string, unknown>[] };
    const ownerReferences = metadata.ownerReferences?.map((owner) => ({ ...owner, uid: undefined }));
    return {
      ...item,
      metadata: { ...metadata, ...(ownerReferences === undefined ? {} : { ownerReferences }) },
    } as WorkloadObjectInput;
  });
}

/**
 * The fake API server holding the fixture cluster (clusterList, Argo Rollouts installed) and these Nodes and NodePools
 * (Karpenter's CRD installed), with a kubeconfig for it.
 */
export async function fixtureCluster(
  capacity: KubectlList,
): Promise<{ readonly server: FakeApiServer; readonly kubeconfig: string }> {
  const server = await startFakeApiServer({ rolloutsInstalled: true });
  server.putObjects(serverObjects(await clusterList()));
  server.setNodePoolsInstalled(true);
  server.putObjects(serverObjects(capacity));
  return { server, kubeconfig: writeKubeconfig(server) };
}
