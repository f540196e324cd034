/**
 * The comparison with MutatingAdmissionPolicy (MAP) of docs/compared.md, on the same real API server: the workloads of the example
 * tests, created under the example rules written as MAPs alone and then under the webhook alone, are stored with the
 * same scheduling fields and bound to the same Node; a second admission of a stored Pod changes nothing under either;
 * a MAP with reinvocationPolicy IfNeeded runs again after the webhook and undoes what the webhook added; and what MAP
 * cannot say is asserted as the API server says it.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import { STAMP_ANNOTATION } from '../../lib/engine/index.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { kubectlObjects, kubectlOk, podMutationObject } from './kubectl.ts';
import {
  applyMutatingPolicy,
  deleteMutatingPolicy,
  migrationPolicy,
  MIGRATION_POLICY_NAME,
  NOT_BOUND,
  NOT_DAEMONSET,
  OWNED_BY,
  podPolicy,
  policyChecks,
  probeOwner,
  requirement,
  type MutatingPolicy,
} from './mutating-policy.ts';
import type { ClusterPod } from './pods.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import {
  admissionsOf,
  applyWebhookConfiguration,
  DEFAULT_WEBHOOK_NAME,
  serveWebhook,
  webhookConfiguration,
  type ServedWebhook,
} from './webhook.ts';

const cluster = useControlPlane();

const POOL = 'example.com/node-pool';
const ARCH = 'kubernetes.io/arch';
const RETIRING = 'example.com/zone-retiring';
const PREFERRED_TYPE = 'Object.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution';
const ARM64_PREFERENCE = `${PREFERRED_TYPE}{weight: 60, preference: ${PREFERRED_TYPE}.preference{
  matchExpressions: [${PREFERRED_TYPE}.preference.matchExpressions{key: '${ARCH}', operator: 'In', values: ['arm64']}]}}`;
const SPOT_TOLERATION = "Object.spec.tolerations{key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule'}";

/** A dry-run probe of a policy: a Pod of the namespace with the given metadata and spec. */
function probe(namespace: string, metadata: Json, spec: Json): MutatingPolicy['probe'] {
  return {
    namespace,
    pod: { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'c', image: 'probe' }], ...spec } },
  };
}

// examples/rules/batch-to-spot-pool.yaml: Job and CronJob Pods (both owned by a Job) of batch and analytics whose
// nodeSelector pins batch-ondemand get batch-spot instead and tolerate the Spot taint, unless an identical toleration
// is there. JSON Patch replaces the one nodeSelector key the condition says is present.
const BATCH_TO_SPOT: MutatingPolicy = {
  ...podPolicy({
    name: 'batch-to-spot-pool',
    namespaces: ['batch', 'analytics'],
    conditions: {
      'job-or-cronjob': OWNED_BY.Job,
      'not-bound': NOT_BOUND,
      'on-the-on-demand-pool': `object.spec.?nodeSelector[?'${POOL}'].orValue('') == 'batch-ondemand'`,
    },
    variables: { tolerations: 'object.spec.?tolerations.orValue([])' },
    jsonPatch: `[JSONPatch{op: 'replace', path: '/spec/nodeSelector/' + jsonpatch.escapeKey('${POOL}'), value: 'batch-spot'}] +
  (variables.tolerations.exists(t, t.?key.orValue('') == 'example.com/spot' && t.?operator.orValue('') == 'Exists' &&
      t.?effect.orValue('') == 'NoSchedule' && !has(t.value) && !has(t.tolerationSeconds)) ? [] :
    has(object.spec.tolerations)
      ? [JSONPatch{op: 'add', path: '/spec/tolerations/-', value: ${SPOT_TOLERATION}}]
      : [JSONPatch{op: 'add', path: '/spec/tolerations', value: [${SPOT_TOLERATION}]}])`,
  }),
  probe: probe(
    'batch',
    { name: 'batch-probe', ownerReferences: [probeOwner('Job', 'batch-probe')] },
    { nodeSelector: { [POOL]: 'batch-ondemand' } },
  ),
  mutated: (pod) => (pod as unknown as ClusterPod).spec.nodeSelector?.[POOL] === 'batch-spot',
};

