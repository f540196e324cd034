/**
 * `npm run scale:report`: the migration report of a large cluster through the real @kubernetes/client-node against
 * the fake API server over HTTPS, as the sync computes it: Pods and their owners listed page by page,
 * each page folded into the report and dropped, each Pod the rules change judged against a capacity of `--node-shapes`
 * distinct Node shapes and `--node-pools` NodePools (both 0: no capacity, contradictions only), as the sync judges
 * them against the one it publishes. Prints the time and the peak memory (RSS, and heap above the start).
 *
 *   npm run scale:report -- [--pods 10000] [--page-size 500] [--rules 50] [--node-shapes 50] [--node-pools 20]
 */
import { parseArgs } from 'node:util';
import { validatePodMutation, type NormalizedRule } from '../lib/api/index.ts';
import { createWorkloadObjectSource } from '../lib/cluster/index.ts';
import { compileRuleSet } from '../lib/engine/index.ts';
import { Capacity, readCapacityObjects } from '../lib/capacity/index.ts';
import { computeProgress } from '../lib/sync/progress.ts';
import { kubeconfigFor, startFakeApiServer } from '../test/cluster/fake-api-server.ts';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '10000' },
    'page-size': { type: 'string', default: '500' },
    rules: { type: 'string', default: '50' },
    'node-shapes': { type: 'string', default: '50' },
    'node-pools': { type: 'string', default: '20' },
  },
});
const PODS = Number(values.pods);
const PAGE_SIZE = Number(values['page-size']);
const RULES = Number(values.rules);
const NODE_SHAPES = Number(values['node-shapes']);
const NODE_POOLS = Number(values['node-pools']);
const PODS_PER_DEPLOYMENT = 20;
const NAMESPACES = 50;

function rule(index: number): NormalizedRule {
  const verdict = validatePodMutation({
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name: `team-${index}-to-merged-pool` },
    spec: {
      enable: true,
      workloadSelector: {
        namespaces: [`team-${index % NAMESPACES}`],
        nodeSelectorMatch: { 'example.com/node-pool': 'legacy' },
      },
      mutationRemove: { nodeSelector: { keys: ['example.com/node-pool'] } },
      mutationAdd: {
        nodeSelector: { 'example.com/node-pool': 'merged' },
        tolerations: [{ key: 'example.com/merged', operator: 'Exists', effect: 'NoSchedule' }],
      },
    },
  });
  if (!verdict.valid) throw new Error(`scale rule ${index} is invalid`);
  return verdict.rule;
}

/**
 * NODE_SHAPES Nodes of distinct shapes (the legacy pool's first, then others by zone and instance type) and NODE_POOLS
 * NodePools, the last of which makes the merged pool the rules move to, tainted as the rules tolerate: so each Pod is
 * judged against every shape and NodePool before the one that fits is found.
 */
function scaleCapacity(): Capacity {
  if (NODE_SHAPES === 0 && NODE_POOLS === 0) return Capacity.unknown();
  const nodes = Array.from({ length: NODE_SHAPES }, (_, index) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `node-${index}`,
      labels: {
        'example.com/node-pool': index === 0 ? 'legacy' : `pool-${index}`,
        'topology.kubernetes.io/zone': `eu-west-1${'abc'[index % 3]}`,
        'node.kubernetes.io/instance-type': `m5.${index}xlarge`,
      },
    },
    spec: {},
  }));
  const nodePools = Array.from({ length: NODE_POOLS }, (_, index) => ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    // Karpenter tries NodePools by weight, then by name: the merged pool's name sorts last.
    metadata: { name: `pool-${String(index).padStart(4, '0')}` },
    spec: {
      template: {
        metadata: { labels: { 'example.com/node-pool': index === NODE_POOLS - 1 ? 'merged' : `nodepool-${index}` } },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
          taints: [{ key: 'example.com/merged', effect: 'NoSchedule' }],
        },
      },
    },
  }));
  return Capacity.of(readCapacityObjects([...nodes, ...nodePools], 'the scale capacity'));
}

