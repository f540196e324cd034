/**
 * Argo Rollouts with its own controller, built from its Go module (argo-rollouts.ts) and run against the suite's API
 * server with the CRDs of the same release: a Rollout that takes its template from a Deployment (spec.workloadRef)
 * is covered by the PodDisruptionBudgets that select that template's labels, and every Rollout is restarted through
 * Argo's own mechanism, spec.restartAt (argoproj/argo-rollouts rollout/restart.go; `kubectl argo rollouts restart`
 * sets it), done once the controller copies it to status.restartedAt; never through a template annotation, which Argo
 * refuses on a workloadRef Rollout ("template must be empty for workload reference rollout",
 * pkg/apis/rollouts/validation/validation.go). `rollout` and `--restart-commands` restart through the same field.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from './api.ts';
import { argoRollouts } from './argo-rollouts.ts';
import type { ControlPlane } from './control-plane.ts';
import { kubectlObjects, kubectlOk, runScript } from './kubectl.ts';
import { livePods } from './pods.ts';
import { reportJson, reportRun, rolloutJson } from './podmutation.ts';
import { legacyTemplate, mergeLegacyPool } from './pools.ts';
import { freePort, startSupervised, waitFor, type Supervised } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import { ruleFolder, serveAndRegister, type ServedWebhook } from './webhook.ts';

const cluster = useControlPlane();

const REFERENCED = 'argo-workloadref';
const SCRIPT = 'argo-script';
const RULES = [mergeLegacyPool([REFERENCED, SCRIPT], ['Rollout'])];

type Rollout = {
  metadata: { generation: number; resourceVersion: string };
  spec: { template?: Json; restartAt?: string };
  status?: { phase?: string; message?: string; restartedAt?: string; availableReplicas?: number };
};

// No canary steps: each new ReplicaSet is promoted at once, as a plain rolling update.
const CANARY = { canary: {} };

/** A Rollout of app `name`, its Pods from `source` (a template, or a workloadRef). */
function argoRollout(namespace: string, name: string, replicas: number, source: Json): Json {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    metadata: { name, namespace },
    spec: { replicas, selector: { matchLabels: { app: name } }, ...source, strategy: CANARY },
  };
}

const OBJECTS: readonly Json[] = [
  // The Deployment whose template the Rollout runs; scaled to 0, as Argo's docs show workloadRef.
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web-template', namespace: REFERENCED },
    spec: { replicas: 0, selector: { matchLabels: { app: 'web' } }, template: legacyTemplate('web') },
  },
  argoRollout(REFERENCED, 'web', 2, {
    workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web-template' },
  }),
  {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'web', namespace: REFERENCED },
    spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'web' } } },
  },
  argoRollout(SCRIPT, 'api', 1, { template: legacyTemplate('api') }),
];

const rolloutPath = (namespace: string, name: string) =>
  `/apis/argoproj.io/v1alpha1/namespaces/${namespace}/rollouts/${name}`;

async function healthy(plane: ControlPlane, namespace: string, name: string, replicas: number): Promise<Rollout> {
  return waitFor(
    `Rollout ${namespace}/${name} Healthy with ${replicas} available`,
    async () => {
      const rollout = await plane.admin.json<Rollout>('GET', rolloutPath(namespace, name));
      return rollout.status?.phase === 'Healthy' && rollout.status.availableReplicas === replicas ? rollout : undefined;
    },
    { timeoutMs: 90_000 },
  );
}