// examples/rules/prefer-arm64-web.yaml: frontend Deployment Pods of production and staging prefer arm64 (weight 60),
// appended unless an identical preference (weight and requirement set) is there, as the engine deduplicates.
const PREFER_ARM64: MutatingPolicy = {
  ...podPolicy({
    name: 'prefer-arm64-web',
    namespaces: ['production', 'staging'],
    conditions: {
      deployment: OWNED_BY.Deployment,
      'not-bound': NOT_BOUND,
      frontend: "object.metadata.?labels[?'app.kubernetes.io/component'].orValue('') == 'frontend'",
    },
    variables: {
      preferred: 'object.spec.?affinity.?nodeAffinity.?preferredDuringSchedulingIgnoredDuringExecution.orValue([])',
    },
    jsonPatch: `variables.preferred.exists(p, p.weight == 60 && !has(p.preference.matchFields) &&
    p.preference.?matchExpressions.orValue([]).size() > 0 &&
    p.preference.matchExpressions.all(e, e.key == '${ARCH}' && e.operator == 'In' &&
      e.?values.orValue([]).size() > 0 && e.values.all(v, v == 'arm64')))
  ? []
  : !has(object.spec.affinity)
    ? [JSONPatch{op: 'add', path: '/spec/affinity', value: Object.spec.affinity{nodeAffinity: Object.spec.affinity.nodeAffinity{
        preferredDuringSchedulingIgnoredDuringExecution: [${ARM64_PREFERENCE}]}}}]
    : !has(object.spec.affinity.nodeAffinity)
      ? [JSONPatch{op: 'add', path: '/spec/affinity/nodeAffinity', value: Object.spec.affinity.nodeAffinity{
          preferredDuringSchedulingIgnoredDuringExecution: [${ARM64_PREFERENCE}]}}]
      : [JSONPatch{op: 'add', path: '/spec/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution',
          value: variables.preferred.map(p, ${PREFERRED_TYPE}{weight: p.weight, preference: ${PREFERRED_TYPE}.preference{
            ?matchExpressions: p.preference.?matchExpressions.optMap(l, l.map(e, ${requirement(`${PREFERRED_TYPE}.preference.matchExpressions`)})),
            ?matchFields: p.preference.?matchFields.optMap(l, l.map(e, ${requirement(`${PREFERRED_TYPE}.preference.matchFields`)}))}})
            + [${ARM64_PREFERENCE}]}]`,
  }),
  probe: probe(
    'staging',
    {
      name: 'web-probe',
      labels: { 'app.kubernetes.io/component': 'frontend', 'pod-template-hash': '6c9f7d8b4' },
      ownerReferences: [probeOwner('ReplicaSet', 'web-probe-6c9f7d8b4')],
    },
    {},
  ),
  mutated: (pod) => JSON.stringify((pod as unknown as ClusterPod).spec['affinity'] ?? {}).includes('arm64'),
};

// examples/rules/retire-old-zone-taint.yaml, enabled: every Pod (but DaemonSets') tolerating the retiring zone's taint
// loses that toleration: the whole list is replaced without it.
const RETIRE_ZONE_TAINT: MutatingPolicy = {
  ...podPolicy({
    name: 'retire-old-zone-taint',
    conditions: {
      'not-a-daemonset-pod': NOT_DAEMONSET,
      'not-bound': NOT_BOUND,
      'tolerates-retiring': `object.spec.?tolerations.orValue([]).exists(t, t.?key.orValue('') == '${RETIRING}')`,
    },
    jsonPatch: `[JSONPatch{op: 'replace', path: '/spec/tolerations',
  value: object.spec.tolerations.filter(t, t.?key.orValue('') != '${RETIRING}').map(t, Object.spec.tolerations{
    ?key: t.?key, ?operator: t.?operator, ?value: t.?value, ?effect: t.?effect, ?tolerationSeconds: t.?tolerationSeconds})}]`,
  }),
  probe: probe(
    'finance',
    { name: 'retire-probe' },
    { tolerations: [{ key: RETIRING, operator: 'Exists', effect: 'NoSchedule' }] },
  ),
  mutated: (pod) => !JSON.stringify((pod as unknown as ClusterPod).spec.tolerations ?? []).includes(RETIRING),
};

