/**
 * The webhook in front of a real API server: `podmutation serve --tls-cert/--tls-key`, registered with the
 * configuration `podmutation webhook-config --ca-bundle` prints. Pods come from the real controllers (ReplicaSet,
 * StatefulSet, Job) with the names, owners and defaults the API server gives them, the API server validates every
 * patched Pod, and what it stores is compared with what the offline engine (`podmutation explain`, `test`) says.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { APPLIED_ANNOTATION, AUDITED_ANNOTATION, PRODUCT_ANNOTATION_PREFIX } from '../../lib/api/index.ts';
import { compileRuleSet, reviewPod, podFacts, type MutationOutcome, type Pod } from '../../lib/engine/index.ts';
import { CAPACITY_ANNOTATION, withRecordedCapacity } from '../../lib/placement/index.ts';

import {
  loadRuleFiles,
  parseResourceDocuments,
  parseSingleDocument,
  readTextFile,
} from '../../lib/rule-files/index.ts';
import { findTestFiles } from '../../lib/rule-tests/index.ts';
import { isJsonObject, type JsonObject } from '../../lib/json/index.ts';
import { podInputs, type PodInput } from '../../lib/workloads/index.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { poolAffinity } from './pools.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import {
  DEFAULT_WEBHOOK_NAME,
  metricSum,
  ruleFolder,
  serveAndRegister,
  webhookCalls,
  webhookConfiguration,
  type ServedWebhook,
} from './webhook.ts';
import { schedulingChange } from '../../lib/report/compare.ts';
import { type RuleTest, readRuleTest } from '../../lib/rule-tests/format.ts';
import { testPlacementStep } from '../../lib/rule-tests/run.ts';

const cluster = useControlPlane();

// The tolerations the DefaultTolerationSeconds admission plugin adds to every Pod before the webhooks run
// (plugin/pkg/admission/defaulttolerationseconds: 300 s for not-ready and unreachable, unless the Pod has its own).
const API_SERVER_TOLERATIONS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({
  key,
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
}));

// The kinds an example's resources may hold that a cluster without Argo Rollouts can create.
const CREATABLE_KINDS = new Set(['Deployment', 'StatefulSet', 'Job', 'CronJob', 'Pod']);

type PodList = { items: Json[] };

/** The Pod as the API server hands it to the webhooks: the example's Pod with the defaulted tolerations. */
function asTheApiServerDefaultsIt(pod: Pod): Pod {
  const spec = isJsonObject(pod.spec) ? pod.spec : {};
  const own = Array.isArray(spec.tolerations) ? (spec.tolerations as JsonObject[]) : [];
  const added = API_SERVER_TOLERATIONS.filter(({ key }) => !own.some((toleration) => toleration.key === key));
  return { ...pod, spec: { ...spec, tolerations: [...own, ...added] } };
}

// The deletion cost a Diversity Pod's webhook sets from its sequence number: the int32 maximum less the number.
const DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';
const MAX_DELETION_COST = 2_147_483_647;

function annotationsOf(pod: Json): Record<string, string> {
  const metadata = pod.metadata as { annotations?: Record<string, string> } | undefined;
  return metadata?.annotations ?? {};
}

/** The customer annotation keys of both Pods: the ones the scheduling comparison covers. */
function annotationKeys(...pods: Json[]): string[] {
  return [
    ...new Set(
      pods.flatMap((pod) =>
        Object.keys(annotationsOf(pod)).filter((key) => !key.startsWith(PRODUCT_ANNOTATION_PREFIX)),
      ),
    ),
  ].sort();
}

/** "" when the stored Pod schedules as the offline engine's Pod does, as Kubernetes reads the fields; else the change. */
function differenceFromOffline(stored: Json, offline: Pod): string {
  return (
    schedulingChange(
      podFacts(stored, '', 'stored'),
      podFacts(offline, '', 'offline'),
      annotationKeys(stored, offline),
    ) ?? ''
  );
}

function namesIn(annotation: string | undefined): string[] {
  return annotation === undefined || annotation === '' ? [] : annotation.split(',');
}

/** The Pods of a namespace that a selector query (labelSelector or fieldSelector) names, leaving out deleted ones. */
async function podsOf(
  plane: ControlPlane,
  namespace: string,
  selector: Readonly<Record<string, string>>,
): Promise<Json[]> {
  const list = await plane.admin.json<PodList>('GET', `/api/v1/namespaces/${namespace}/pods`, { query: selector });
  return list.items.filter((pod) => (pod.metadata as { deletionTimestamp?: string }).deletionTimestamp === undefined);
}

