/**
 * Karpenter's own code is the oracle of lib/capacity for NodePools. The AWS provider's NodePool CRD is applied to the
 * real API server; generated NodePools are created through it (so its CEL rules check them) and read back as `kubectl
 * get nodes,nodepools -o yaml` prints them, through the capacity boundary; then the Karpenter oracle (karpenter.ts,
 * built from sigs.k8s.io/karpenter and the AWS provider) and the model judge every pair of a generated Pod and a
 * NodePool read back. They must agree on each part: whether the provisioner considers the Pod, whether each required
 * term is compatible with the NodePool's template, whether its taints are tolerated, and so whether the Pod fits.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Capacity, Placement, readCapacityObjects } from '../../lib/capacity/index.ts';
import { WELL_KNOWN_LABELS } from '../../lib/capacity/labels.ts';
import { compileNodePool, karpenterPod, type NodePool } from '../../lib/capacity/node-pools.ts';
import { untoleratedTaints } from '../../lib/capacity/taints.ts';
import { podFacts } from '../../lib/engine/index.ts';
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { askKarpenter, karpenterOracle, type KarpenterOracle, type OracleCase } from './karpenter.ts';
import { TEST_NODES } from './nodes.ts';
import { waitFor } from './processes.ts';
import { useControlPlane } from './use-control-plane.ts';

const cluster = useControlPlane();

const BATCHES = 5;
const POOLS_PER_BATCH = 20;
const PODS_PER_BATCH = 100;

const TEAM = 'capacity.test/team';
const NUMBER = 'capacity.test/n';
const GENERATION = 'karpenter.k8s.aws/instance-generation';
const TAINT_KEYS = ['capacity.test/t1', 'capacity.test/t2'];
const ZONES = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'];

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });
const some = <T>(values: readonly T[], max = 2) =>
  fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength: max }).map((list) => [...list]);
const integer = fc.constantFrom('0', '2', '4', '6', '9');

/** A requirement a NodePool may hold (Karpenter's CRD admits each). */
const poolRequirement: fc.Arbitrary<Json> = fc.oneof(
  fc.record({
    key: fc.constant('kubernetes.io/arch'),
    operator: fc.constantFrom('In', 'NotIn'),
    values: some(['amd64', 'arm64']),
  }),
  fc.record({
    key: fc.constant('karpenter.sh/capacity-type'),
    operator: fc.constant('In'),
    values: some(['spot', 'on-demand']),
  }),
  fc.record({
    key: fc.constantFrom('topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone'),
    operator: fc.constantFrom('In', 'NotIn'),
    values: some(ZONES),
  }),
  fc.record({
    key: fc.constant('karpenter.k8s.aws/instance-category'),
    operator: fc.constant('In'),
    values: some(['c', 'm', 'r']),
  }),
  fc.record({
    key: fc.constantFrom(GENERATION, NUMBER),
    operator: fc.constantFrom('Gt', 'Lt', 'Gte', 'Lte'),
    values: integer.map((value) => [value]),
  }),
  fc.record({ key: fc.constantFrom(GENERATION, NUMBER), operator: fc.constant('In'), values: some(['2', '5', '7']) }),
  fc.record({ key: fc.constant(TEAM), operator: fc.constantFrom('In', 'NotIn'), values: some(['a', 'b']) }),
  fc.record({ key: fc.constant(TEAM), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
);

const taint: fc.Arbitrary<Json> = fc
  .record({
    key: fc.constantFrom(...TAINT_KEYS),
    value: fc.constantFrom('', 'x'),
    effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule'),
  })
  .map(({ value, ...rest }) => (value === '' ? rest : { ...rest, value }));

/** A NodePool's spec; `name` is given when the batch runs. */
const poolSpec: fc.Arbitrary<Json> = fc
  .record({
    labels: fc.dictionary(
      fc.constantFrom(TEAM, 'beta.kubernetes.io/arch', 'topology.kubernetes.io/zone'),
      fc.constantFrom('a', 'b', 'amd64', 'eu-west-1a'),
      { maxKeys: 2 },
    ),
    requirements: fc.array(poolRequirement, { maxLength: 4 }),
    taints: fc.uniqueArray(taint, { maxLength: 2, selector: (item) => `${String(item.key)}:${String(item.effect)}` }),
    startupTaints: fc.array(taint, { maxLength: 1 }),
    nodeClassRef: fc.constantFrom(
      { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
      { group: 'eks.amazonaws.com', kind: 'NodeClass', name: 'default' },
    ),
    weight: optional(fc.integer({ min: 1, max: 100 })),
  })
  .map(({ labels, requirements, taints, startupTaints, nodeClassRef, weight }) => ({
    ...(weight === undefined ? {} : { weight }),
    template: {
      ...(Object.keys(labels).length === 0 ? {} : { metadata: { labels } }),
      spec: {
        nodeClassRef,
        requirements,
        ...(taints.length === 0 ? {} : { taints }),
        ...(startupTaints.length === 0 ? {} : { startupTaints }),
      },
    },
  }));

/** The Pods' scheduling fields; they name NodePools as pool-0 to pool-9 (a batch creates pool-0 up). */
// Mostly requirements Karpenter accepts; about one in twelve is one its provisioner refuses the Pod for (a negative Gt,
// a restricted label, a capacity type it does not know).
const podExpression: fc.Arbitrary<Json> = fc.oneof(
  {
    weight: 24,
    arbitrary: poolRequirement.filter((requirement) => !['Gte', 'Lte'].includes(String(requirement.operator))),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      key: fc.constant('karpenter.sh/nodepool'),
      operator: fc.constantFrom('In', 'NotIn'),
      values: some(['pool-0', 'pool-1', 'pool-2', 'pool-9']),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      key: fc.constantFrom('karpenter.sh/nodepool', 'kubernetes.io/os', 'capacity.test/other'),
      operator: fc.constantFrom('Exists', 'DoesNotExist'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      key: fc.constantFrom(NUMBER, GENERATION),
      operator: fc.constantFrom('Gt', 'Lt'),
      values: fc.constantFrom('9223372036854775807', '-9223372036854775808', '007').map((value) => [value]),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      key: fc.constantFrom(NUMBER, GENERATION),
      operator: fc.constantFrom('Gt', 'Lt'),
      values: fc.constant(['-1']),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      key: fc.constantFrom('karpenter.sh/custom', 'kubernetes.io/hostname', 'karpenter.k8s.aws/ec2nodeclass'),
      operator: fc.constant('In'),
      values: some(['x']),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      key: fc.constant('karpenter.sh/capacity-type'),
      operator: fc.constant('In'),
      values: some(['spto', 'spot']),
    }),
  },
);

const podTerm: fc.Arbitrary<Json> = fc
  .record({
    matchExpressions: fc.array(podExpression, { minLength: 1, maxLength: 3 }),
    // One term in twelve has matchFields, which Karpenter refuses.
    matchFields: fc
      .integer({ min: 0, max: 11 })
      .map((draw) => (draw === 0 ? [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] : undefined)),
  })
  .map(({ matchExpressions, matchFields }) => ({
    matchExpressions,
    ...(matchFields === undefined ? {} : { matchFields }),
  }));

const toleration: fc.Arbitrary<Json> = fc.oneof(
  fc.record({ key: fc.constantFrom(...TAINT_KEYS), operator: fc.constant('Exists') }),
  fc.record({
    key: fc.constantFrom(...TAINT_KEYS),
    value: fc.constantFrom('', 'x'),
    effect: fc.constantFrom('NoSchedule', 'NoExecute'),
  }),
  fc.constant({ operator: 'Exists' }),
);

const selectorPair: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constantFrom('kubernetes.io/arch', 'beta.kubernetes.io/arch'), fc.constantFrom('amd64', 'arm64')),
  fc.tuple(fc.constant('karpenter.sh/capacity-type'), fc.constantFrom('spot', 'on-demand')),
  fc.tuple(fc.constant(TEAM), fc.constantFrom('a', 'b')),
  fc.tuple(fc.constant('topology.kubernetes.io/zone'), fc.constantFrom(...ZONES)),
  fc.tuple(fc.constant('karpenter.sh/nodepool'), fc.constantFrom('pool-0', 'pool-1')),
);