const POLICIES: readonly MutatingPolicy[] = [migrationPolicy(), BATCH_TO_SPOT, PREFER_ARM64, RETIRE_ZONE_TAINT];

// The Nodes of nodes.ts but one per pool and architecture: each Pod below has one best Node, so two Pods with the same
// scheduling fields bind to the same one. The rest are cordoned.
const CORDONED = ['legacy-2', 'merged-spot-1', 'merged-spot-2', 'batch-spot-2'];

/** The example tests' own manifests, as their rules' workloads. */
async function exampleObjects(): Promise<Json[]> {
  const documents = async (file: string) =>
    parseAllDocuments(await readFile(join('examples/tests', file), 'utf8')).map((document) => document.toJS() as Json);
  const checkout = await documents('migrate-legacy-pool/resources/checkout.yaml');
  const web = await documents('prefer-arm64-web/resources/web.yaml');
  return [
    ...checkout.filter((object) => object['kind'] === 'Deployment'),
    // The Argo Rollout beside it needs Argo's CRD; argo-rollouts.test.ts has it.
    ...web.filter((object) => object['kind'] === 'Deployment'),
    ...(await documents('batch-to-spot-pool/resources/jobs.yaml')),
    ...(await documents('retire-old-zone-taint/resources/pod.yaml')),
  ];
}

// The Job the CronJob's schedule would make, made now (its controller is the CronJob, as the schedule's would be).
const CRONJOB_JOB = ['create', 'job', 'nightly-report-manual', '--from=cronjob/nightly-report', '-n', 'batch'];

/** One group of the examples' Pods, what the rule makes of them, and the Node they bind to. */
interface ExampleCase {
  readonly rule: string;
  readonly pods: string;
  readonly namespace: string;
  readonly query: Readonly<Record<string, string>>;
  readonly count: number;
  /** The one best Node, or undefined where several tie (the scheduler then picks one at random). */
  readonly node?: string;
  /** A subset of the scheduling fields (schedulingOf) that each Pod has under both. */
  readonly expected: Json;
  /** Whether the rule changes these Pods (those a second admission is tried on). */
  readonly changed: boolean;
}

const NOT_READY_TOLERATIONS = ['not-ready', 'unreachable'].map((condition) => ({
  key: `node.kubernetes.io/${condition}`,
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
}));

