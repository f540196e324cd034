/**
 * docs/api.md "Admission plugins that run before the webhook", against the real API server: workloads whose Pods the
 * in-tree mutating admission plugins change before the webhook sees them (ExtendedResourceToleration, RuntimeClass,
 * DefaultTolerationSeconds, PodNodeSelector, PodTolerationRestriction) and one a MutatingAdmissionPolicy changes,
 * admitted by the webhook under the current rules; `podmutation report --kubeconfig` reads them current and exits 0,
 * and still reads pending what a change of the rules would change.
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';
import { podFacts, type Pod as EnginePod } from '../../lib/engine/index.ts';
import type { MigrationReport } from '../../lib/report/index.ts';
import { admissionInputs, asAdmitted } from '../../lib/report/admitted.ts';
import { readRuntimeClass } from '../../lib/report/runtime-class.ts';
import { runPodmutation } from '../support/cli.ts';
import { fixturePath } from '../support/fixtures.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { documentedKinds } from './documented.ts';
import { capacityFile, kubectlObjects, kubectlOk, untilRolledOut } from './kubectl.ts';
import { createTestNodes, type TestNode } from './nodes.ts';
import { livePods } from './pods.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import { serveAndRegister, type ServedWebhook } from './webhook.ts';

const cluster = useControlPlane();

type Toleration = { key?: string; operator?: string; value?: string; effect?: string; tolerationSeconds?: number };
type Pod = {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec: { nodeName?: string; nodeSelector?: Record<string, string>; tolerations?: Toleration[] };
  status?: { phase?: string };
};

const GPU = 'nvidia.com/gpu';
const SPOT_TOLERATION = { key: 'example.com/spot', operator: 'Exists', effect: 'NoSchedule' };
const SANDBOX_TOLERATION = { key: 'example.com/sandbox', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' };
const DEDICATED_TOLERATION = {
  key: 'example.com/dedicated',
  operator: 'Equal',
  value: 'restricted',
  effect: 'NoSchedule',
};
const POLICY_TOLERATION = { key: 'example.com/policy', operator: 'Exists', effect: 'NoSchedule' };

// A GPU Node (tainted as EKS taints its GPU nodes) and a gVisor Node that only the RuntimeClass's Pods tolerate.
const NODES: readonly TestNode[] = [
  {
    name: 'gpu-1',
    pool: 'gpu',
    capacityType: 'on-demand',
    instanceType: 'g5.xlarge',
    arch: 'amd64',
    zone: 'eu-west-1a',
    taints: [{ key: GPU, value: 'present', effect: 'NoSchedule' }],
    extendedResources: { [GPU]: '4' },
  },
  {
    name: 'sandbox-1',
    pool: 'merged',
    capacityType: 'on-demand',
    instanceType: 'm6i.large',
    arch: 'amd64',
    zone: 'eu-west-1b',
    taints: [{ key: 'example.com/sandbox', value: 'gvisor', effect: 'NoSchedule' }],
    labels: { 'example.com/sandbox': 'gvisor' },
  },
];

// node.k8s.io/v1: the RuntimeClass admission plugin (on by default) merges scheduling into each Pod that names it.
const RUNTIME_CLASS = {
  apiVersion: 'node.k8s.io/v1',
  kind: 'RuntimeClass',
  metadata: { name: 'gvisor' },
  handler: 'runsc',
  scheduling: { nodeSelector: { 'example.com/sandbox': 'gvisor' }, tolerations: [SANDBOX_TOLERATION] },
};

// The PodNodeSelector and PodTolerationRestriction plugins read these annotations of the Pod's namespace.
const RESTRICTED_ANNOTATIONS = {
  'scheduler.alpha.kubernetes.io/node-selector': 'example.com/node-pool=merged',
  'scheduler.alpha.kubernetes.io/defaultTolerations': JSON.stringify([DEDICATED_TOLERATION]),
};

// A MutatingAdmissionPolicy (admissionregistration.k8s.io/v1, on by default since 1.36): runs before every webhook.
const POLICY = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'MutatingAdmissionPolicy',
  metadata: { name: 'tolerate-policy-nodes' },
  spec: {
    matchConstraints: {
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
    },
    failurePolicy: 'Fail',
    reinvocationPolicy: 'Never',
    mutations: [
      {
        patchType: 'JSONPatch',
        jsonPatch: {
          // DefaultTolerationSeconds ran first, so the list exists.
          expression:
            '[JSONPatch{op: "add", path: "/spec/tolerations/-", value: Object.spec.tolerations{key: "example.com/policy", operator: "Exists", effect: "NoSchedule"}}]',
        },
      },
    ],
  },
};
const POLICY_BINDING = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'MutatingAdmissionPolicyBinding',
  metadata: { name: 'tolerate-policy-nodes' },
  spec: {
    policyName: 'tolerate-policy-nodes',
    matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'policy' } } },
  },
};

// The rules the workloads are admitted under, as a later change makes them, and two the API server refuses after the
// webhook (test/fixtures/report/admission-plugins, which also holds what this cluster stored, for the offline tests).
const RULES = fixturePath('report/admission-plugins');

function template(name: string, spec: Json): Json {
  return {
    metadata: { labels: { 'app.kubernetes.io/name': name } },
    spec: { containers: [{ name: 'app', image: `registry.example.com/${name}:1` }], ...spec },
  };
}

function deployment(namespace: string, name: string, replicas: number, spec: Json): Json {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: { replicas, selector: { matchLabels: { 'app.kubernetes.io/name': name } }, template: template(name, spec) },
  };
}

const WORKLOADS: readonly Json[] = [
  // ExtendedResourceToleration: a toleration of nvidia.com/gpu, from the limit (requests default to limits).
  deployment('ml', 'trainer', 1, {
    nodeSelector: { 'example.com/node-pool': 'legacy' },
    containers: [{ name: 'train', image: 'registry.example.com/trainer:1', resources: { limits: { [GPU]: '1' } } }],
  }),
  // RuntimeClass: its node selector and toleration, for a Deployment and a StatefulSet.
  deployment('sandbox', 'renderer', 2, { runtimeClassName: 'gvisor' }),
  {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'cache', namespace: 'sandbox' },
    spec: {
      replicas: 2,
      serviceName: 'cache',
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { 'app.kubernetes.io/name': 'cache' } },
      template: template('cache', { runtimeClassName: 'gvisor' }),
    },
  },
  // PodNodeSelector and PodTolerationRestriction: the namespace's node selector and default toleration, and (a Pod
  // that requests cpu is not BestEffort) the memory-pressure toleration.
  deployment('restricted', 'api', 1, {
    containers: [{ name: 'api', image: 'registry.example.com/api:1', resources: { requests: { cpu: '100m' } } }],
  }),
  // The MutatingAdmissionPolicy's toleration.
  deployment('policy', 'worker', 1, {}),
];

// namespace, Deployment or StatefulSet, label value, Pods.
const ROLLED_OUT: readonly (readonly [string, string, string, number])[] = [
  ['ml', 'deployment/trainer', 'trainer', 1],
  ['sandbox', 'deployment/renderer', 'renderer', 2],
  ['sandbox', 'statefulset/cache', 'cache', 2],
  ['restricted', 'deployment/api', 'api', 1],
  ['policy', 'deployment/worker', 'worker', 1],
];

/** The live Pods of the workload labelled app.kubernetes.io/name=NAME. */
function podsOf(plane: ControlPlane, namespace: string, name: string) {
  return livePods(plane, namespace, `app.kubernetes.io/name=${name}`);
}