const podSpec: fc.Arbitrary<Json> = fc
  .record({
    nodeSelector: fc.array(selectorPair, { maxLength: 2 }).map((pairs) => Object.fromEntries(pairs)),
    required: optional(fc.array(podTerm, { minLength: 1, maxLength: 3 })),
    preferred: fc.array(fc.record({ weight: fc.integer({ min: 1, max: 100 }), preference: podTerm }), { maxLength: 2 }),
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

async function createAll(plane: ControlPlane, items: readonly Json[]): Promise<void> {
  const created = await plane.kubectl(['create', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
  });
  if (created.code !== 0) throw new Error(`kubectl create: ${created.stderr}`);
}

async function kubectlJson<T>(plane: ControlPlane, args: readonly string[], input?: string): Promise<T> {
  const result = await plane.kubectl(args, input === undefined ? {} : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

let oracle: KarpenterOracle;

beforeAll(async () => {
  oracle = await karpenterOracle((line) => console.log(`[karpenter oracle] ${line}`));
  const plane = cluster();
  // Server-side: the CRD's schema is larger than the last-applied annotation a client-side apply would write.
  const applied = await plane.kubectl(['apply', '--server-side', '-f', oracle.nodePoolCrd]);
  if (applied.code !== 0) throw new Error(`applying ${oracle.nodePoolCrd}: ${applied.stderr}`);
  const established = await plane.kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/nodepools.karpenter.sh',
  ]);
  if (established.code !== 0) throw new Error(`the NodePool CRD was not established: ${established.stderr}`);
}, 20 * 60_000);

describe("Karpenter's NodePool CRD on the real API server", () => {
  it('reads the NodePools it admits, with the Nodes, as `kubectl get nodes,nodepools -o yaml` prints them', async () => {
    const plane = cluster();
    const pools = fc.sample(poolSpec, { numRuns: 5, seed: 7 }).map((spec, index) => ({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: `read-${index}` },
      spec: { ...spec, limits: { cpu: '1000', memory: '1000Gi' } },
    }));
    await createAll(plane, pools);
    const printed = await plane.kubectl(['get', 'nodes,nodepools', '-o', 'yaml']);
    expect(printed.code, printed.stderr).toBe(0);

    const read = readCapacityObjects([parse(printed.stdout)], 'kubectl get nodes,nodepools -o yaml');

    expect(read.nodes.map((node) => node.name).sort()).toEqual(TEST_NODES.map((node) => node.name).sort());
    const byName = new Map(read.nodePools.map((pool) => [pool.name, pool]));
    for (const pool of pools) {
      const got = byName.get(pool.metadata.name);
      const spec = pool.spec as unknown as { template: { spec: { requirements: Json[]; taints?: Json[] } } };
      expect(
        got?.requirements.map(({ key, operator, values }) => ({
          key,
          operator,
          ...(values.length === 0 ? {} : { values }),
        })),
      ).toEqual(spec.template.spec.requirements);
      expect(got?.taints.length).toBe(spec.template.spec.taints?.length ?? 0);
      expect(got?.limits).toEqual({ cpu: '1000', memory: '1000Gi' });
    }
    expect(read.skipped).toEqual([]);
    await plane.kubectl(['delete', 'nodepools', '--all']);
  });

  it('refuses a NodePool whose requirement names a restricted label, as the boundary does', async () => {
    const plane = cluster();
    const pool = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'restricted' },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['a'] }],
          },
        },
      },
    };
    const created = await plane.kubectl(['create', '-f', '-'], { input: JSON.stringify(pool) });
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain('kubernetes.io/hostname');
    expect(() => readCapacityObjects([pool], 'restricted.yaml')).toThrow(
      /requirements\[0\]\.key: the label kubernetes.io\/hostname is restricted/,
    );
  });
});