const CASES: readonly ExampleCase[] = [
  {
    rule: 'migrate-legacy-pool',
    pods: 'the checkout Deployment of production',
    namespace: 'production',
    query: { labelSelector: 'app.kubernetes.io/name=checkout' },
    count: 3,
    node: 'merged-1',
    expected: {
      annotations: { 'example.com/migration': 'merged-pool' },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: ARCH, operator: 'In', values: ['amd64'] },
                  { key: POOL, operator: 'In', values: ['merged'] },
                ],
              },
            ],
          },
        },
      },
    },
    changed: true,
  },
  {
    rule: 'migrate-legacy-pool',
    pods: 'the checkout Deployment of staging, which neither selects',
    namespace: 'staging',
    query: { labelSelector: 'app.kubernetes.io/name=checkout' },
    count: 1,
    node: 'legacy-1',
    expected: { annotations: {} },
    changed: false,
  },
  {
    rule: 'batch-to-spot-pool',
    pods: "the CronJob's Job",
    namespace: 'batch',
    query: { labelSelector: 'batch.kubernetes.io/job-name=nightly-report-manual' },
    count: 1,
    node: 'batch-spot-1',
    expected: {
      nodeSelector: { [POOL]: 'batch-spot' },
      // DefaultTolerationSeconds runs before both.
      tolerations: [...NOT_READY_TOLERATIONS, { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' }],
    },
    changed: true,
  },
  {
    rule: 'batch-to-spot-pool',
    pods: 'the bare Pod debug, which neither selects',
    namespace: 'batch',
    query: { fieldSelector: 'metadata.name=debug' },
    count: 1,
    node: 'batch-ondemand-1',
    expected: { nodeSelector: { [POOL]: 'batch-ondemand' }, tolerations: NOT_READY_TOLERATIONS },
    changed: false,
  },
  {
    rule: 'batch-to-spot-pool',
    pods: 'the Job reindex, which neither selects',
    namespace: 'batch',
    query: { labelSelector: 'batch.kubernetes.io/job-name=reindex' },
    count: 1,
    expected: { nodeSelector: null, affinity: null },
    changed: false,
  },
  {
    rule: 'prefer-arm64-web',
    pods: 'the web Deployment of staging',
    namespace: 'staging',
    query: { labelSelector: 'app.kubernetes.io/name=web' },
    count: 1,
    node: 'merged-2',
    expected: {
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 60, preference: { matchExpressions: [{ key: ARCH, operator: 'In', values: ['arm64'] }] } },
          ],
        },
      },
    },
    changed: true,
  },
  {
    rule: 'retire-old-zone-taint',
    pods: 'the bare Pod ledger-0',
    namespace: 'finance',
    query: { fieldSelector: 'metadata.name=ledger-0' },
    count: 1,
    expected: { tolerations: NOT_READY_TOLERATIONS },
    changed: true,
  },
];

/** The scheduling fields of a Pod and its annotations but the webhook's own (APPLIED_ANNOTATION and its stamp). */
function schedulingOf(pod: ClusterPod): Json {
  const annotations = { ...pod.metadata.annotations };
  delete annotations[APPLIED_ANNOTATION];
  delete annotations[STAMP_ANNOTATION];
  return {
    affinity: pod.spec['affinity'] ?? null,
    nodeSelector: pod.spec.nodeSelector ?? null,
    tolerations: pod.spec.tolerations ?? null,
    annotations,
  };
}

/** The case's Pods once `count` of them are bound, leaving out those being deleted. */
async function boundPods(plane: ControlPlane, example: ExampleCase): Promise<ClusterPod[]> {
  return waitFor(`${example.pods}: ${example.count} bound Pods`, async () => {
    const list = await plane.admin.json<{ items: ClusterPod[] }>(
      'GET',
      `/api/v1/namespaces/${example.namespace}/pods`,
      {
        query: example.query,
      },
    );
    const live = list.items.filter((pod) => pod.metadata.deletionTimestamp === undefined);
    return live.length === example.count && live.every((pod) => pod.spec.nodeName !== undefined) ? live : undefined;
  });
}

/** Creates the examples' workloads and returns each case's Pods, once bound. */
async function admitExamples(plane: ControlPlane, objects: readonly Json[]): Promise<Map<ExampleCase, ClusterPod[]>> {
  await kubectlObjects(plane, 'create', objects);
  await kubectlOk(plane, CRONJOB_JOB);
  const pods = new Map<ExampleCase, ClusterPod[]>();
  for (const example of CASES) pods.set(example, await boundPods(plane, example));
  return pods;
}

/** Deletes them, waiting until their Pods are gone (foreground: the next phase creates the same names). */
async function deleteExamples(plane: ControlPlane, objects: readonly Json[]): Promise<void> {
  await kubectlOk(
    plane,
    ['delete', '-f', '-', '--ignore-not-found', '--cascade=foreground', '--wait=true', '--timeout=120s'],
    objects.map((object) => stringify(object)).join('---\n'),
  );
}

/**
 * A second admission of the stored Pod: a new Pod of its metadata (named by its generateName, else its name and a
 * dash) and spec, unbound, sent with a dry run, as the API server would store it.
 */