async function reportOf(
  plane: ControlPlane,
  folder: string,
  objects?: string,
): Promise<{ readonly code: number | null; readonly stderr: string; readonly result: MigrationReport }> {
  const source =
    objects === undefined
      ? ['--kubeconfig', plane.adminKubeconfig, '-A']
      : ['--objects', objects, '--capacity', await capacityFile(plane, 'admission-plugins-capacity.yaml')];
  const run = await runPodmutation(['report', ...source, '--rules', folder, '-o', 'json']);
  expect(run.code === 0 || run.code === 1, `report exited ${run.code}: ${run.stderr}`).toBe(true);
  return { code: run.code, stderr: run.stderr, result: JSON.parse(run.stdout) as MigrationReport };
}

function rows(result: MigrationReport) {
  return result.workloads.map(({ namespace, kind, name, pods, current, pending, rules: matched, change }) => ({
    namespace,
    kind,
    name,
    pods,
    current,
    pending,
    rules: matched,
    change,
  }));
}

/** Waits until the MutatingAdmissionPolicy changes a dry-run Pod of its namespace: the API server loaded it. */
async function untilPolicyApplies(plane: ControlPlane): Promise<void> {
  const probe = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'policy-probe-' },
    spec: { containers: [{ name: 'c', image: 'probe' }] },
  };
  await waitFor('the MutatingAdmissionPolicy to apply', async () => {
    const pod = await plane.admin.json<Pod>('POST', '/api/v1/namespaces/policy/pods', {
      body: probe,
      query: { dryRun: 'All' },
    });
    return (pod.spec.tolerations ?? []).some((toleration) => toleration.key === POLICY_TOLERATION.key)
      ? true
      : undefined;
  });
}

