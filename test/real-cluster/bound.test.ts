/**
 * Pods bound to a Node when they are created, against the real API server: a Pod created with spec.nodeName (what
 * `kubectl debug node/…` and a custom scheduler that creates its Pods bound send) and a mirror-shaped Pod (the
 * annotation kubernetes.io/config.mirror, owned by its Node). No scheduler places them: the kubelet of that Node admits
 * or refuses them, and it refuses a Pod whose required node affinity its Node fails (pkg/kubelet/lifecycle/predicate.go
 * generalFilter, through pkg/scheduler AdmissionCheck). So the webhook leaves them alone (docs/api.md, *Processing
 * model*): the configuration `webhook-config` prints keeps the API server from calling it for them, and a
 * configuration registered by hand without that condition reaches the engine, which skips them and says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { APPLIED_ANNOTATION } from '../../lib/api/index.ts';

import { termFromKubernetes, type NodeSelectorTerm } from '../../lib/scheduling/index.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { boundPod } from './pods.ts';
import { reportJson } from './podmutation.ts';
import { poolAffinity } from './pools.ts';
import { useControlPlane } from './use-control-plane.ts';
import {
  admissionsOf,
  applyWebhookConfiguration,
  DEFAULT_WEBHOOK_NAME,
  ruleFolder,
  serveAndRegister,
  serveWebhook,
  webhookCalls,
  webhookConfiguration,
  type ServedWebhook,
} from './webhook.ts';
import { MIRROR_ANNOTATION } from '../../lib/engine/binding.ts';
import { selectorMatchesNode } from '../../lib/scheduling/semantics.ts';

const cluster = useControlPlane();

const NAMESPACE = 'bound';
// A legacy-pool Node (test/real-cluster/nodes.ts): the rule below pins Pods to the merged pool, which it is not in.
const NODE = 'legacy-1';

type Pod = {
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: {
    nodeName?: string;
    affinity?: {
      nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] } };
    };
  };
};
type Node = { metadata: { name: string; uid: string; labels: Record<string, string> } };

// Every Pod of the namespace, so that only the Pod's binding can keep the rule off it.
const RULES = [
  {
    name: 'pin-merged',
    spec: {
      enable: true,
      workloadSelector: { namespaces: [NAMESPACE] },
      mutationAdd: poolAffinity('merged'),
    },
  },
];

function pod(name: string, extra: { nodeName?: string; annotations?: Json; ownerReferences?: Json[] } = {}): Json {
  const { nodeName, annotations, ownerReferences } = extra;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: { app: name },
      ...(annotations === undefined ? {} : { annotations }),
      ...(ownerReferences === undefined ? {} : { ownerReferences }),
    },
    spec: {
      containers: [{ name: 'app', image: `registry.example.com/${name}:1` }],
      ...(nodeName === undefined ? {} : { nodeName }),
    },
  };
}

/** A Pod as the kubelet creates the mirror of a static Pod: the mirror annotation, bound to its Node and owned by it. */
function mirrorPod(name: string, node: Node): Json {
  return pod(name, {
    nodeName: node.metadata.name,
    annotations: { [MIRROR_ANNOTATION]: '3c0a5a1e5f0b7c9d' },
    ownerReferences: [
      { apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid, controller: true },
    ],
  });
}