function readmitted(plane: ControlPlane, pod: ClusterPod): Promise<ClusterPod> {
  const { metadata } = pod;
  const spec: Json = { ...pod.spec };
  delete spec['nodeName'];
  const again = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: (metadata as { generateName?: string }).generateName ?? `${metadata.name}-`,
      labels: metadata.labels,
      annotations: metadata.annotations,
      ownerReferences: metadata.ownerReferences,
    },
    spec,
  };
  return plane.admin.json<ClusterPod>('POST', `/api/v1/namespaces/${metadata.namespace}/pods`, {
    body: again,
    query: { dryRun: 'All' },
  });
}

/**
 * examples/tests/migrate-legacy-pool's fan-out Deployment's Pod (65 required terms on the legacy pool, one a zone), as
 * its ReplicaSet would send it, with a dry run: the answer's status and the Pod or the refusal.
 */
async function fanOutAdmission(plane: ControlPlane): Promise<{ status: number; text: string; pod: ClusterPod }> {
  const [deployment] = parseAllDocuments(
    await readFile('examples/tests/migrate-legacy-pool/resources/fan-out.yaml', 'utf8'),
  ).map((document) => document.toJS() as { spec: { template: { metadata: Json; spec: Json } } });
  const { metadata, spec } = deployment!.spec.template;
  const answer = await plane.admin.request('POST', '/api/v1/namespaces/production/pods', {
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ...metadata,
        generateName: 'fan-out-5f6d7c8b9-',
        labels: { ...(metadata['labels'] as Json), 'pod-template-hash': '5f6d7c8b9' },
        ownerReferences: [probeOwner('ReplicaSet', 'fan-out-5f6d7c8b9')],
      },
      spec,
    },
    query: { dryRun: 'All' },
  });
  return { status: answer.status, text: answer.text, pod: answer.body as ClusterPod };
}

/** The required terms of a Pod's node affinity. */
function requiredTerms(pod: ClusterPod): { matchExpressions: Json[] }[] {
  const affinity = pod.spec['affinity'] as
    { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: never[] } } } | undefined;
  return affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
}

/** The cases whose Pods the rules change, for the second admission. */
const CHANGED = CASES.filter((example) => example.changed);

let objects: Json[];
let rules: string;
let webhook: ServedWebhook;
const underPolicies = new Map<ExampleCase, ClusterPod[]>();
const underWebhook = new Map<ExampleCase, ClusterPod[]>();

beforeAll(async () => {
  const plane = cluster();
  for (const namespace of ['production', 'staging', 'batch', 'finance']) await plane.ensureNamespace(namespace);
  for (const node of CORDONED)
    await plane.admin.json('PATCH', `/api/v1/nodes/${node}`, {
      body: { spec: { unschedulable: true } },
      contentType: 'application/merge-patch+json',
    });
  objects = await exampleObjects();
  // examples/rules, with retire-old-zone-taint enabled: drafted disabled, it would change nothing to compare.
  rules = join(plane.dir, 'rules');
  await cp('examples/rules', rules, { recursive: true });
  const retire = join(rules, 'retire-old-zone-taint.yaml');
  const draft = parse(await readFile(retire, 'utf8')) as { spec: Json };
  await writeFile(retire, stringify({ ...draft, spec: { ...draft.spec, enable: true } }));
  // --watch: the rule the reinvocation tests write into the folder is published within a second.
  webhook = await serveWebhook(plane, { rules: [rules], flags: ['--watch'] });
});
afterAll(async () => webhook?.stop());