/** The selector of the Pods a workload of the example creates. */
function podSelector(input: PodInput, jobName: string | undefined): Record<string, string> {
  if (input.resource.kind === 'Pod') return { fieldSelector: `metadata.name=${input.resource.name}` };
  if (jobName !== undefined || input.resource.kind === 'Job')
    return { labelSelector: `batch.kubernetes.io/job-name=${jobName ?? input.resource.name}` };
  // The workload's own selector: the offline Pod's template hash is not the controller's (lib/workloads templateHash).
  const labels = (input.document.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
  return {
    labelSelector: Object.entries(labels)
      .map(([key, value]) => `${key}=${value}`)
      .join(','),
  };
}

/** The message of the first ReplicaFailure condition of the Deployment's ReplicaSets (a denied Pod creation). */
async function replicaFailure(plane: ControlPlane, namespace: string, deployment: string): Promise<string | undefined> {
  const list = await plane.admin.json<{ items: Json[] }>('GET', `/apis/apps/v1/namespaces/${namespace}/replicasets`);
  for (const replicaSet of list.items) {
    const owners = ((replicaSet.metadata as { ownerReferences?: { name: string }[] }).ownerReferences ?? []).map(
      ({ name }) => name,
    );
    if (!owners.includes(deployment)) continue;
    const conditions =
      (replicaSet.status as { conditions?: { type: string; message: string }[] } | undefined)?.conditions ?? [];
    const failure = conditions.find(({ type }) => type === 'ReplicaFailure');
    if (failure !== undefined) return failure.message;
  }
  return undefined;
}

/** One workload of an example, created in the cluster, and what the offline engine says its Pods get. */
interface CreatedWorkload {
  readonly input: PodInput;
  readonly offline: MutationOutcome;
  /**
   * The offline outcome for one stored Pod: with the labels and owner its controller gave it (a Deployment's
   * pod-template-hash is not the offline one, lib/workloads templateHash) and the Diversity draw the webhook recorded.
   */
  readonly offlineAs: (stored: Json) => MutationOutcome;
  /** The Job made from a CronJob, whose Pods stand for the CronJob's. */
  readonly jobName?: string;
  /** What kubectl said when it created the resource, for a Pod it refused. */
  readonly applyError?: string;
}

/**
 * Creates the example's workloads (skipping AdmissionReviews, Lists of running Pods and Rollouts, which this cluster
 * cannot hold) and runs the offline engine on each Pod as the API server defaults it.
 */
async function createExampleWorkloads(plane: ControlPlane, test: RuleTest): Promise<CreatedWorkload[]> {
  const loaded = await loadRuleFiles(test.rules);
  const ruleSet = compileRuleSet(loaded.rules);
  // The managed step the served webhook runs: the test's placement policies and the PodPlacements of its rule paths.
  const step = await testPlacementStep(test, loaded.placements.placements);
  const managedSteps = step === undefined ? [] : [step];
  const created: CreatedWorkload[] = [];
  for (const path of test.resources) {
    const documents = parseResourceDocuments(await readTextFile(path), path).filter(
      // A Pod with a status or an owner is a running Pod `kubectl get -o json` printed, not one to create.
      (document) =>
        isJsonObject(document) &&
        CREATABLE_KINDS.has(String(document.kind)) &&
        !(
          document.kind === 'Pod' &&
          (document.status !== undefined ||
            (isJsonObject(document.metadata) && document.metadata.ownerReferences !== undefined))
        ),
    ) as JsonObject[];
    for (const input of podInputs(documents, path, test.namespace).inputs) {
      await plane.ensureNamespace(input.resource.namespace);
      // create, not apply: apply would add its last-applied-configuration annotation, which no offline Pod has.
      const applied = await plane.kubectl(['create', '-n', input.resource.namespace, '-f', '-'], {
        input: stringify(input.document),
      });
      let jobName: string | undefined;
      if (input.resource.kind === 'CronJob') {
        // The name the CronJob controller gives the Job of a run, <cronjob>-<scheduled minute since the epoch>
        // (pkg/controller/cronjob/utils.go getJobName), made now instead of waiting for the schedule.
        jobName = `${input.resource.name}-${Math.floor(Date.now() / 60_000)}`;
        const job = await plane.kubectl([
          'create',
          'job',
          jobName,
          `--from=cronjob/${input.resource.name}`,
          '-n',
          input.resource.namespace,
        ]);
        expect(job.code, job.stderr).toBe(0);
      }
      const offlineOf = (pod: Pod, recorded?: { capacity: unknown; sequence: number | undefined }) =>
        reviewPod(
          {
            pod: asTheApiServerDefaultsIt(pod),
            namespace: input.resource.namespace,
            ruleSet,
            context: withRecordedCapacity(
              {
                requestUid: `offline-${input.resource.name}`,
                ...(recorded?.sequence === undefined ? {} : { sequence: recorded.sequence }),
              },
              recorded?.capacity,
            ),
          },
          { managedSteps, enforcement: test.enforcement },
        );
      // A Diversity Pod's draw and number are the webhook's (its counter, in the table the server runs on), and its
      // spread selects the labels the controller gave it: the offline Pod is drawn and numbered alike (the number read
      // back from the deletion cost the webhook set), with those labels and the owner they go with.
      const offlineAs = (stored: Json) => {
        const { labels = {}, ownerReferences } = stored.metadata as {
          labels?: Record<string, string>;
          ownerReferences?: unknown;
        };
        // The API server copies its Node's topology labels onto a Pod when it binds it (PodTopologyLabelsAdmission),
        // after the webhook saw it.
        const admitted = Object.fromEntries(
          Object.entries(labels).filter(([key]) => !key.startsWith('topology.kubernetes.io/')),
        );
        const metadata = { ...input.pod.metadata, labels: admitted, ownerReferences } as Pod['metadata'];
        const annotations = annotationsOf(stored);
        const cost = Number(annotations[DELETION_COST_ANNOTATION]);
        const sequence = Number.isInteger(cost) && cost > 0 ? MAX_DELETION_COST - cost : undefined;
        return offlineOf({ ...input.pod, metadata }, { capacity: annotations[CAPACITY_ANNOTATION], sequence });
      };
      created.push({
        input,
        offline: offlineOf(input.pod, undefined),
        offlineAs,
        ...(jobName === undefined ? {} : { jobName }),
        ...(applied.code === 0 ? {} : { applyError: applied.stderr }),
      });
    }
  }
  return created;
}

/** Waits for the workload's Pods (or its denial) and checks them against the offline outcome. */
async function expectAdmittedAsOffline(plane: ControlPlane, workload: CreatedWorkload): Promise<void> {
  const { input, offline } = workload;
  const { namespace, name, kind } = input.resource;
  if (offline.denial !== undefined) {
    const denial = `admission webhook "${DEFAULT_WEBHOOK_NAME}" denied the request: ${offline.denial.message}`;
    if (kind === 'Pod') expect(workload.applyError).toContain(denial);
    else if (kind === 'Deployment') {
      const message = await waitFor(
        `the ReplicaFailure of ${namespace}/${name}`,
        () => replicaFailure(plane, namespace, name),
        { timeoutMs: 60_000 },
      );
      expect(message).toContain(denial);
    } else throw new Error(`the suite has no check of a denied ${kind}`);
    expect(await podsOf(plane, namespace, podSelector(input, workload.jobName))).toEqual([]);
    return;
  }
  expect(workload.applyError).toBeUndefined();
  const replicas =
    kind === 'Deployment' || kind === 'StatefulSet'
      ? Number((input.document.spec as { replicas?: number }).replicas ?? 1)
      : 1;
  const pods = await waitFor(
    `${replicas} Pods of ${kind} ${namespace}/${name}`,
    async () => {
      const found = await podsOf(plane, namespace, podSelector(input, workload.jobName));
      return found.length >= replicas ? found : undefined;
    },
    { timeoutMs: 90_000 },
  );
  for (const pod of pods) {
    const annotations = annotationsOf(pod);
    const drawn = workload.offlineAs(pod);
    expect(namesIn(annotations[APPLIED_ANNOTATION]), `${kind} ${namespace}/${name}: applied`).toEqual(drawn.applied);
    expect(namesIn(annotations[AUDITED_ANNOTATION]), `${kind} ${namespace}/${name}: audited`).toEqual(
      drawn.audited.map((match) => match.name),
    );
    expect(
      differenceFromOffline(pod, drawn.pod),
      `${kind} ${namespace}/${name}: the stored Pod against the offline one`,
    ).toBe('');
  }
}

async function deleteWorkloads(plane: ControlPlane, workloads: readonly CreatedWorkload[]): Promise<void> {
  for (const { input, jobName } of workloads) {
    const { kind, namespace, name } = input.resource;
    // Foreground: the next example creates workloads of the same names, whose ReplicaSets would meet the old ones.
    await plane.kubectl([
      'delete',
      kind.toLowerCase(),
      name,
      '-n',
      namespace,
      '--ignore-not-found',
      '--cascade=foreground',
    ]);
    if (jobName !== undefined)
      await plane.kubectl(['delete', 'job', jobName, '-n', namespace, '--ignore-not-found', '--cascade=foreground']);
  }
}

const exampleTests = await Promise.all(
  (await findTestFiles(['examples/tests'])).map(async (file) =>
    readRuleTest(parseSingleDocument(await readTextFile(file), file), file),
  ),
);

describe.each(exampleTests.map((test) => [test.name, test] as const))(
  'the workloads of the example test %s',
  (_name, test) => {
    let webhook: ServedWebhook;
    let workloads: CreatedWorkload[] = [];

    beforeAll(async () => {
      const plane = cluster();
      webhook = await serveAndRegister(plane, {
        rules: test.rules,
        ...(test.placements === undefined ? {} : { placements: test.placements }),
        flags: ['--enforcement', test.enforcement, '--capacity-flavour', test.capacityFlavour],
      });
      workloads = await createExampleWorkloads(plane, test);
    });
    afterAll(async () => {
      await deleteWorkloads(cluster(), workloads);
      await webhook?.stop();
    });

    it('are created through the API server as the offline engine says: applied, audited and denied alike, scheduling as Kubernetes reads it', async () => {
      expect(workloads.length).toBeGreaterThan(0);
      for (const workload of workloads) await expectAdmittedAsOffline(cluster(), workload);
    });
  },
);

describe('a Pod whose defaulted form differs from what was sent', () => {
  let webhook: ServedWebhook;
  const sent = (namespace: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'empty-required-affinity', namespace },
    // An empty required selector: Go decodes it as nodeSelectorTerms: null (the field has no omitempty), which the
    // API server's validation refuses unless a webhook gives it terms.
    spec: {
      containers: [{ name: 'app', image: 'registry.example.com/app:1' }],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} } },
    },
  });

  beforeAll(async () => {
    const plane = cluster();
    const rules = await ruleFolder(plane, [
      {
        name: 'pin-defaults',
        spec: {
          enable: true,
          workloadSelector: { namespaces: ['defaults'] },
          mutationAdd: {
            ...poolAffinity('merged'),
            tolerations: [{ key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' }],
          },
        },
      },
    ]);
    webhook = await serveAndRegister(plane, { rules: [rules] });
    await plane.ensureNamespace('defaults');
    await plane.ensureNamespace('untouched');
  });
  afterAll(async () => webhook?.stop());

  it('is refused by the API server when no rule gives it terms', async () => {
    const answer = await cluster().admin.request('POST', '/api/v1/namespaces/untouched/pods', {
      body: sent('untouched'),
    });
    expect(answer.status).toBe(422);
    expect(answer.text).toContain('nodeSelectorTerms');
  });

  it('is admitted once the rule ANDs its terms into the null selector, keeping the tolerations the API server added', async () => {
    const stored = await cluster().admin.json<Json>('POST', '/api/v1/namespaces/defaults/pods', {
      body: sent('defaults'),
    });
    const spec = stored.spec as { affinity: unknown; tolerations: unknown[] };
    expect(spec.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: ['merged'] }] },
          ],
        },
      },
    });
    expect(spec.tolerations).toEqual(
      expect.arrayContaining([
        ...API_SERVER_TOLERATIONS,
        { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' },
      ]),
    );
    expect(spec.tolerations).toHaveLength(3);
  });
});

