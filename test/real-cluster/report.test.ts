/**
 * docs/operations.md "Running a migration", the walkthrough against a real cluster: workloads made by the real
 * controllers (ReplicaSets with their pod-template-hash, a StatefulSet, a CronJob's Job), then the example rules
 * applied as PodMutations and served by `podmutation serve --kubeconfig`; `podmutation report --kubeconfig` lists what
 * a rollout would change, its `--restart-commands` script is run with bash, the CronJob is recreated by hand, and the
 * report reads 0 pending once the rollouts are done. The cluster has no Argo Rollouts CRD.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import type { MigrationReport } from '../../lib/report/index.ts';
import { runPodmutation } from '../support/cli.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { waitFor } from './processes.ts';
import { documentedKinds } from './documented.ts';
import {
  capacityFile,
  kubectlObjects,
  kubectlOk,
  runScript,
  untilPodMutationsServed,
  untilRolledOut,
} from './kubectl.ts';
import { livePods, type ClusterPod as Pod } from './pods.ts';
import { reportJson, reportRun } from './podmutation.ts';
import { poolAffinity } from './pools.ts';
import { useControlPlane } from './use-control-plane.ts';
import { serveAndRegister, type ServedWebhook } from './webhook.ts';

const cluster = useControlPlane();

// The cluster has only the PodMutation CRD (infra/crd.yaml): the real API server answers the podplacements list 404,
// which report reads as no PodPlacement and says once.
const NO_PODPLACEMENT_CRD =
  'note: the cluster has no PodPlacement CRD (listing podplacements.agent.cloudpilot.ai answered 404): no PodPlacement places its Pods\n';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULE_FILES = ['examples/rules/migrate-legacy-pool.yaml', 'examples/rules/batch-to-spot-pool.yaml'].map((file) =>
  join(ROOT, file),
);
// docs/operations.md "What a rollout would change": the change of a Pod migrate-legacy-pool would move off the legacy
// pool.
const LEGACY_POOL_CHANGE =
  'required node affinity (terms ORed): -{example.com/node-pool In [legacy]} +{example.com/node-pool In [merged]}; annotations: +example.com/migration: merged-pool';

type Metadata = {
  name: string;
  namespace: string;
  uid: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Json[];
  deletionTimestamp?: string;
};

const LEGACY_AFFINITY = poolAffinity('legacy');

function podTemplate(name: string, spec: Json): Json {
  return {
    metadata: { labels: { 'app.kubernetes.io/name': name } },
    spec: { containers: [{ name: 'app', image: `registry.example.com/${name}:1` }], ...spec },
  };
}

// Deployments and a StatefulSet in production pinned to the legacy pool, one that is not, and a CronJob in batch
// pinned to the on-demand batch pool by nodeSelector; suspended, so that only the Jobs made here run.
const WORKLOADS: readonly Json[] = [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'checkout', namespace: 'production' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'checkout' } },
      template: podTemplate('checkout', { affinity: LEGACY_AFFINITY }),
    },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'search', namespace: 'production' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'search' } },
      template: podTemplate('search', {}),
    },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'ledger', namespace: 'production' },
    spec: {
      replicas: 2,
      serviceName: 'ledger',
      selector: { matchLabels: { 'app.kubernetes.io/name': 'ledger' } },
      template: podTemplate('ledger', { affinity: LEGACY_AFFINITY }),
    },
  },
  {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly-report', namespace: 'batch' },
    spec: {
      schedule: '0 3 * * *',
      suspend: true,
      jobTemplate: {
        spec: {
          template: podTemplate('nightly-report', {
            restartPolicy: 'Never',
            nodeSelector: { 'example.com/node-pool': 'batch-ondemand' },
          }),
        },
      },
    },
  },
];

async function runningPods(plane: ControlPlane, namespace: string, selector: string, count: number): Promise<Pod[]> {
  return waitFor(
    `${count} running Pods ${selector} in ${namespace}`,
    async () => {
      const pods = await livePods(plane, namespace, selector);
      return pods.length === count && pods.every((pod) => pod.status?.phase === 'Running') ? pods : undefined;
    },
    { timeoutMs: 90_000 },
  );
}

/** Waits until the webhook applies `rule` to a dry-run copy of a running Pod: the rule is synced and served. */
async function untilServed(plane: ControlPlane, pod: Pod, rule: string): Promise<void> {
  const { labels, ownerReferences, namespace } = pod.metadata;
  const spec = { ...pod.spec, nodeName: undefined };
  const copy = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { labels, ownerReferences, generateName: `${pod.metadata.name}-probe-` },
    spec,
  };
  await waitFor(`the webhook to apply ${rule}`, async () => {
    const answer = await plane.admin.json<Pod>('POST', `/api/v1/namespaces/${namespace}/pods`, {
      body: copy,
      query: { dryRun: 'All' },
    });
    return (answer.metadata.annotations?.[APPLIED_ANNOTATION] ?? '').split(',').includes(rule) ? true : undefined;
  });
}