describe('the example workloads under the rules as MutatingAdmissionPolicies alone', () => {
  beforeAll(async () => {
    const plane = cluster();
    for (const policy of POLICIES) await applyMutatingPolicy(plane, policy);
    for (const [example, pods] of await admitExamples(plane, objects)) underPolicies.set(example, pods);
  });
  afterAll(async () => {
    const plane = cluster();
    await deleteExamples(plane, objects);
    for (const policy of POLICIES) await deleteMutatingPolicy(plane, policy);
  });

  it.each(CASES.map((example) => [`${example.rule}: ${example.pods}`, example] as const))(
    'are stored as the rule says: %s',
    (_name, example) => {
      for (const pod of underPolicies.get(example) ?? []) expect(schedulingOf(pod)).toMatchObject(example.expected);
    },
  );

  it.each(CHANGED.map((example) => [`${example.rule}: ${example.pods}`, example] as const))(
    'are stored again unchanged when a stored Pod is admitted a second time: %s',
    async (_name, example) => {
      const [stored] = underPolicies.get(example) ?? [];
      const again = await readmitted(cluster(), stored!);

      expect(schedulingOf(again)).toEqual(schedulingOf(stored!));
    },
  );

  it('differ from ours on fan-out: the policy admits the Pod with 65 required terms, having no limit to deny by', async () => {
    const { status, pod } = await fanOutAdmission(cluster());

    expect(status).toBe(201);
    const terms = requiredTerms(pod);
    expect(terms).toHaveLength(65);
    expect(terms[64]).toEqual({
      matchExpressions: [
        { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-65'] },
        { key: POOL, operator: 'In', values: ['merged'] },
      ],
    });
  });
});

describe('the example workloads under the webhook alone, against the same under the policies', () => {
  beforeAll(async () => {
    const plane = cluster();
    await applyWebhookConfiguration(plane, await webhookConfiguration(plane, webhook), DEFAULT_WEBHOOK_NAME);
    for (const [example, pods] of await admitExamples(plane, objects)) underWebhook.set(example, pods);
  });
  afterAll(async () => deleteExamples(cluster(), objects));

  it('checked equal: the checkout Pods of production are stored with the same spec and migration annotation, stamps aside', () => {
    const checkout = CASES[0]!;
    const byPolicy = underPolicies.get(checkout)!.map(schedulingOf);
    const byWebhook = underWebhook.get(checkout)!.map(schedulingOf);

    expect(byWebhook).toHaveLength(3);
    expect(byWebhook).toEqual(byPolicy);
    expect(underWebhook.get(checkout)![0]!.metadata.annotations?.[APPLIED_ANNOTATION]).toBe(MIGRATION_POLICY_NAME);
  });

  it.each(CASES.map((example) => [`${example.rule}: ${example.pods}`, example] as const))(
    'are stored with the same scheduling fields as under the policy, and bound to the same Node where one is best: %s',
    (_name, example) => {
      const byPolicy = underPolicies.get(example)!;
      const byWebhook = underWebhook.get(example)!;

      expect(byWebhook.map(schedulingOf)).toEqual(byPolicy.map(schedulingOf));
      for (const pod of byWebhook) expect(schedulingOf(pod)).toMatchObject(example.expected);
      if (example.node !== undefined) {
        expect(new Set(byPolicy.map((pod) => pod.spec.nodeName))).toEqual(new Set([example.node]));
        expect(new Set(byWebhook.map((pod) => pod.spec.nodeName))).toEqual(new Set([example.node]));
      }
    },
  );

  it.each(CHANGED.map((example) => [`${example.rule}: ${example.pods}`, example] as const))(
    'are stored again unchanged, stamps included, when a stored Pod is admitted a second time: %s',
    async (_name, example) => {
      const [stored] = underWebhook.get(example) ?? [];
      const again = await readmitted(cluster(), stored!);

      expect(schedulingOf(again)).toEqual(schedulingOf(stored!));
      expect(again.metadata.annotations?.[APPLIED_ANNOTATION]).toBe(stored!.metadata.annotations?.[APPLIED_ANNOTATION]);
    },
  );

  it('deny the fan-out Pod, whose 65 required terms are above the 64 a rule may produce', async () => {
    const { status, text } = await fanOutAdmission(cluster());

    expect(status).toBe(400);
    expect(text).toContain('required node selector terms after combining would be 65, above the limit of 64');
  });
});

// A rule of the webhook that pins a named Deployment to the legacy pool again, after the policy moved it off: the
// webhook runs after every policy (the API server's admission chain), so what it adds is what a reinvocation sees.
const REPIN = {
  name: 'repin-legacy',
  spec: {
    enable: true,
    workloadSelector: { namespaces: ['production'], kinds: ['Deployment'], names: ['pinned'] },
    mutationAdd: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: POOL, operator: 'In', values: ['legacy'] }] }],
        },
      },
    },
  },
};

