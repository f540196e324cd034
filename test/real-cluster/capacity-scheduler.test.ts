/**
 * The real kube-scheduler is the oracle of lib/capacity for Nodes. Each round creates Nodes of generated labels, taints
 * and cordons (in the capacity.test/ label space, beside the suite's own Nodes of nodes.ts, which the model is given
 * too) and Pods of generated nodeSelectors, required and preferred node affinity and tolerations; the model judges each
 * Pod as the API server stored it against the Nodes as `kubectl get nodes -o yaml` prints them, read through the
 * capacity boundary. Every Pod the model says fits a Node must be bound, to one of the Nodes the model says it fits;
 * every Pod it says fits no Node must stay Pending with a FailedScheduling event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Capacity, Placement, readCapacityObjects } from '../../lib/capacity/index.ts';
import { podFacts } from '../../lib/engine/index.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';
import { type CapacityNode } from '../../lib/capacity/nodes.ts';

const cluster = useControlPlane();

const NAMESPACE = 'capacity-oracle';
const ORACLE_LABEL = 'capacity.test/oracle';
const KEY_A = 'capacity.test/a';
const KEY_B = 'capacity.test/b';
const KEY_N = 'capacity.test/n';
const TAINT_KEYS = ['capacity.test/t1', 'capacity.test/t2'];
const NODES_PER_ROUND = 4;
const PODS_PER_ROUND = 14;
const ROUNDS = 100;

interface GeneratedNode {
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Json[];
  readonly unschedulable: boolean;
}

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 3 });

const generatedNode: fc.Arbitrary<GeneratedNode> = fc
  .record({
    a: optional(fc.constantFrom('x', 'y', 'z')),
    b: optional(fc.constantFrom('x', 'y')),
    n: optional(fc.constantFrom('1', '3', '5', '10')),
    taints: fc.uniqueArray(
      fc.record({
        key: fc.constantFrom(...TAINT_KEYS),
        value: fc.constantFrom('', 'x'),
        effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule'),
      }),
      { maxLength: 2, selector: (taint) => `${taint.key}:${taint.effect}` },
    ),
    // One Node in four cordoned.
    unschedulable: fc.integer({ min: 0, max: 3 }).map((draw) => draw === 0),
  })
  .map(({ a, b, n, taints, unschedulable }) => ({
    labels: {
      ...(a === undefined ? {} : { [KEY_A]: a }),
      ...(b === undefined ? {} : { [KEY_B]: b }),
      ...(n === undefined ? {} : { [KEY_N]: n }),
    },
    taints: taints.map(({ value, ...taint }) => (value === '' ? taint : { ...taint, value })),
    unschedulable,
  }));

/** A Pod's scheduling fields, over the round's Node names (`names` stands for them by index). */
function generatedPodSpec(names: readonly string[]): fc.Arbitrary<Json> {
  const name = fc.constantFrom(...names);
  const expression: fc.Arbitrary<Json> = fc.oneof(
    fc.record({
      key: fc.constantFrom(KEY_A, KEY_B, 'example.com/node-pool'),
      operator: fc.constantFrom('In', 'NotIn'),
      values: fc.uniqueArray(fc.constantFrom('x', 'y', 'z', 'merged'), { minLength: 1, maxLength: 2 }),
    }),
    fc.record({ key: fc.constantFrom(KEY_A, KEY_B, KEY_N), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
    fc.record({
      key: fc.constant(KEY_N),
      operator: fc.constantFrom('Gt', 'Lt'),
      values: fc.constantFrom('0', '2', '4', '9').map((value) => [value]),
    }),
    fc.record({
      key: fc.constant('kubernetes.io/hostname'),
      operator: fc.constantFrom('In', 'NotIn'),
      values: name.map((value) => [value]),
    }),
  );
  const field: fc.Arbitrary<Json> = fc.record({
    key: fc.constant('metadata.name'),
    operator: fc.constantFrom('In', 'NotIn'),
    values: name.map((value) => [value]),
  });
  const term: fc.Arbitrary<Json> = fc
    .record({
      matchExpressions: fc.array(expression, { maxLength: 3 }),
      matchFields: fc.array(field, { maxLength: 1 }),
    })
    .map(({ matchExpressions, matchFields }) => ({
      ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
      ...(matchFields.length > 0 ? { matchFields } : {}),
    }));
  const toleration: fc.Arbitrary<Json> = fc.oneof(
    fc.record({ key: fc.constantFrom(...TAINT_KEYS), operator: fc.constant('Exists') }),
    fc.record({
      key: fc.constantFrom(...TAINT_KEYS),
      operator: fc.constant('Equal'),
      value: fc.constantFrom('', 'x'),
      effect: fc.constantFrom('NoSchedule', 'NoExecute'),
    }),
    fc.record({
      key: fc.constantFrom(...TAINT_KEYS),
      operator: fc.constant('Exists'),
      effect: fc.constant('NoExecute'),
    }),
    fc.constant({ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }),
    fc.constant({ operator: 'Exists' }),
  );
  return fc
    .record({
      nodeSelector: fc.dictionary(
        fc.constantFrom(KEY_A, KEY_B, 'kubernetes.io/hostname'),
        fc.constantFrom('x', 'y', ...names),
        {
          maxKeys: 2,
        },
      ),
      required: fc.option(fc.array(term, { minLength: 1, maxLength: 3 }), { nil: undefined, freq: 2 }),
      preferred: fc.array(fc.record({ weight: fc.integer({ min: 1, max: 100 }), preference: term }), { maxLength: 1 }),
      tolerations: fc.array(toleration, { maxLength: 2 }),
    })
    .map(({ nodeSelector, required, preferred, tolerations }) => ({
      ...(Object.keys(nodeSelector).length > 0 ? { nodeSelector } : {}),
      ...(required === undefined && preferred.length === 0
        ? {}
        : {
            affinity: {
              nodeAffinity: {
                ...(required === undefined
                  ? {}
                  : { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: required } }),
                ...(preferred.length === 0 ? {} : { preferredDuringSchedulingIgnoredDuringExecution: preferred }),
              },
            },
          }),
      ...(tolerations.length > 0 ? { tolerations } : {}),
    }));
}

// The Pods name the round's Nodes by these placeholders, replaced by the Node names of the round that runs them.
const PLACEHOLDER = 'node-placeholder-';
const PLACEHOLDERS = Array.from({ length: NODES_PER_ROUND }, (_, node) => `${PLACEHOLDER}${node}`);
const nodeName = (round: number, node: number) => `cap-r${round}-n${node}`;

/** One round: its Nodes, and the Pods' scheduling fields. */
const round = fc.record({
  nodes: fc.array(generatedNode, { minLength: NODES_PER_ROUND, maxLength: NODES_PER_ROUND }),
  pods: fc.array(generatedPodSpec(PLACEHOLDERS), { minLength: PODS_PER_ROUND, maxLength: PODS_PER_ROUND }),
});

function inRound(spec: Json, index: number): Json {
  return JSON.parse(JSON.stringify(spec).replaceAll(PLACEHOLDER, `cap-r${index}-n`)) as Json;
}

interface StoredPod {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly nodeName?: string;
    readonly nodeSelector?: Json;
    readonly affinity?: Json;
    readonly tolerations?: readonly Json[];
  };
}