function row(result: MigrationReport, kind: string, name: string) {
  return result.workloads.find((workload) => workload.kind === kind && workload.name === name);
}

describe('the walkthrough of docs/operations.md "Running a migration" on a cluster without Argo Rollouts', () => {
  let webhook: ServedWebhook;
  let firstJob: Json;
  let cronJobUid: string;

  beforeAll(async () => {
    const plane = cluster();
    await kubectlOk(plane, ['apply', '-f', join(ROOT, 'infra', 'crd.yaml')]);
    await untilPodMutationsServed(plane);
    // The webhook's rules are the cluster's PodMutations, synced every 2 s as the sync Lambda syncs them.
    webhook = await serveAndRegister(plane, {
      rules: [],
      flags: ['--kubeconfig', plane.adminKubeconfig, '--sync-interval', '2'],
    });

    for (const namespace of ['production', 'batch']) await plane.ensureNamespace(namespace);
    await kubectlObjects(plane, 'create', WORKLOADS);
    await kubectlOk(plane, [
      'create',
      'job',
      'nightly-report-manual-1',
      '--from=cronjob/nightly-report',
      '-n',
      'batch',
    ]);
    firstJob = await plane.admin.json<Json>('GET', '/apis/batch/v1/namespaces/batch/jobs/nightly-report-manual-1');
    cronJobUid = (
      await plane.admin.json<{ metadata: Metadata }>('GET', '/apis/batch/v1/namespaces/batch/cronjobs/nightly-report')
    ).metadata.uid;
    for (const workload of ['deployment/checkout', 'deployment/search', 'statefulset/ledger'])
      await untilRolledOut(plane, 'production', workload);
    await runningPods(plane, 'batch', 'batch.kubernetes.io/job-name=nightly-report-manual-1', 1);
  });

  afterAll(async () => {
    await webhook?.stop();
  });

  it('reads nothing pending before any rule exists', async () => {
    const { run, result } = await reportJson(cluster(), ['-A']);

    expect(run.code, run.stderr).toBe(0);
    expect(result.rules).toEqual([]);
    expect(result.workloads).toEqual([]);
    expect(result.totals).toMatchObject({ pods: 6, unaffected: 6, pending: 0 });
  });

  it('gives the Job of kubectl create job --from=cronjob the CronJob as its controller, so the report names the CronJob', () => {
    const metadata = firstJob.metadata as Metadata;
    expect(metadata.ownerReferences).toEqual([
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly-report', uid: cronJobUid, controller: true },
    ]);
    expect(metadata.annotations).toMatchObject({ 'cronjob.kubernetes.io/instantiate': 'manual' });
  });

  it('lists the workloads running on the old pools as pending once the rules are PodMutations, and exits 1', async () => {
    const plane = cluster();
    for (const file of RULE_FILES) await kubectlOk(plane, ['apply', '-f', file]);
    await untilServed(
      plane,
      (await livePods(plane, 'production', 'app.kubernetes.io/name=checkout'))[0]!,
      'migrate-legacy-pool',
    );
    await untilServed(
      plane,
      (await livePods(plane, 'batch', 'batch.kubernetes.io/job-name=nightly-report-manual-1'))[0]!,
      'batch-to-spot-pool',
    );

    const { run, result } = await reportJson(plane, ['-A']);

    expect(run.code, run.stderr).toBe(1);
    expect(
      result.rules.map(({ name, enforcement, matched, pending }) => ({ name, enforcement, matched, pending })),
    ).toEqual([
      { name: 'batch-to-spot-pool', enforcement: 'enforce', matched: 1, pending: 1 },
      { name: 'migrate-legacy-pool', enforcement: 'enforce', matched: 4, pending: 4 },
    ]);
    expect(
      result.workloads.map(({ namespace, kind, name, pods, pending, rules }) => ({
        namespace,
        kind,
        name,
        pods,
        pending,
        rules,
      })),
    ).toEqual([
      {
        namespace: 'batch',
        kind: 'CronJob',
        name: 'nightly-report',
        pods: 1,
        pending: 1,
        rules: ['batch-to-spot-pool'],
      },
      {
        namespace: 'production',
        kind: 'Deployment',
        name: 'checkout',
        pods: 2,
        pending: 2,
        rules: ['migrate-legacy-pool'],
      },
      {
        namespace: 'production',
        kind: 'StatefulSet',
        name: 'ledger',
        pods: 2,
        pending: 2,
        rules: ['migrate-legacy-pool'],
      },
    ]);
    expect(row(result, 'Deployment', 'checkout')?.change).toBe(LEGACY_POOL_CHANGE);
    expect(row(result, 'StatefulSet', 'ledger')?.change).toBe(LEGACY_POOL_CHANGE);
    expect(row(result, 'CronJob', 'nightly-report')?.change).toMatch(
      /^nodeSelector: .*-example\.com\/node-pool=batch-ondemand.*\+example\.com\/node-pool=batch-spot.*; tolerations: \+.*example\.com\/spot/,
    );
    expect(result.totals).toEqual({ pods: 6, unaffected: 1, current: 0, pending: 5, denied: 0 });
  });

  it("says the same from the objects docs/operations.md's kubectl get prints as from the cluster, with the rule files", async () => {
    const plane = cluster();
    const objects = await kubectlOk(plane, ['get', await documentedKinds(), '-A', '-o', 'json']);
    const file = join(plane.dir, 'cluster.json');
    await writeFile(file, objects);

    const offline = await runPodmutation([
      'report',
      '--objects',
      file,
      '--capacity',
      await capacityFile(plane, 'report-capacity.yaml'),
      ...RULE_FILES.flatMap((path) => ['--rules', path]),
      '-o',
      'json',
    ]);

    expect(offline.code, offline.stderr).toBe(1);
    expect(JSON.parse(offline.stdout)).toEqual((await reportJson(plane, ['-A'])).result);
  });

  it('prints the rollouts as a script, which bash runs with the built kubectl, and the CronJob as one to recreate by hand', async () => {
    const plane = cluster();
    const run = await reportRun(plane, ['-A', '--restart-commands']);
    expect(run.stdout.trim().split('\n')).toEqual([
      '# recreate by hand: CronJob batch/nightly-report (1 pending Pod)',
      'kubectl rollout restart deployment/checkout -n production',
      'kubectl rollout restart statefulset/ledger -n production',
    ]);

    const ran = await runScript(plane, 'rollout.sh', run.stdout);

    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('deployment.apps/checkout restarted');
    expect(ran.stdout).toContain('statefulset.apps/ledger restarted');
  });

  it('reads 0 pending and exits 0 once the rollouts are done and the CronJob’s Job is recreated', async () => {
    const plane = cluster();
    // By hand: the running Job goes, and a new one from the CronJob's template is admitted under the rule.
    await kubectlOk(plane, [
      'delete',
      'job',
      'nightly-report-manual-1',
      '-n',
      'batch',
      '--cascade=foreground',
      '--wait=true',
      '--timeout=90s',
    ]);
    await kubectlOk(plane, [
      'create',
      'job',
      'nightly-report-manual-2',
      '--from=cronjob/nightly-report',
      '-n',
      'batch',
    ]);
    for (const workload of ['deployment/checkout', 'statefulset/ledger'])
      await untilRolledOut(plane, 'production', workload);
    const [batchPod] = await runningPods(plane, 'batch', 'batch.kubernetes.io/job-name=nightly-report-manual-2', 1);
    expect(batchPod?.spec.nodeSelector).toEqual({ 'example.com/node-pool': 'batch-spot' });
    expect(batchPod?.spec.nodeName).toMatch(/^batch-spot-/);
    for (const pod of [
      ...(await runningPods(plane, 'production', 'app.kubernetes.io/name=checkout', 2)),
      ...(await runningPods(plane, 'production', 'app.kubernetes.io/name=ledger', 2)),
    ]) {
      expect(pod.metadata.annotations?.[APPLIED_ANNOTATION], pod.metadata.name).toBe('migrate-legacy-pool');
      expect(pod.spec.nodeName, pod.metadata.name).toMatch(/^merged-/);
    }

    // Walkthrough step 5: wait while report exits 1 (Pods of the old ReplicaSet may still be going away).
    const done = await waitFor(
      'podmutation report to exit 0',
      async () => {
        const answer = await reportJson(plane, ['-A']);
        if (answer.run.code !== 0 && answer.run.code !== 1)
          throw new Error(`report exited ${answer.run.code}: ${answer.run.stderr}`);
        return answer.run.code === 0 ? answer : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1_000 },
    );

    expect(done.run.stderr).toBe(NO_PODPLACEMENT_CRD);
    expect(done.result.totals).toEqual({ pods: 6, unaffected: 1, current: 5, pending: 0, denied: 0 });
    expect(
      done.result.workloads.map(({ kind, name, current, pending, change }) => ({
        kind,
        name,
        current,
        pending,
        change,
      })),
    ).toEqual([
      { kind: 'CronJob', name: 'nightly-report', current: 1, pending: 0, change: '' },
      { kind: 'Deployment', name: 'checkout', current: 2, pending: 0, change: '' },
      { kind: 'StatefulSet', name: 'ledger', current: 2, pending: 0, change: '' },
    ]);
    const run = await reportRun(plane, ['-A', '--restart-commands']);
    expect(run.stdout.trim()).toBe('# no workload has pending Pods');
  });

  it('reads the cluster without the Argo Rollouts CRD, whose collection answers 404', async () => {
    const plane = cluster();
    expect((await plane.admin.request('GET', '/apis/argoproj.io/v1alpha1/rollouts')).status).toBe(404);
    const crd = await plane.kubectl(['get', 'crd', 'rollouts.argoproj.io']);
    expect(crd.stderr).toContain('NotFound');

    const { run, result } = await reportJson(plane, ['-A']);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(NO_PODPLACEMENT_CRD);
    expect(result.workloads.some((workload) => workload.kind === 'Rollout')).toBe(false);
  });

  it('gets nothing from kubectl when rollouts are among the kinds asked for, and report refuses the empty file, as docs/operations.md warns', async () => {
    const plane = cluster();
    const asked = await plane.kubectl(['get', `${await documentedKinds()},rollouts`, '-A', '-o', 'json']);
    expect(asked.code).toBe(1);
    expect(asked.stdout).toBe('');
    expect(asked.stderr).toContain('the server doesn\'t have a resource type "rollouts"');
    const file = join(plane.dir, 'empty-cluster.json');
    await writeFile(file, asked.stdout);

    const offline = await runPodmutation(['report', '--objects', file, '--rules', RULE_FILES[0]!]);

    expect(offline.code).toBe(2);
    expect(offline.stderr).toContain(`${file}: input is empty`);
  });
});