describe('workloads whose Pods admission plugins change before the webhook', () => {
  let webhook: ServedWebhook;
  let current: string;
  let changed: string;

  beforeAll(async () => {
    const plane = cluster();
    await createTestNodes(plane.admin, NODES);
    // A copy: the last test adds rules to it.
    current = join(plane.dir, 'rules');
    await cp(join(RULES, 'current'), current, { recursive: true });
    changed = join(RULES, 'changed');
    // --watch: a rule file written later (the last test) is published within a second.
    webhook = await serveAndRegister(plane, { rules: [current], flags: ['--watch'] });
    for (const namespace of ['ml', 'sandbox', 'policy']) await plane.ensureNamespace(namespace);
    await plane.ensureNamespace('plain');
    for (const namespace of ['restricted', 'plain-restricted']) {
      await plane.ensureNamespace(namespace);
      await kubectlOk(plane, [
        'annotate',
        'namespace',
        namespace,
        ...Object.entries(RESTRICTED_ANNOTATIONS).map(([key, value]) => `${key}=${value}`),
      ]);
    }
    await kubectlObjects(plane, 'apply', [RUNTIME_CLASS, POLICY, POLICY_BINDING]);
    await untilPolicyApplies(plane);
    await kubectlObjects(plane, 'create', WORKLOADS);
    for (const [namespace, workload] of ROLLED_OUT) await untilRolledOut(plane, namespace, workload);
  });

  afterAll(async () => {
    await webhook?.stop();
  });

  it('are changed by the plugins and the policy before the webhook, and admitted by the webhook under the rules', async () => {
    const plane = cluster();
    const [trainer] = await podsOf(plane, 'ml', 'trainer');
    const [renderer] = await podsOf(plane, 'sandbox', 'renderer');
    const [api] = await podsOf(plane, 'restricted', 'api');
    const [worker] = await podsOf(plane, 'policy', 'worker');

    expect(trainer?.spec.tolerations).toContainEqual({ key: GPU, operator: 'Exists', effect: 'NoSchedule' });
    expect(trainer?.spec.nodeSelector).toEqual({ 'example.com/node-pool': 'gpu' });
    expect(trainer?.spec.nodeName).toBe('gpu-1');
    expect(renderer?.spec.nodeSelector).toEqual({ 'example.com/sandbox': 'gvisor' });
    expect(renderer?.spec.tolerations).toContainEqual(SANDBOX_TOLERATION);
    expect(renderer?.spec.nodeName).toBe('sandbox-1');
    expect(api?.spec.nodeSelector).toEqual({ 'example.com/node-pool': 'merged' });
    expect(api?.spec.tolerations).toContainEqual({
      key: 'node.kubernetes.io/memory-pressure',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
    // restricted-spot removed the toleration PodTolerationRestriction had added, and the API server, which runs its
    // plugins again after a webhook changed the Pod (k8s.io/apiserver pkg/admission/reinvocation.go), added it back.
    expect(api?.spec.tolerations).toContainEqual(DEDICATED_TOLERATION);
    expect(worker?.spec.tolerations).toContainEqual(POLICY_TOLERATION);
    for (const [namespace, , name, count] of ROLLED_OUT) {
      const pods = await podsOf(plane, namespace, name);
      expect(pods).toHaveLength(count);
      for (const pod of pods) {
        expect(pod.metadata.annotations?.[APPLIED_ANNOTATION], pod.metadata.name).toMatch(
          /^(gpu-pool|sandbox-spot|restricted-spot)$/,
        );
        expect(pod.status?.phase, pod.metadata.name).toBe('Running');
      }
    }
  });

  it('are read current by the report under the rules they were admitted with, which exits 0', async () => {
    const { code, stderr, result } = await reportOf(cluster(), current);

    expect(rows(result)).toEqual([
      {
        namespace: 'ml',
        kind: 'Deployment',
        name: 'trainer',
        pods: 1,
        current: 1,
        pending: 0,
        rules: ['gpu-pool'],
        change: '',
      },
      {
        namespace: 'policy',
        kind: 'Deployment',
        name: 'worker',
        pods: 1,
        current: 1,
        pending: 0,
        rules: ['sandbox-spot'],
        change: '',
      },
      {
        namespace: 'restricted',
        kind: 'Deployment',
        name: 'api',
        pods: 1,
        current: 1,
        pending: 0,
        rules: ['restricted-spot'],
        change: '',
      },
      {
        namespace: 'sandbox',
        kind: 'Deployment',
        name: 'renderer',
        pods: 2,
        current: 2,
        pending: 0,
        rules: ['sandbox-spot'],
        change: '',
      },
      {
        namespace: 'sandbox',
        kind: 'StatefulSet',
        name: 'cache',
        pods: 2,
        current: 2,
        pending: 0,
        rules: ['sandbox-spot'],
        change: '',
      },
    ]);
    expect(result.totals).toEqual({ pods: 7, unaffected: 0, current: 7, pending: 0, denied: 0 });
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('are read pending by the report for what a change of the rules would change, and nothing else', async () => {
    const { code, result } = await reportOf(cluster(), changed);

    const spotChange = 'tolerations: -example.com/spot:NoSchedule op=Exists +example.com/spot op=Exists';
    expect(rows(result)).toEqual([
      {
        namespace: 'ml',
        kind: 'Deployment',
        name: 'trainer',
        pods: 1,
        current: 0,
        pending: 1,
        rules: ['gpu-pool'],
        change: 'nodeSelector: -example.com/node-pool=gpu +example.com/node-pool=gpu-h100',
      },
      {
        namespace: 'policy',
        kind: 'Deployment',
        name: 'worker',
        pods: 1,
        current: 0,
        pending: 1,
        rules: ['sandbox-spot'],
        change: spotChange,
      },
      {
        namespace: 'restricted',
        kind: 'Deployment',
        name: 'api',
        pods: 1,
        current: 1,
        pending: 0,
        rules: ['restricted-spot'],
        change: '',
      },
      {
        namespace: 'sandbox',
        kind: 'Deployment',
        name: 'renderer',
        pods: 2,
        current: 0,
        pending: 2,
        rules: ['sandbox-spot'],
        change: spotChange,
      },
      {
        namespace: 'sandbox',
        kind: 'StatefulSet',
        name: 'cache',
        pods: 2,
        current: 0,
        pending: 2,
        rules: ['sandbox-spot'],
        change: spotChange,
      },
    ]);
    expect(result.totals).toEqual({ pods: 7, unaffected: 0, current: 1, pending: 6, denied: 0 });
    expect(code).toBe(1);
  });

  it("says the same from the objects docs/operations.md's kubectl get prints, RuntimeClasses among them", async () => {
    const plane = cluster();
    const file = join(plane.dir, 'admission-plugins.json');
    await writeFile(file, await kubectlOk(plane, ['get', await documentedKinds(), '-A', '-o', 'json']));

    const offline = await reportOf(plane, current, file);

    expect(offline.result).toEqual((await reportOf(plane, current)).result);
    expect(offline.code).toBe(0);
  });

  // Pods sent with a dry run, in a namespace no rule selects (the webhook changes nothing, so the plugins run once):
  // the model, given the Pod the API server returns as its evidence, gives the tolerations and node selector the API
  // server gave, in its order.
  it.each([
    [
      'ExtendedResourceToleration for a limit and an init container’s request, after the Pod’s own',
      'plain',
      {
        tolerations: [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' }],
        containers: [{ name: 'a', image: 'a', resources: { limits: { [GPU]: '1' } } }],
        initContainers: [
          {
            name: 'b',
            image: 'b',
            resources: { requests: { 'example.com/fpga': '1' }, limits: { 'example.com/fpga': '1' } },
          },
        ],
      },
    ],
    [
      'ExtendedResourceToleration beside a toleration of the resource with another operator',
      'plain',
      {
        tolerations: [{ key: GPU, operator: 'Equal', value: 'x', effect: 'NoExecute' }],
        containers: [{ name: 'a', image: 'a', resources: { limits: { [GPU]: '2' } } }],
      },
    ],
    [
      'RuntimeClass, whose toleration a Pod tolerating everything covers',
      'plain',
      { runtimeClassName: 'gvisor', tolerations: [{ operator: 'Exists' }] },
    ],
    [
      'RuntimeClass, whose toleration the Pod’s own covers',
      'plain',
      { runtimeClassName: 'gvisor', tolerations: [{ key: 'example.com/sandbox', operator: 'Exists' }] },
    ],
    [
      'RuntimeClass, merged into a list with a repeat',
      'plain',
      { runtimeClassName: 'gvisor', tolerations: [SPOT_TOLERATION, SPOT_TOLERATION] },
    ],
    [
      'PodNodeSelector and PodTolerationRestriction, whose default the Pod’s own toleration covers, then RuntimeClass',
      'plain-restricted',
      {
        runtimeClassName: 'gvisor',
        nodeSelector: { app: 'api' },
        tolerations: [{ key: 'example.com/dedicated', operator: 'Exists' }],
        containers: [{ name: 'a', image: 'a', resources: { requests: { memory: '64Mi' } } }],
      },
    ],
  ])('the model gives what the API server gives: %s', async (_case, namespace, spec) => {
    const plane = cluster();
    const sent: EnginePod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: 'model-', namespace },
      spec: { containers: [{ name: 'c', image: 'c' }], ...spec },
    };
    const stored = await plane.admin.json<EnginePod>('POST', `/api/v1/namespaces/${namespace}/pods`, {
      body: sent,
      query: { dryRun: 'All' },
    });
    const facts = podFacts(stored, namespace, 'stored');
    const inputs = admissionInputs(
      {
        template: { pod: sent, path: 'sent' },
        running: facts,
        arrived: facts,
        runtimeClasses: new Map([['gvisor', readRuntimeClass(RUNTIME_CLASS, 'gvisor')]]),
      },
      'stored',
    );

    const modelled = asAdmitted(sent, inputs, 'sent');

    expect(modelled.refusal).toBeUndefined();
    expect(modelled.pod.spec?.tolerations).toEqual(stored.spec?.tolerations);
    expect(modelled.pod.spec?.nodeSelector ?? {}).toEqual(stored.spec?.nodeSelector ?? {});
  });

  it('reads denied what a rule would make the API server refuse after the webhook, as it refuses it', async () => {
    const plane = cluster();
    await cp(join(RULES, 'conflicting', 'rules.yaml'), join(current, 'conflicting.yaml'));
    const refusal = (namespace: string, spec: Json) =>
      plane.admin.request('POST', `/api/v1/namespaces/${namespace}/pods`, {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { generateName: 'refused-' },
          spec: { containers: [{ name: 'c', image: 'c' }], ...spec },
        },
        query: { dryRun: 'All' },
      });
    const sandbox = await waitFor('the webhook to serve sandbox-elsewhere', async () => {
      const answer = await refusal('sandbox', { runtimeClassName: 'gvisor' });
      return answer.status === 403 ? answer : undefined;
    });
    const restricted = await refusal('restricted', {});

    expect(sandbox.text).toContain(
      'conflict: runtimeClass.scheduling.nodeSelector[example.com/sandbox] = gvisor; pod.spec.nodeSelector[example.com/sandbox] = kata',
    );
    expect(restricted.status).toBe(403);
    expect(restricted.text).toContain('pod node label selector conflicts with its namespace node label selector');

    const { code, result } = await reportOf(plane, current);

    const denied = (message: string) => `denied: the API server's ${message}`;
    expect(
      rows(result)
        .filter((row) => row.namespace === 'sandbox' || row.namespace === 'restricted')
        .map(({ namespace, name, change }) => ({ namespace, name, change })),
    ).toEqual([
      {
        namespace: 'restricted',
        name: 'api',
        change: denied(
          'PodNodeSelector admission plugin would refuse the Pod: pod node label selector conflicts with its namespace node label selector (example.com/node-pool=merged, as the running Pod arrived at the webhook)',
        ),
      },
      ...['renderer', 'cache'].map((name) => ({
        namespace: 'sandbox',
        name,
        change: denied(
          'RuntimeClass admission plugin would refuse the Pod: conflict: runtimeClass.scheduling.nodeSelector[example.com/sandbox] = gvisor; pod.spec.nodeSelector[example.com/sandbox] = kata',
        ),
      })),
    ]);
    expect(result.totals).toMatchObject({ pods: 7, denied: 5 });
    expect(code).toBe(1);
  });
});
