/**
 * Kyverno v1.19.1's admission controller (kyverno.ts, built from its Go module and run out of cluster) beside our
 * webhook on the same API server, for the comparison in docs/compared.md: examples/rules/migrate-legacy-pool.yaml as a Kyverno
 * ClusterPolicy (fixtures/kyverno/migrate-legacy-pool.yaml) against our `podmutation serve --rules examples/rules`,
 * one registered at a time, on the production checkout Deployment of examples/tests/migrate-legacy-pool. Each test
 * asserts what the real Kyverno did; where it differs from ours, the test says so in its name.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { kubectlObjects, kubectlOk } from './kubectl.ts';
import { applyClusterPolicy, kyverno, startKyverno, type PolicyProbe, type RunningKyverno } from './kyverno.ts';
import type { ClusterPod } from './pods.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import {
  DEFAULT_WEBHOOK_NAME,
  admissionsOf,
  ruleFolder,
  serveAndRegister,
  webhookCalls,
  type ServedWebhook,
} from './webhook.ts';

const cluster = useControlPlane();

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/kyverno/${name}`, import.meta.url));
const EXAMPLE_RULES = fileURLToPath(new URL('../../examples/rules', import.meta.url));
const CHECKOUT = fileURLToPath(
  new URL('../../examples/tests/migrate-legacy-pool/resources/checkout.yaml', import.meta.url),
);
const POLICY = fixture('migrate-legacy-pool.yaml');
const UNGUARDED_POLICY = fixture('append-merged-pool.yaml');

const NAMESPACE = 'production';
const UNGUARDED = 'kyverno-unguarded';
const SELECTOR = 'app.kubernetes.io/name=checkout';
// With merged-spot-1 cordoned, merged-1 is the one Node the migrated checkout Pod fits (merged pool, amd64).
const CORDONED = 'merged-spot-1';
const ONLY_FIT = 'merged-1';
const MIGRATION = 'example.com/migration';

const expression = (key: string, values: string[]) => ({ key, operator: 'In', values });
const LEGACY = expression('example.com/node-pool', ['legacy']);
const MERGED = expression('example.com/node-pool', ['merged']);
const AMD64 = expression('kubernetes.io/arch', ['amd64']);
const required = (...expressions: Json[]) => ({
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: expressions }] },
  },
});

/** The production checkout Deployment of the example test, with one replica. */
function checkoutDeployment(): Json {
  const deployment = parseAllDocuments(readFileSync(CHECKOUT, 'utf8'))
    .map((document) => document.toJS() as { kind: string; metadata: { namespace: string }; spec: Json })
    .find(({ kind, metadata }) => kind === 'Deployment' && metadata.namespace === NAMESPACE);
  if (deployment === undefined) throw new Error(`${CHECKOUT} holds no Deployment in ${NAMESPACE}`);
  return { ...deployment, spec: { ...deployment.spec, replicas: 1 } };
}

/** The scheduling fields the comparison covers. */
function scheduling(pod: ClusterPod): Json {
  const { affinity, nodeSelector, tolerations } = pod.spec as Json & { affinity?: Json };
  return { affinity: affinity ?? null, nodeSelector: nodeSelector ?? null, tolerations: tolerations ?? null };
}