describe('what the configuration of webhook-config tells the API server', () => {
  let webhook: ServedWebhook;
  const legacyPod = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'production', labels: { app: name } },
    spec: {
      containers: [{ name: 'app', image: 'registry.example.com/app:1' }],
      affinity: poolAffinity('legacy'),
    },
  });

  beforeAll(async () => {
    const plane = cluster();
    // Every Pod, bare Pods and DaemonSet Pods included, so that only the configuration can skip one.
    const rules = await ruleFolder(plane, [
      {
        name: 'annotate',
        spec: {
          enable: true,
          workloadSelector: { all: true },
          mutationAdd: { annotations: { 'example.com/seen-by': 'podmutation' } },
        },
      },
    ]);
    webhook = await serveAndRegister(plane, { rules: [rules] });
    await plane.ensureNamespace('production');
  });
  afterAll(async () => webhook?.stop());

  it('skips DaemonSet Pods before calling the webhook (the CEL match condition)', async () => {
    const plane = cluster();
    const before = webhookCalls(await plane.metrics(), DEFAULT_WEBHOOK_NAME);
    const daemonSet = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'node-agent', namespace: 'production' },
      spec: {
        selector: { matchLabels: { app: 'node-agent' } },
        template: {
          metadata: { labels: { app: 'node-agent' } },
          spec: {
            containers: [{ name: 'agent', image: 'registry.example.com/agent:1' }],
            affinity: legacyPod('agent').spec.affinity,
          },
        },
      },
    };
    await plane.admin.json('POST', '/apis/apps/v1/namespaces/production/daemonsets', { body: daemonSet });
    const pods = await waitFor('the DaemonSet Pods', async () => {
      const found = await podsOf(plane, 'production', { labelSelector: 'app=node-agent' });
      return found.length > 0 ? found : undefined;
    });
    for (const pod of pods) expect(annotationsOf(pod)[APPLIED_ANNOTATION]).toBeUndefined();
    expect(webhookCalls(await plane.metrics(), DEFAULT_WEBHOOK_NAME)).toBe(before);
  });

  it.each([
    ['kube-system', {}],
    ['opted-out', { 'podmutation.agent.cloudpilot.ai/ignore': 'true' }],
  ])('never mutates a Pod in %s (the namespace selector)', async (namespace, labels) => {
    const plane = cluster();
    await plane.ensureNamespace(namespace, labels);
    const stored = await plane.admin.json<Json>('POST', `/api/v1/namespaces/${namespace}/pods`, {
      body: { ...legacyPod('skipped'), metadata: { name: 'skipped', namespace } },
    });
    expect(annotationsOf(stored)[APPLIED_ANNOTATION]).toBeUndefined();
  });

  it('with failurePolicy Ignore, admits Pods unmutated while the webhook is down and counts it as a fail-open', async () => {
    const plane = cluster();
    const failOpen = async () =>
      metricSum(await plane.metrics(), 'apiserver_admission_webhook_fail_open_count', { name: DEFAULT_WEBHOOK_NAME });
    const mutated = await plane.admin.json<Json>('POST', '/api/v1/namespaces/production/pods', {
      body: legacyPod('while-up'),
    });
    expect(annotationsOf(mutated)[APPLIED_ANNOTATION]).toBe('annotate');
    const opened = await failOpen();

    await webhook.stop();
    const admitted = await plane.admin.json<Json>('POST', '/api/v1/namespaces/production/pods', {
      body: legacyPod('while-down'),
    });

    expect(annotationsOf(admitted)[APPLIED_ANNOTATION]).toBeUndefined();
    expect((admitted.spec as { affinity: unknown }).affinity).toEqual(legacyPod('x').spec.affinity);
    expect(await failOpen()).toBe(opened + 1);
    // What docs/operations.md's "The admission endpoint" warns of: the API server logs the failed call's URL, token
    // included.
    expect(readFileSync(join(plane.dir, 'kube-apiserver.log'), 'utf8')).toContain(
      `Failed calling webhook, failing open ${DEFAULT_WEBHOOK_NAME}`,
    );
    expect(readFileSync(join(plane.dir, 'kube-apiserver.log'), 'utf8')).toContain(`/admit/${webhook.token}?timeout=5s`);
  });

  it('with failurePolicy Fail, refuses Pods while the webhook is down', async () => {
    const plane = cluster();
    const applied = await plane.kubectl(['apply', '-f', '-'], {
      input: await webhookConfiguration(plane, webhook, { failurePolicy: 'Fail' }),
    });
    expect(applied.code, applied.stderr).toBe(0);
    // The API server switches to the new configuration through a watch: until then Pods still fail open.
    const refusal = await waitFor('the API server to apply failurePolicy Fail', async () => {
      const answer = await plane.admin.request('POST', '/api/v1/namespaces/production/pods', {
        body: legacyPod('refused'),
        query: { dryRun: 'All' },
      });
      return answer.status === 500 ? (answer.body as { message: string }).message : undefined;
    });
    expect(refusal).toContain(`failed calling webhook "${DEFAULT_WEBHOOK_NAME}"`);
    expect(refusal).toContain('connection refused');
    // What docs/operations.md's "The admission endpoint" warns of: the API server's refusal quotes the URL, token
    // included, to whoever created the Pod (and into the ReplicaSet's events).
    expect(refusal).toContain(`/admit/${webhook.token}`);
  });
});