describe('Argo Rollouts, with its controller, on a real control plane', () => {
  let controller: Supervised | undefined;
  let webhook: ServedWebhook;
  let rules: string;

  beforeAll(async () => {
    const plane = cluster();
    const argo = await argoRollouts((line) => console.log(`[argo rollouts] ${line}`));
    for (const crd of argo.crds) await kubectlOk(plane, ['create', '-f', crd]);
    // kubectl wait fails on a CRD whose status has no conditions yet: the API server is asked until each is Established.
    await waitFor('the Argo Rollouts CRDs to be Established', async () => {
      const list = await plane.admin.json<{
        items: { spec: { group: string }; status?: { conditions?: { type: string; status: string }[] } }[];
      }>('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
      const argoCrds = list.items.filter((crd) => crd.spec.group === 'argoproj.io');
      const established = argoCrds.filter((crd) =>
        (crd.status?.conditions ?? []).some(({ type, status }) => type === 'Established' && status === 'True'),
      );
      return argoCrds.length === argo.crds.length && established.length === argoCrds.length ? true : undefined;
    });
    const [metricsPort, healthzPort] = await Promise.all([freePort(), freePort()]);
    controller = startSupervised(
      'rollouts-controller',
      argo.controller,
      [
        `--kubeconfig=${plane.adminKubeconfig}`,
        '--leader-elect=false',
        `--metricsPort=${metricsPort}`,
        `--healthzPort=${healthzPort}`,
        '--loglevel=info',
      ],
      { logFile: join(plane.dir, 'rollouts-controller.log') },
    );
    rules = await ruleFolder(plane, RULES);
    for (const namespace of [REFERENCED, SCRIPT]) await plane.ensureNamespace(namespace);
    // Before the webhook: every Pod starts on the legacy pool.
    await kubectlObjects(plane, 'create', OBJECTS);
    await healthy(plane, REFERENCED, 'web', 2);
    await healthy(plane, SCRIPT, 'api', 1);
    webhook = await serveAndRegister(plane, { rules: [rules] });
  }, 20 * 60_000);
  afterAll(async () => {
    await webhook?.stop();
    await controller?.stop();
  });

  it('reports the workloadRef Rollout pending, from its Deployment’s template', async () => {
    const { run, result } = await reportJson(cluster(), ['--rules', rules, '-n', REFERENCED]);

    expect(run.code, run.stderr).toBe(1);
    expect(result?.workloads.map(({ kind, name, pods, pending }) => ({ kind, name, pods, pending }))).toEqual([
      { kind: 'Rollout', name: 'web', pods: 2, pending: 2 },
    ]);
  });

  it('skips the workloadRef Rollout while the budget that selects its Deployment template’s labels allows 0, and changes nothing', async () => {
    const plane = cluster();
    const before = await plane.admin.json<Rollout>('GET', rolloutPath(REFERENCED, 'web'));

    const { run, records } = await rolloutJson(plane, ['--rules', rules, '-n', REFERENCED, '--timeout', '5s']);

    expect(run.code, run.stderr).toBe(1);
    expect(
      records.find((record) => record.type === 'workload' && record.state === 'skipped'),
      JSON.stringify(records),
    ).toMatchObject({
      name: 'web',
      reason: `PodDisruptionBudget ${REFERENCED}/web allowed 0 disruptions for 5s`,
    });
    const after = await plane.admin.json<Rollout>('GET', rolloutPath(REFERENCED, 'web'));
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(after.status?.phase).toBe('Healthy');
  });

  it('restarts the workloadRef Rollout through spec.restartAt once the budget allows it, and is done when Argo says so', async () => {
    const plane = cluster();
    await kubectlOk(plane, [
      'patch',
      'pdb',
      'web',
      '-n',
      REFERENCED,
      '--type',
      'merge',
      '-p',
      '{"spec":{"maxUnavailable":1}}',
    ]);
    const before = new Set((await livePods(plane, REFERENCED, 'app=web')).map((pod) => pod.metadata.uid));

    const { run, records } = await rolloutJson(plane, ['--rules', rules, '-n', REFERENCED, '--timeout', '90s']);

    expect(run.code, `${run.stderr}${JSON.stringify(records)}`).toBe(0);
    expect(records.flatMap((record) => (record.type === 'workload' ? [record.state] : []))).toEqual([
      'planned',
      'started',
      'done',
    ]);
    const web = await plane.admin.json<Rollout>('GET', rolloutPath(REFERENCED, 'web'));
    expect(web.spec.template).toBeUndefined();
    expect(web.spec.restartAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(web.status?.restartedAt).toBe(web.spec.restartAt);
    expect(web.status?.phase).toBe('Healthy');
    const after = await livePods(plane, REFERENCED, 'app=web');
    expect(after.filter((pod) => before.has(pod.metadata.uid))).toEqual([]);
    for (const pod of after) expect(pod.spec.nodeName, pod.metadata.name).toMatch(/^merged-/);
    expect(records.at(-1)).toMatchObject({ type: 'verdict', pending: 0, exit: 0 });
  });

  it('prints the restart of a Rollout as the same spec.restartAt patch, which bash runs with the built kubectl', async () => {
    const plane = cluster();
    const run = await reportRun(plane, ['--rules', rules, '-n', SCRIPT, '--restart-commands']);
    expect(run.stdout.trim().split('\n')).toEqual([
      `kubectl patch rollouts.argoproj.io/api -n ${SCRIPT} --type merge -p "{\\"spec\\":{\\"restartAt\\":\\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\\"}}"`,
    ]);

    const ran = await runScript(plane, 'argo.sh', run.stdout);

    expect(ran.code, ran.stderr).toBe(0);
    const restarted = await waitFor(
      'Argo to finish the restart of api',
      async () => {
        const api = await plane.admin.json<Rollout>('GET', rolloutPath(SCRIPT, 'api'));
        return api.spec.restartAt !== undefined && api.status?.restartedAt === api.spec.restartAt ? api : undefined;
      },
      { timeoutMs: 90_000 },
    );
    expect(restarted.spec.template).toBeDefined();
    await waitFor('report to read api current', async () => {
      const answer = await reportJson(plane, ['--rules', rules, '-n', SCRIPT]);
      return answer.run.code === 0 ? true : undefined;
    });
  });
});