function create(plane: ControlPlane, body: Json): Promise<Pod> {
  return plane.admin.json<Pod>('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, { body });
}

/** True when the Node passes the Pod's required node affinity, as the kubelet's admission checks it. */
function nodePasses(stored: Pod, node: Node): boolean {
  const terms = stored.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return selectorMatchesNode(
    terms?.map((term) => termFromKubernetes(term)),
    { name: node.metadata.name, labels: node.metadata.labels },
  );
}

async function calls(plane: ControlPlane): Promise<number> {
  return webhookCalls(await plane.metrics(), DEFAULT_WEBHOOK_NAME);
}

describe('Pods bound to a Node at creation', () => {
  let webhook: ServedWebhook;
  let node: Node;
  let rules: string;

  beforeAll(async () => {
    const plane = cluster();
    rules = await ruleFolder(plane, RULES);
    webhook = await serveAndRegister(plane, { rules: [rules] });
    await plane.ensureNamespace(NAMESPACE);
    node = await plane.admin.json<Node>('GET', `/api/v1/nodes/${NODE}`);
  });
  afterAll(async () => webhook?.stop());

  it('leave the rule to a Pod the scheduler binds: it gets the required node affinity, which the Node fails', async () => {
    const stored = await create(cluster(), pod('scheduled'));

    expect(stored.metadata.annotations?.[APPLIED_ANNOTATION]).toBe('pin-merged');
    expect(nodePasses(stored, node)).toBe(false);
  });

  it('are stored as sent when created with spec.nodeName, and the webhook is not even called', async () => {
    const plane = cluster();
    const before = await calls(plane);
    const stored = await create(plane, pod('debugger', { nodeName: NODE }));

    expect(stored.spec.nodeName).toBe(NODE);
    expect(stored.metadata.annotations?.[APPLIED_ANNOTATION]).toBeUndefined();
    expect(stored.spec.affinity).toBeUndefined();
    expect(nodePasses(stored, node)).toBe(true);
    expect(await calls(plane)).toBe(before);
  });

  it('include every mirror Pod: the API server refuses the mirror annotation without spec.nodeName', async () => {
    const answer = await cluster().admin.request('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, {
      body: pod('unbound-mirror', { annotations: { [MIRROR_ANNOTATION]: 'x' } }),
    });

    expect(answer.status).toBe(422);
    expect(answer.text).toContain('must set spec.nodeName if mirror pod annotation is set');
  });

  it('include a mirror-shaped Pod a user who is no kubelet creates (NodeRestriction restricts only Nodes), stored as sent', async () => {
    const plane = cluster();
    const before = await calls(plane);
    const stored = await create(plane, mirrorPod('static-web', node));

    expect(stored.metadata.annotations?.[MIRROR_ANNOTATION]).toBeDefined();
    expect(stored.metadata.annotations?.[APPLIED_ANNOTATION]).toBeUndefined();
    expect(stored.spec.affinity).toBeUndefined();
    expect(await calls(plane)).toBe(before);
  });
  it('are read unaffected by the report, which reads the Pod the scheduler bound as its recreation: current', async () => {
    const plane = cluster();
    const scheduled = await boundPod(plane, NAMESPACE, 'scheduled');
    const { run, result: report } = await reportJson(plane, ['--rules', rules, '-n', NAMESPACE]);

    expect(scheduled.spec.nodeName).toMatch(/^merged-/);
    expect(report.totals).toEqual({ pods: 3, unaffected: 2, current: 1, pending: 0, denied: 0 });
    expect(report.workloads.map(({ name, current }) => [name, current])).toEqual([['scheduled', 1]]);
    expect(run.code).toBe(0);
  });
});

describe('Pods bound to a Node at creation, under a configuration registered by hand without the match condition', () => {
  let webhook: ServedWebhook;
  let node: Node;

  beforeAll(async () => {
    const plane = cluster();
    webhook = await serveWebhook(plane, { rules: [await ruleFolder(plane, RULES)] });
    // What a cluster registered by hand (or by an older webhook-config) has: only the DaemonSet condition.
    const configuration = parse(await webhookConfiguration(plane, webhook)) as {
      webhooks: { matchConditions: { name: string }[] }[];
    };
    for (const entry of configuration.webhooks)
      entry.matchConditions = entry.matchConditions.filter(({ name }) => name === 'skip-daemonset-pods');
    await applyWebhookConfiguration(plane, stringify(configuration), DEFAULT_WEBHOOK_NAME);
    await plane.ensureNamespace(NAMESPACE);
    node = await plane.admin.json<Node>('GET', `/api/v1/nodes/${NODE}`);
  });
  afterAll(async () => webhook?.stop());

  it.each([
    ['a Pod created with spec.nodeName', () => pod('by-hand-debugger', { nodeName: NODE }), /spec\.nodeName/],
    ['a mirror Pod', () => mirrorPod('by-hand-static-web', node), /kubernetes\.io\/config\.mirror/],
  ])('reach the engine, which leaves %s as sent and logs why', async (_name, build, reason) => {
    const plane = cluster();
    const before = await calls(plane);
    const sent = build() as { metadata: { name: string } };
    const stored = await create(plane, sent);

    expect(await calls(plane)).toBeGreaterThan(before);
    expect(stored.metadata.annotations?.[APPLIED_ANNOTATION]).toBeUndefined();
    expect(stored.spec.affinity).toBeUndefined();
    const logged = admissionsOf(webhook, sent.metadata.name);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.decision).toBe('skipped');
    expect(logged[0]?.skipReason).toMatch(reason);
  });
});