/** The Pod's scheduling fields, for a failure message. */
function scheduling(pod: StoredPod): string {
  const { nodeSelector, affinity, tolerations } = pod.spec;
  return JSON.stringify({ nodeSelector, affinity, tolerations });
}

/**
 * Creates the round's Nodes, Ready. The TaintNodesByCondition admission plugin adds node.kubernetes.io/not-ready to a
 * new Node and only the node-lifecycle controller (off here) would remove it, so the taints are set right after (as
 * nodes.ts does); in between the Node has more taints than it ends with, which never lets a Pod on that the model
 * keeps off.
 */
async function createNodes(plane: ControlPlane, index: number, nodes: readonly GeneratedNode[]): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const resources = { cpu: '16', memory: '64Gi', pods: '250' };
  for (const [position, node] of nodes.entries()) {
    const name = nodeName(index, position);
    await plane.admin.json('POST', '/api/v1/nodes', {
      body: {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { ...node.labels, 'kubernetes.io/hostname': name, [ORACLE_LABEL]: 'true' } },
        spec: { unschedulable: node.unschedulable },
        status: {
          capacity: resources,
          allocatable: resources,
          conditions: [
            { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: now, lastTransitionTime: now },
          ],
        },
      },
    });
    await plane.admin.json('PATCH', `/api/v1/nodes/${name}`, {
      body: { spec: { taints: node.taints.length === 0 ? null : node.taints } },
      contentType: 'application/merge-patch+json',
    });
  }
}

async function readCapacity(plane: ControlPlane): Promise<readonly CapacityNode[]> {
  const printed = await plane.kubectl(['get', 'nodes', '-o', 'yaml']);
  if (printed.code !== 0) throw new Error(`kubectl get nodes: ${printed.stderr}`);
  return readCapacityObjects([parse(printed.stdout)], 'kubectl get nodes -o yaml').nodes;
}

/** The names of the Pods with a FailedScheduling event. */
async function failedScheduling(plane: ControlPlane): Promise<Set<string>> {
  const events = await plane.admin.json<{ items: { involvedObject: { name: string } }[] }>(
    'GET',
    `/api/v1/namespaces/${NAMESPACE}/events`,
    { query: { fieldSelector: 'reason=FailedScheduling' } },
  );
  return new Set(events.items.map((event) => event.involvedObject.name));
}