/** A Deployment, its ReplicaSet and its Pods, shaped as the controllers create them. */
function workload(index: number, pods: number): object[] {
  const namespace = `team-${index % NAMESPACES}`;
  const name = `service-${index}`;
  const hash = `${(index * 7919).toString(36).padStart(6, 'a').slice(0, 6)}5d`;
  const labels = { 'app.kubernetes.io/name': name };
  const template = {
    metadata: { labels },
    spec: {
      nodeSelector: { 'example.com/node-pool': 'legacy' },
      containers: [
        {
          name: 'app',
          image: `registry.example.com/${name}:1.0.0`,
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
        },
      ],
    },
  };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, uid: `d-${index}` },
    spec: { replicas: pods, selector: { matchLabels: labels }, template },
  };
  const replicaSet = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `${name}-${hash}`,
      namespace,
      uid: `rs-${index}`,
      labels: { ...labels, 'pod-template-hash': hash },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid: `d-${index}`, controller: true }],
    },
    spec: { replicas: pods, template: { ...template, metadata: { labels: { ...labels, 'pod-template-hash': hash } } } },
  };
  const podObjects = Array.from({ length: pods }, (_, replica) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${name}-${hash}-${replica.toString(36).padStart(5, '0')}`,
      namespace,
      uid: `p-${index}-${replica}`,
      labels: { ...labels, 'pod-template-hash': hash },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${name}-${hash}`, uid: `rs-${index}`, controller: true },
      ],
    },
    spec: { ...template.spec, nodeName: `node-${replica % 40}` },
    status: { phase: 'Running' },
  }));
  return [deployment, replicaSet, ...podObjects];
}

const server = await startFakeApiServer();
try {
  const deployments = Math.ceil(PODS / PODS_PER_DEPLOYMENT);
  for (let index = 0; index < deployments; index += 1) {
    server.putObjects(workload(index, Math.min(PODS_PER_DEPLOYMENT, PODS - index * PODS_PER_DEPLOYMENT)) as never);
  }
  const ruleSet = compileRuleSet(Array.from({ length: RULES }, (_, index) => rule(index)));
  const objects = createWorkloadObjectSource(
    { mode: 'kubeconfigText', text: kubeconfigFor(server) },
    { pageSize: PAGE_SIZE },
  );

  const capacity = scaleCapacity();
  global.gc?.();
  const heapStart = process.memoryUsage().heapUsed;
  let peakRss = process.memoryUsage().rss;
  let peakHeap = heapStart;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    peakRss = Math.max(peakRss, usage.rss);
    peakHeap = Math.max(peakHeap, usage.heapUsed);
  }, 20);
  const started = performance.now();
  const { migration: report } = await computeProgress(
    {
      objects,
      intervalMinutes: 1,
      records: { readReportTime: () => Promise.resolve(undefined), recordReport: () => Promise.resolve() },
    },
    { ruleSet, capacity, placements: [] },
  );
  const elapsedMs = performance.now() - started;
  clearInterval(sampler);

  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  const requests = server.requests.filter((request) => request.path.endsWith('/pods')).length;
  console.log(
    `migration report of ${report.totals.pods} Pods in ${deployments} Deployments, ${RULES} rules, page size ${PAGE_SIZE} (${requests} Pod pages)`,
  );
  console.log(
    capacity.known
      ? `  capacity: ${capacity.shapes.length} Node shapes, ${capacity.nodePools.length} NodePools; unschedulable Pods: ${report.rules.reduce((total, rule) => total + rule.unschedulable, 0)}`
      : '  capacity: none (contradictions only)',
  );
  console.log(`  totals: ${JSON.stringify(report.totals)}`);
  console.log(
    `  time: ${(elapsedMs / 1000).toFixed(2)} s (${((elapsedMs * 1000) / report.totals.pods).toFixed(0)} µs per Pod, listing included)`,
  );
  console.log(
    `  peak RSS: ${mib(peakRss)} MiB; peak heap above the start: ${mib(peakHeap - heapStart)} MiB (the fake API server shares this process)`,
  );
} finally {
  await server.close();
}