const tally = { pairs: 0, fit: 0, refused: 0, untolerated: 0, incompatible: 0 };

describe("the capacity model against Karpenter's code", () => {
  it('agrees with Karpenter on every Pod and NodePool: considered, compatible term by term, tolerated, and so fits', async () => {
    const plane = cluster();
    await fc.assert(
      fc.asyncProperty(
        fc.array(poolSpec, { minLength: POOLS_PER_BATCH, maxLength: POOLS_PER_BATCH }),
        fc.array(podSpec, { minLength: PODS_PER_BATCH, maxLength: PODS_PER_BATCH }),
        async (specs, pods) => {
          const items = specs.map((spec, index) => ({
            apiVersion: 'karpenter.sh/v1',
            kind: 'NodePool',
            metadata: { name: `pool-${index}` },
            spec,
          }));
          await createAll(plane, items);
          try {
            const stored = await kubectlJson<{ items: Json[] }>(plane, ['get', 'nodepools', '-o', 'json']);
            const pools = readCapacityObjects(stored.items, 'kubectl get nodepools -o json').nodePools;
            const cases: OracleCase[] = pods.flatMap((spec) =>
              stored.items.map((nodePool) => ({ pod: { spec }, nodePool })),
            );
            const answers = await askKarpenter(oracle, cases);
            const poolByName = new Map<string, NodePool>(pools.map((pool) => [pool.name, pool]));
            answers.forEach((answer, index) => {
              const { pod, nodePool } = cases[index]!;
              const pool = poolByName.get(((nodePool as Json).metadata as Json).name as string)!;
              const placement = Placement.of(podFacts(pod, 'default'));
              const compiled = compileNodePool(pool);
              const model = karpenterPod(placement);
              const what = `Pod ${JSON.stringify((pod as Json).spec)} and NodePool ${JSON.stringify((nodePool as Json).spec)}: Karpenter says ${JSON.stringify(answer)}`;
              expect(model.refusal === undefined, `${what}; the model refuses: ${model.refusal}`).toBe(answer.accepted);
              const problems = model.terms.map((term) => compiled.requirements.compatible(term, WELL_KNOWN_LABELS));
              expect(
                problems.map((list) => list.length === 0),
                `${what}; the model finds ${JSON.stringify(problems)}`,
              ).toEqual(answer.terms.map((term) => term.compatible));
              expect(untoleratedTaints(pool.taints, placement.tolerations).length === 0, what).toBe(answer.tolerated);

              const karpenterFits = answer.accepted && answer.tolerated && answer.terms.some((term) => term.compatible);
              const verdict = Capacity.of({ nodePools: [pool] }).judge(placement);
              expect(verdict.fits, `${what}; the model: ${verdict.text()}`).toBe(
                placement.contradiction() === undefined && karpenterFits,
              );
              tally.pairs += 1;
              if (karpenterFits) tally.fit += 1;
              else if (!answer.accepted) tally.refused += 1;
              else if (!answer.tolerated) tally.untolerated += 1;
              else tally.incompatible += 1;
            });
          } finally {
            await plane.kubectl(['delete', 'nodepools', '--all', '--wait=true']);
            await waitFor('the NodePools to be deleted', async () =>
              (await kubectlJson<{ items: unknown[] }>(plane, ['get', 'nodepools', '-o', 'json'])).items.length === 0
                ? true
                : undefined,
            );
          }
        },
      ),
      { numRuns: BATCHES, endOnFailure: true },
    );
    console.log(
      `[capacity oracle] Karpenter: ${tally.pairs} Pod and NodePool pairs agreed: ${tally.fit} fit, ${tally.refused} with a Pod the provisioner ignores, ${tally.untolerated} with an untolerated taint, ${tally.incompatible} with no compatible term`,
    );
  }, 600_000);
});