async function cleanUp(plane: ControlPlane): Promise<void> {
  await plane.admin.json('DELETE', `/api/v1/namespaces/${NAMESPACE}/pods`, {
    body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 },
  });
  await plane.admin.json('DELETE', '/api/v1/nodes', { query: { labelSelector: `${ORACLE_LABEL}=true` } });
  await waitFor('the round to be cleaned up', async () => {
    const pods = await plane.admin.json<{ items: unknown[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
    const nodes = await plane.admin.json<{ items: unknown[] }>('GET', '/api/v1/nodes', {
      query: { labelSelector: `${ORACLE_LABEL}=true` },
    });
    return pods.items.length === 0 && nodes.items.length === 0 ? true : undefined;
  });
}

const tally = { rounds: 0, pods: 0, fit: 0, nowhere: 0, contradictions: 0 };

describe('the capacity model against the real kube-scheduler', () => {
  it('binds every Pod the model fits to a Node, to one it fits, and leaves every Pod it fits nowhere Pending with FailedScheduling', async () => {
    const plane = cluster();
    await plane.ensureNamespace(NAMESPACE);
    let index = 0;
    await fc.assert(
      fc.asyncProperty(round, async ({ nodes, pods }) => {
        const roundIndex = index;
        index += 1;
        try {
          await createNodes(plane, roundIndex, nodes);
          const stored: StoredPod[] = [];
          for (const [position, spec] of pods.entries()) {
            stored.push(
              await plane.admin.json<StoredPod>('POST', `/api/v1/namespaces/${NAMESPACE}/pods`, {
                body: {
                  apiVersion: 'v1',
                  kind: 'Pod',
                  metadata: { name: `r${roundIndex}-p${position}` },
                  spec: {
                    containers: [{ name: 'app', image: 'registry.example.com/app:1' }],
                    ...inRound(spec, roundIndex),
                  },
                },
              }),
            );
          }
          const all = await readCapacity(plane);
          const capacity = Capacity.of({ nodes: all });
          const verdicts = stored.map((pod) => {
            const placement = Placement.of(podFacts(pod, NAMESPACE));
            const fitting = all.filter((node) => Capacity.of({ nodes: [node] }).judge(placement).fits);
            return { pod, verdict: capacity.judge(placement), fitting: new Set(fitting.map((node) => node.name)) };
          });
          for (const { pod, verdict, fitting } of verdicts)
            expect(verdict.nodes, `${pod.metadata.name}: the Nodes of its verdict, one by one`).toBe(fitting.size);

          const settled = await waitFor(
            `the scheduler to bind or give up on round ${roundIndex}'s Pods`,
            async () => {
              const list = await plane.admin.json<{ items: StoredPod[] }>(
                'GET',
                `/api/v1/namespaces/${NAMESPACE}/pods`,
              );
              const failed = await failedScheduling(plane);
              const byName = new Map(list.items.map((pod) => [pod.metadata.name, pod]));
              const done = verdicts.every(({ pod, verdict }) =>
                verdict.fits
                  ? byName.get(pod.metadata.name)?.spec.nodeName !== undefined
                  : failed.has(pod.metadata.name),
              );
              return done ? byName : undefined;
            },
            { timeoutMs: 30_000, intervalMs: 250 },
          ).catch(async (error: unknown) => {
            const list = await plane.admin.json<{ items: StoredPod[] }>('GET', `/api/v1/namespaces/${NAMESPACE}/pods`);
            const failed = await failedScheduling(plane);
            const stuck = verdicts
              .filter(({ pod, verdict }) => {
                const now = list.items.find((item) => item.metadata.name === pod.metadata.name);
                return verdict.fits ? now?.spec.nodeName === undefined : !failed.has(pod.metadata.name);
              })
              .map(({ pod, verdict }) => `${pod.metadata.name}: model says ${verdict.text()}; ${scheduling(pod)}`);
            throw new Error(`${(error as Error).message}\n${stuck.join('\n')}`, { cause: error });
          });

          for (const { pod, verdict, fitting } of verdicts) {
            const nodeName = settled.get(pod.metadata.name)?.spec.nodeName;
            const what = `${pod.metadata.name} (model: ${verdict.text()}; ${scheduling(pod)})`;
            if (verdict.fits) expect(fitting.has(nodeName!), `${what} was bound to ${nodeName}`).toBe(true);
            else expect(nodeName, `${what} was bound`).toBeUndefined();
            tally.pods += 1;
            if (verdict.fits) tally.fit += 1;
            else tally.nowhere += 1;
            if (verdict.contradiction !== undefined) tally.contradictions += 1;
          }
          tally.rounds += 1;
        } finally {
          await cleanUp(plane);
        }
      }),
      { numRuns: ROUNDS, endOnFailure: true },
    );
    console.log(
      `[capacity oracle] kube-scheduler: ${tally.rounds} rounds, ${tally.pods} Pods: ${tally.fit} fit a Node and were bound to one it fits, ${tally.nowhere} fit none and stayed Pending (${tally.contradictions} of them for their own contradiction)`,
    );
  }, 480_000);
});