/** The checkout Deployment's one Pod, once the scheduler bound it. */
async function boundCheckoutPod(plane: ControlPlane): Promise<ClusterPod> {
  return waitFor('the checkout Pod to be bound', async () => {
    const list = await plane.admin.json<{ items: ClusterPod[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`, {
      query: { labelSelector: SELECTOR },
    });
    const [pod, ...others] = list.items;
    return pod !== undefined && others.length === 0 && pod.spec.nodeName !== undefined ? pod : undefined;
  });
}

/**
 * A Pod as a second admission gets it: the stored Pod's labels, annotations, owner and spec, unbound, named from the
 * same generateName as its ReplicaSet named it (a stamp covers the name the first admission saw).
 */
function readmitted(pod: ClusterPod): Json {
  const { generateName, namespace, labels, annotations, ownerReferences } = pod.metadata as ClusterPod['metadata'] & {
    generateName: string;
  };
  const spec = { ...pod.spec };
  delete spec.nodeName;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName, namespace, labels, annotations, ownerReferences },
    spec,
  };
}

/** The Pod the API server would store for `pod` (dryRun: every admission, webhooks included, stored nowhere). */
async function admitted(plane: ControlPlane, pod: Json): Promise<ClusterPod> {
  const namespace = (pod as { metadata: { namespace: string } }).metadata.namespace;
  return plane.admin.json<ClusterPod>('POST', `/api/v1/namespaces/${namespace}/pods`, {
    body: pod,
    query: { dryRun: 'All' },
  });
}

/**
 * A Pod of a Deployment's ReplicaSet (its name ends in -<pod-template-hash>, or of a bare ReplicaSet without the
 * label) that requires the legacy pool on amd64, as the checkout template makes it.
 */
function legacyPod(namespace: string, ofDeployment = true): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'probe-',
      namespace,
      ...(ofDeployment ? { labels: { 'pod-template-hash': '5d8f7c' } } : {}),
      // A controller reference is all either reads of the owner; a dry run never meets the garbage collector.
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'probe-5d8f7c',
          uid: '00000000-0000-4000-8000-000000000001',
          controller: true,
        },
      ],
    },
    spec: { containers: [{ name: 'app', image: 'registry.example.com/probe:1' }], affinity: required(LEGACY, AMD64) },
  };
}

const migrated: PolicyProbe = {
  namespace: NAMESPACE,
  pod: legacyPod(NAMESPACE),
  mutated: (pod) => pod.metadata.annotations?.[MIGRATION] === 'merged-pool',
};

/** Kyverno's calls, summed over its resource webhooks, and ours, as the API server counts them. */
async function calls(plane: ControlPlane, running: RunningKyverno): Promise<{ kyverno: number; ours: number }> {
  const metrics = await plane.metrics();
  return {
    kyverno: running.webhookNames.reduce((sum, name) => sum + webhookCalls(metrics, name), 0),
    ours: webhookCalls(metrics, DEFAULT_WEBHOOK_NAME),
  };
}

async function unregisterOurs(plane: ControlPlane, webhook: ServedWebhook | undefined): Promise<void> {
  await plane.admin.request(
    'DELETE',
    `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${DEFAULT_WEBHOOK_NAME}`,
  );
  await webhook?.stop();
}

let ours: ClusterPod;
let theirs: ClusterPod;
let build: Awaited<ReturnType<typeof kyverno>>;

beforeAll(async () => {
  const plane = cluster();
  build = await kyverno((line) => console.log(`[kyverno] ${line}`));
  await plane.admin.json('PATCH', `/api/v1/nodes/${CORDONED}`, {
    body: { spec: { unschedulable: true } },
    contentType: 'application/merge-patch+json',
  });
  await plane.ensureNamespace(NAMESPACE);
  await plane.ensureNamespace(UNGUARDED);
}, 20 * 60_000);

describe('our webhook, registered alone', () => {
  let webhook: ServedWebhook | undefined;

  beforeAll(async () => {
    const plane = cluster();
    webhook = await serveAndRegister(plane, { rules: [EXAMPLE_RULES] });
    await kubectlObjects(plane, 'create', [checkoutDeployment()]);
    ours = await boundCheckoutPod(plane);
  });
  afterAll(async () => {
    const plane = cluster();
    await unregisterOurs(plane, webhook);
    await kubectlOk(plane, ['delete', 'deployment', 'checkout', '-n', NAMESPACE, '--cascade=foreground', '--wait']);
  });

  it('moves the checkout Pod to the merged pool, keeping its arch requirement and toleration', () => {
    expect(ours.spec.nodeName).toBe(ONLY_FIT);
    expect(scheduling(ours)).toMatchObject({ affinity: required(AMD64, MERGED) });
    expect(ours.metadata.annotations?.[MIGRATION]).toBe('merged-pool');
  });

  it('leaves a Pod of a bare ReplicaSet alone, reading the Deployment from the ReplicaSet name and pod-template-hash', async () => {
    const plane = cluster();
    expect((await admitted(plane, legacyPod(NAMESPACE, false))).metadata.annotations).toBeUndefined();
    expect((await admitted(plane, legacyPod(NAMESPACE))).metadata.annotations?.[MIGRATION]).toBe('merged-pool');
  });

  it('leaves the stored Pod unchanged on a second admission, checking its stamp and sending no patch', async () => {
    const again = await admitted(cluster(), readmitted(ours));

    expect(scheduling(again)).toEqual(scheduling(ours));
    expect(again.metadata.annotations).toEqual(ours.metadata.annotations);
    // The webhook logs a Pod named from generateName by its generateName.
    expect(
      admissionsOf(webhook!, (readmitted(ours) as { metadata: { generateName: string } }).metadata.generateName).at(-1),
    ).toMatchObject({ stamp: 'checked', patchOperations: 0 });
  });
});

describe('Kyverno, with its policy', () => {
  let running: RunningKyverno | undefined;
  let started = 0;

  beforeAll(async () => {
    const plane = cluster();
    const begun = Date.now();
    running = await startKyverno(plane, build);
    await applyClusterPolicy(plane, running, POLICY, migrated);
    started = (Date.now() - begun) / 1000;
    await kubectlObjects(plane, 'create', [checkoutDeployment()]);
    theirs = await boundCheckoutPod(plane);
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('stores the same affinity, node selector and tolerations as ours, and the scheduler binds both to the same Node', () => {
    console.log(`[kyverno] started and enforcing its policy in ${started.toFixed(1)} s`);
    expect(scheduling(theirs)).toEqual(scheduling(ours));
    expect(theirs.spec.nodeName).toBe(ours.spec.nodeName);
    expect(theirs.metadata.annotations?.[MIGRATION]).toBe('merged-pool');
  });

  it('differs from ours in its annotations: the migration one alone, where ours adds the rule applied and its stamp', () => {
    const own = (pod: ClusterPod) => Object.keys(pod.metadata.annotations ?? {}).sort();

    expect(own(theirs)).toEqual([MIGRATION]);
    expect(own(ours)).toEqual([
      MIGRATION,
      'podmutation.agent.cloudpilot.ai/applied',
      'podmutation.agent.cloudpilot.ai/stamp',
    ]);
  });

  it('leaves a Pod of a bare ReplicaSet alone as ours does, by the same name test in JMESPath preconditions', async () => {
    const plane = cluster();
    expect((await admitted(plane, legacyPod(NAMESPACE, false))).metadata.annotations).toBeUndefined();
    expect((await admitted(plane, legacyPod(NAMESPACE))).metadata.annotations?.[MIGRATION]).toBe('merged-pool');
  });

  it('leaves the stored Pod unchanged on a second admission: it is called, and its preconditions no longer hold', async () => {
    const plane = cluster();
    const before = await calls(plane, running!);

    const again = await admitted(plane, readmitted(theirs));

    expect(scheduling(again)).toEqual(scheduling(theirs));
    expect(again.metadata.annotations).toEqual(theirs.metadata.annotations);
    expect((await calls(plane, running!)).kyverno).toBe(before.kyverno + 1);
  });
  describe('and our webhook changing the Pod after it (reinvocation)', () => {
    let webhook: ServedWebhook | undefined;
    const TOLERATION = { key: 'example.com/maintenance', operator: 'Exists', effect: 'NoSchedule' };

    beforeAll(async () => {
      const plane = cluster();
      await applyClusterPolicy(plane, running!, UNGUARDED_POLICY, {
        namespace: UNGUARDED,
        pod: legacyPod(UNGUARDED),
        mutated: (pod) => JSON.stringify(pod.spec).includes('"merged"'),
      });
      // Ours sorts after kyverno-resource-mutating-webhook-cfg, so the API server calls it after Kyverno; it adds a
      // toleration to every Pod of both namespaces, a change that makes the API server call Kyverno (IfNeeded) again.
      const rules = await ruleFolder(plane, [
        {
          name: 'tolerate-maintenance',
          spec: {
            enable: true,
            workloadSelector: { namespaces: [NAMESPACE, UNGUARDED] },
            mutationAdd: { tolerations: [TOLERATION] },
          },
        },
      ]);
      webhook = await serveAndRegister(plane, { rules: [rules] });
    });
    afterAll(async () => {
      await unregisterOurs(cluster(), webhook);
    });

    it('calls Kyverno twice and ours once (reinvocationPolicy IfNeeded against our Never); the second call changes nothing', async () => {
      const plane = cluster();
      const before = await calls(plane, running!);

      const pod = await admitted(plane, legacyPod(NAMESPACE));

      expect(await calls(plane, running!)).toEqual({ kyverno: before.kyverno + 2, ours: before.ours + 1 });
      expect(scheduling(pod)).toMatchObject({ affinity: required(AMD64, MERGED) });
      expect((pod.spec.tolerations ?? []).filter(({ key }) => key === TOLERATION.key)).toEqual([TOLERATION]);
      expect(pod.metadata.annotations?.[MIGRATION]).toBe('merged-pool');
    });

    it('appends the requirement twice when reinvoked under a policy whose change does not end its own match (kyverno/kyverno#10904)', async () => {
      const plane = cluster();
      const before = await calls(plane, running!);

      const pod = await admitted(plane, legacyPod(UNGUARDED));

      expect((await calls(plane, running!)).kyverno).toBe(before.kyverno + 2);
      expect(scheduling(pod)).toMatchObject({ affinity: required(LEGACY, AMD64, MERGED, MERGED) });
    });
  });
});