/** A Pod of the Deployment pinned, on the legacy pool and amd64, as its ReplicaSet sends it (named, for the log). */
const PINNED_NAME = 'pinned-7b8c9d6f5-x2k4q';
const PINNED = probe(
  'production',
  {
    name: PINNED_NAME,
    labels: { 'pod-template-hash': '7b8c9d6f5' },
    ownerReferences: [probeOwner('ReplicaSet', 'pinned-7b8c9d6f5')],
  },
  {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            {
              matchExpressions: [
                { key: POOL, operator: 'In', values: ['legacy'] },
                { key: ARCH, operator: 'In', values: ['amd64'] },
              ],
            },
          ],
        },
      },
    },
  },
);

function admitPinned(plane: ControlPlane): Promise<ClusterPod> {
  return plane.admin.json<ClusterPod>('POST', '/api/v1/namespaces/production/pods', {
    body: PINNED.pod,
    query: { dryRun: 'All' },
  });
}

describe('reinvocation: migrate-legacy-pool as a policy beside the webhook, whose repin-legacy adds the legacy pool back', () => {
  beforeAll(async () => {
    const plane = cluster();
    await writeFile(join(rules, `${REPIN.name}.yaml`), stringify(podMutationObject(REPIN.name, REPIN.spec)));
    // serve --refresh 1 re-reads the folder: wait until the webhook applies the new rule.
    await waitFor('the webhook to serve repin-legacy', async () =>
      (await admitPinned(plane)).metadata.annotations?.[APPLIED_ANNOTATION]?.includes(REPIN.name) ? true : undefined,
    );
  });

  const legacyAndMerged = [
    { key: ARCH, operator: 'In', values: ['amd64'] },
    { key: POOL, operator: 'In', values: ['merged'] },
    { key: POOL, operator: 'In', values: ['legacy'] },
  ];
  it.each([
    [
      'Never: the policy runs once, before the webhook, and the Pod is stored with the legacy pool the webhook ANDed in (a term no Node meets)',
      'Never',
      1,
      legacyAndMerged,
    ],
    [
      'IfNeeded: the policy runs again after the webhook changed the Pod and takes the legacy pool out once more',
      'IfNeeded',
      2,
      legacyAndMerged.slice(0, 2),
    ],
  ] as const)('with reinvocationPolicy %s', async (_name, reinvocationPolicy, runs, expressions) => {
    const plane = cluster();
    const policy = migrationPolicy(reinvocationPolicy);
    await applyMutatingPolicy(plane, policy);
    const checks = await policyChecks(plane, policy.name);
    const calls = admissionsOf(webhook, PINNED_NAME).length;

    const pod = await admitPinned(plane);
    const ran = (await policyChecks(plane, policy.name)) - checks;
    await deleteMutatingPolicy(plane, policy);

    expect(requiredTerms(pod)).toEqual([{ matchExpressions: expressions }]);
    expect(ran).toBe(runs);
    // The policy ran first, so the webhook's migrate-legacy-pool found no legacy pool; the webhook (reinvocationPolicy
    // Never, as webhook-config prints it) was called once either way.
    expect(pod.metadata.annotations?.[APPLIED_ANNOTATION]).toBe(REPIN.name);
    expect(pod.metadata.annotations?.['example.com/migration']).toBe('merged-pool');
    expect(admissionsOf(webhook, PINNED_NAME)).toHaveLength(calls + 1);
  });
});

describe('what a MutatingAdmissionPolicy cannot say', () => {
  it('has no audit mode: the API server refuses validationActions on a MutatingAdmissionPolicyBinding, which ours has as the enforcement annotation', async () => {
    const plane = cluster();
    const { binding } = migrationPolicy();
    const audited = { ...binding, spec: { ...(binding['spec'] as Json), validationActions: ['Audit'] } };

    const run = await plane.kubectl(['apply', '--validate=strict', '-f', '-'], { input: JSON.stringify(audited) });

    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('unknown field "spec.validationActions"');
  });
});
