/**
 * The cost of judging where a Pod fits, for `npm run bench`: a review with the capacity against the same review without
 * it (50 Node shapes and 20 NodePools, the migration rule changing the Pod), the published capacity's size at 5,000
 * Nodes and 100 NodePools, and the admission bundle's size and load time against the bundle before admission judged
 * fit (BASELINE_REF, built from `git archive`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { answerAdmissionReview } from '../lib/admission/index.ts';
import { Capacity, readCapacityObjects } from '../lib/capacity/index.ts';
import { compileRuleSet } from '../lib/engine/index.ts';
import { loadRuleFiles } from '../lib/rule-files/index.ts';
import { keyedStamps } from '../lib/stamp/index.ts';
import type { JsonObject } from '../lib/json/index.ts';
import { bundleAgainst, treeAt, type BundleCost } from './baseline.ts';
import { measureAlternating } from './measure.ts';

const FIXTURE = new URL('../test/fixtures/reviews/deployment-legacy-pool.json', import.meta.url);
const EXAMPLES = fileURLToPath(new URL('../examples/rules', import.meta.url));
/** main before the engine, admission and sync judged fit (lib/capacity was there, but nothing on the hot path used it). */
const BASELINE_REF = 'e8f712d';

const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const TYPES = ['m5.large', 'm5.xlarge', 'c6i.2xlarge', 'r6g.large', 'm7g.xlarge'];
const POOLS = ['legacy', 'merged', 'batch', 'gpu', 'system'];

/** A Node as EKS and Karpenter label it: `shape` picks its distinct labels and taints, `index` its name. */
function nodeObject(shape: number, index: number): JsonObject {
  const pool = POOLS[shape % POOLS.length]!;
  const name = `ip-10-${shape}-${Math.floor(index / 250)}-${index % 250}.ec2.internal`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': TYPES[shape % TYPES.length]!.includes('g.') ? 'arm64' : 'amd64',
        'node.kubernetes.io/instance-type': TYPES[shape % TYPES.length]!,
        'topology.kubernetes.io/region': 'us-east-1',
        'topology.kubernetes.io/zone': ZONES[shape % ZONES.length]!,
        'karpenter.sh/capacity-type': shape % 2 === 0 ? 'on-demand' : 'spot',
        'karpenter.sh/nodepool': `${pool}-${shape % 10}`,
        'example.com/node-pool': pool,
        'example.com/shape': `s${shape}`,
      },
    },
    spec: pool === 'gpu' ? { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] } : {},
  };
}

/** A karpenter.sh/v1 NodePool of the generated pools, with the requirements such pools carry. */
function nodePoolObject(index: number): JsonObject {
  const pool = POOLS[index % POOLS.length]!;
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: `${pool}-${index}` },
    spec: {
      weight: index % 5,
      limits: { cpu: '1000' },
      template: {
        metadata: { labels: { 'example.com/node-pool': pool, 'example.com/team': `team-${index}` } },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
            { key: 'topology.kubernetes.io/zone', operator: 'In', values: ZONES },
          ],
          ...(pool === 'gpu' ? { taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] } : {}),
        },
      },
    },
    status: { resources: { cpu: '120' } },
  };
}

/** The capacity of `nodes` Nodes spread over `shapes` distinct shapes, and `pools` NodePools, but those of `without`. */
function generatedCapacity(shapes: number, nodes: number, pools: number, without: readonly string[] = []): Capacity {
  const objects = [
    ...Array.from({ length: nodes }, (_, index) => nodeObject(index % shapes, index)),
    ...Array.from({ length: pools }, (_, index) => nodePoolObject(index)),
  ].filter((object) => !without.some((pool) => JSON.stringify(object).includes(`"example.com/node-pool":"${pool}"`)));
  return Capacity.of(readCapacityObjects(objects, 'generated'));
}

/** The published capacity of 5,000 Nodes (50 shapes) and 100 NodePools, for the cold load of `npm run bench`. */
function largeCapacity(): JsonObject {
  return generatedCapacity(50, 5_000, 100).published()!;
}

/** What the fit costs a review, and how big a published capacity is. */
interface ReviewCost {
  /** The review without capacity, and with it when the changed Pod still fits (the common case). */
  readonly withoutNs: number;
  readonly fitsNs: number;
  /** With a capacity the changed Pod fits nowhere in: the verdict's words and the warning are computed then. */
  readonly strandedNs: number;
  readonly verdicts: readonly string[];
  readonly publishedBytes: number;
  readonly publishedGzipBytes: number;
}

/**
 * A review that changes the Pod (the example migration, legacy to merged), without a capacity and with 50 Node shapes
 * and 20 NodePools: one where the merged pool exists, one where it does not. Alternating rounds.
 */
async function reviewCost(rounds: { readonly rounds: number; readonly roundMs: number }): Promise<ReviewCost> {
  const body = readFileSync(FIXTURE, 'utf8');
  const ruleSet = compileRuleSet((await loadRuleFiles([EXAMPLES])).rules);
  const stamps = keyedStamps('bench-stamp-key-0123456789abcdefghijklmn');
  const fits = generatedCapacity(50, 500, 20);
  const stranded = generatedCapacity(50, 500, 20, ['merged']);
  const verdicts = [fits, stranded].map((capacity) => {
    const fit = answerAdmissionReview(body, ruleSet, { stamps, capacity }).verdict.outcome?.fit;
    if (fit === undefined) throw new Error('the bench review must change the Pod, so that it is judged');
    return `${fit.before.text()} -> ${fit.after.text()}`;
  });
  let sink = 0;
  const [withoutNs, fitsNs, strandedNs] = measureAlternating(
    [
      () => (sink += answerAdmissionReview(body, ruleSet, { stamps }).body.length),
      () => (sink += answerAdmissionReview(body, ruleSet, { stamps, capacity: fits }).body.length),
      () => (sink += answerAdmissionReview(body, ruleSet, { stamps, capacity: stranded }).body.length),
    ],
    rounds,
  );
  if (sink === 0) throw new Error('unreachable');
  const published = JSON.stringify(largeCapacity());
  return {
    withoutNs: withoutNs!,
    fitsNs: fitsNs!,
    strandedNs: strandedNs!,
    verdicts,
    publishedBytes: Buffer.byteLength(published),
    publishedGzipBytes: gzipSync(published).byteLength,
  };
}

/** Builds the admission bundle here and at BASELINE_REF (its tree from git archive, this node_modules) and loads both. */
async function bundleCost(): Promise<BundleCost> {
  const folder = mkdtempSync(join(tmpdir(), 'podmutation-bench-fit-'));
  try {
    return await bundleAgainst(treeAt(BASELINE_REF, folder), folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

export { bundleCost, largeCapacity, reviewCost, BASELINE_REF };
export type { ReviewCost };
