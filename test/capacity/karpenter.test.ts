/**
 * Karpenter's requirement algebra and a NodePool's fit. The compatibility table is sigs.k8s.io/karpenter
 * pkg/scheduling/requirements_test.go's ("should be compatible with well-known v1 labels undefined", and "should be
 * strictly compatible", at v1.14.1); the NodePool cases follow pkg/controllers/provisioning (nodeclaimtemplate.go,
 * provisioner.go's Validate and NewScheduler, preferences.go).
 */
import { describe, expect, it } from 'vitest';
import { Capacity } from '../../lib/capacity/index.ts';
import { KarpenterRequirement, KarpenterRequirements } from '../../lib/capacity/karpenter-requirements.ts';
import { WELL_KNOWN_LABELS } from '../../lib/capacity/labels.ts';
import { compareQuantities, isQuantity } from '../../lib/capacity/quantity.ts';
import { fitsNodePool, nodePool, placementOf, requiring } from './support.ts';

const ZONE = 'topology.kubernetes.io/zone';
const zone = (operator: string, ...values: string[]) =>
  KarpenterRequirements.of([KarpenterRequirement.of(ZONE, operator, values)]);

// The requirements of the table, in its order.
const NAMED: readonly (readonly [string, KarpenterRequirements])[] = [
  ['unconstrained', KarpenterRequirements.of([])],
  ['exists', zone('Exists')],
  ['doesNotExist', zone('DoesNotExist')],
  ['inA', zone('In', 'A')],
  ['inB', zone('In', 'B')],
  ['inAB', zone('In', 'A', 'B')],
  ['notInA', zone('NotIn', 'A')],
  ['in1', zone('In', '1')],
  ['in9', zone('In', '9')],
  ['in19', zone('In', '1', '9')],
  ['notIn12', zone('NotIn', '1', '2')],
  ['greaterThan1', zone('Gt', '1')],
  ['greaterThan9', zone('Gt', '9')],
  ['lessThan1', zone('Lt', '1')],
  ['lessThan9', zone('Lt', '9')],
];

// Row r, column c: "+" when NAMED[r].Compatible(NAMED[c]) succeeds, extracted from requirements_test.go.
const WELL_KNOWN_UNDEFINED = [
  '+++++++++++++++',
  '++-++++++++++++',
  '+-+---+---+----',
  '++-+-+----+----',
  '++--+++---+----',
  '++-++++---+----',
  '+++-+++++++++++',
  '++----++-+----+',
  '++----+-++++---',
  '++----++++++--+',
  '+++++++-+++++++',
  '++----+-+++++-+',
  '++----+---+++--',
  '++----+---+--++',
  '++----++-+++-++',
];
// The same without allowing well-known labels undefined: only the first row changes.
const STRICT = ['+-+---+---+----', ...WELL_KNOWN_UNDEFINED.slice(1)];

describe('Requirements.Compatible, as requirements_test.go tabulates it', () => {
  const cases = NAMED.flatMap(([row, existing], r) =>
    NAMED.map(([column, incoming], c) => [row, column, existing, incoming, r, c] as const),
  );

  it.each(cases)('%s with %s, well-known labels allowed undefined', (_, __, existing, incoming, r, c) => {
    expect(existing.compatible(incoming, WELL_KNOWN_LABELS).length === 0).toBe(WELL_KNOWN_UNDEFINED[r]![c] === '+');
  });

  it.each(cases)('%s with %s, strictly', (_, __, existing, incoming, r, c) => {
    expect(existing.compatible(incoming, new Set()).length === 0).toBe(STRICT[r]![c] === '+');
  });

  it('normalises an aliased label to the label it became', () => {
    const requirements = KarpenterRequirements.of([
      KarpenterRequirement.of('failure-domain.beta.kubernetes.io/zone', 'In', ['test']),
    ]);
    expect(requirements.has('failure-domain.beta.kubernetes.io/zone')).toBe(false);
    expect(requirements.get(ZONE).text()).toBe(`${ZONE} In [test]`);
  });

  it('reads Gt of the largest int as DoesNotExist, and Gt and Lt as inclusive bounds', () => {
    expect(KarpenterRequirement.of('n', 'Gt', ['9223372036854775807']).operator()).toBe('DoesNotExist');
    expect(KarpenterRequirement.of('n', 'Gt', ['3']).text()).toBe('n Exists >=4');
    expect(
      KarpenterRequirement.of('n', 'Lt', ['3'])
        .intersection(KarpenterRequirement.of('n', 'Gt', ['1']))
        .text(),
    ).toBe('n Exists >=2 <=2');
    expect(
      KarpenterRequirement.of('n', 'Lt', ['3'])
        .intersection(KarpenterRequirement.of('n', 'Gt', ['2']))
        .operator(),
    ).toBe('DoesNotExist');
  });

  // The prefixed entries of requirements_test.go's "Error Messages" table; for a key without a prefix ("zone") Karpenter
  // hints too, which this model leaves out (it named "pool" a typo of "karpenter.sh/nodepool").
  it.each([
    ['topology.kubernetesio/zone', 'topology.kubernetes.io/zone'],
    ['node.io/zone', 'topology.kubernetes.io/zone'],
    ['topology.kubernetes.io/regio', 'topology.kubernetes.io/region'],
    ['node.kubernetes.io/region', 'topology.kubernetes.io/region'],
    ['karpenter/nodepool', 'karpenter.sh/nodepool'],
  ])('names %s a typo of the well-known %s', (key, known) => {
    const problems = KarpenterRequirements.of([]).compatible(
      KarpenterRequirements.of([KarpenterRequirement.of(key, 'In', ['x'])]),
      WELL_KNOWN_LABELS,
    );
    expect(problems).toEqual([`label "${key}" does not have known values (typo of "${known}"?)`]);
  });

  it('names no typo for a key without a prefix', () => {
    const problems = KarpenterRequirements.of([]).compatible(
      KarpenterRequirements.of([KarpenterRequirement.of('pool', 'In', ['x'])]),
      WELL_KNOWN_LABELS,
    );
    expect(problems).toEqual(['label "pool" does not have known values']);
  });
});

describe('a NodePool fits', () => {
  const general = nodePool('general', {
    requirements: [
      { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
    ],
  });

  it.each<[string, Record<string, unknown>, boolean]>([
    ['a Pod that asks for nothing', {}, true],
    ['a Pod pinned to it by name', { nodeSelector: { 'karpenter.sh/nodepool': 'general' } }, true],
    ['not a Pod pinned to a misspelt name', { nodeSelector: { 'karpenter.sh/nodepool': 'genral' } }, false],
    [
      'a Pod asking for a well-known label it leaves undefined',
      { nodeSelector: { 'kubernetes.io/arch': 'arm64' } },
      true,
    ],
    [
      "a Pod asking for one of the AWS provider's well-known labels",
      { nodeSelector: { 'karpenter.k8s.aws/instance-family': 'm7g' } },
      true,
    ],
    [
      'not a Pod asking for a custom label it does not define',
      { nodeSelector: { 'example.com/pool': 'merged' } },
      false,
    ],
    [
      'a Pod excluding a custom label it does not define',
      requiring([{ key: 'example.com/pool', operator: 'NotIn', values: ['legacy'] }]),
      true,
    ],
    [
      'a Pod asking a custom label not to exist',
      requiring([{ key: 'example.com/pool', operator: 'DoesNotExist' }]),
      true,
    ],
    ['not a Pod whose capacity type it excludes', { nodeSelector: { 'karpenter.sh/capacity-type': 'spot' } }, false],
    [
      'a Pod whose Gt overlaps as numbers',
      requiring([{ key: 'karpenter.k8s.aws/instance-generation', operator: 'Lt', values: ['10'] }]),
      true,
    ],
    [
      'not a Pod whose Lt leaves no number',
      requiring([{ key: 'karpenter.k8s.aws/instance-generation', operator: 'Lt', values: ['5'] }]),
      false,
    ],
    [
      'a Pod whose second required term is compatible',
      requiring(
        [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
        [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
      ),
      true,
    ],
  ])('%s', (_, spec, fits) => {
    expect(fitsNodePool(spec, general)).toBe(fits);
  });

  it('when its template labels define the custom label the Pod asks for', () => {
    const team = nodePool('team', {}, { labels: { 'example.com/team': 'shop' } });
    expect(fitsNodePool({ nodeSelector: { 'example.com/team': 'shop' } }, team)).toBe(true);
    expect(fitsNodePool({ nodeSelector: { 'example.com/team': 'search' } }, team)).toBe(false);
  });

  it("when the Pod asks for its node class's label, outside Karpenter's restricted domains", () => {
    const auto = nodePool('auto', { nodeClassRef: { group: 'eks.amazonaws.com', kind: 'NodeClass', name: 'default' } });
    expect(fitsNodePool({ nodeSelector: { 'eks.amazonaws.com/nodeclass': 'default' } }, auto)).toBe(true);
    expect(fitsNodePool({ nodeSelector: { 'eks.amazonaws.com/nodeclass': 'gpu' } }, auto)).toBe(false);
    // karpenter.k8s.aws is the AWS provider's restricted domain: its provisioner ignores a Pod selecting ec2nodeclass.
    expect(fitsNodePool({ nodeSelector: { 'karpenter.k8s.aws/ec2nodeclass': 'default' } }, general)).toBe(false);
  });

  it('when the Pod tolerates its taints, and whatever its startup taints and PreferNoSchedule taints', () => {
    const gpu = nodePool('gpu', {
      taints: [
        { key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' },
        { key: 'example.com/prefer-not', effect: 'PreferNoSchedule' },
      ],
      startupTaints: [{ key: 'example.com/agent-not-ready', effect: 'NoExecute' }],
    });
    expect(fitsNodePool({}, gpu)).toBe(false);
    expect(fitsNodePool({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] }, gpu)).toBe(true);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a static NodePool', { spec: { replicas: 3 } }],
    ['a NodePool being deleted', { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } }],
    [
      'a NodePool whose Ready condition is False',
      { status: { conditions: [{ type: 'Ready', status: 'False', message: 'NodeClass not found' }] } },
    ],
  ])('never as %s', (_, extra) => {
    expect(fitsNodePool({}, nodePool('out', {}, extra))).toBe(false);
  });

  it('as a NodePool whose status says nothing of readiness, and as one that is Ready', () => {
    expect(fitsNodePool({}, nodePool('manifest'))).toBe(true);
    expect(
      fitsNodePool({}, nodePool('live', {}, { status: { conditions: [{ type: 'Ready', status: 'True' }] } })),
    ).toBe(true);
  });

  it('at its limits, noted and not excluded', () => {
    const full = nodePool(
      'full',
      {},
      { spec: { limits: { cpu: '1000', memory: '4Ti' } }, status: { resources: { cpu: '1k', memory: '1Ti' } } },
    );
    const verdict = Capacity.of({ nodePools: [full] }).judge(placementOf({}));
    expect(verdict.nodePools).toEqual(['full']);
    expect(verdict.notes).toEqual(['NodePool full at its limits: cpu 1k of 1000']);
  });

  it('listed by weight, highest first, then by name', () => {
    const pools = [nodePool('b'), nodePool('a'), nodePool('heavy', {}, { spec: { weight: 50 } })];
    expect(Capacity.of({ nodePools: pools }).judge(placementOf({})).nodePools).toEqual(['heavy', 'a', 'b']);
  });
});

describe('a Pod the provisioner ignores fits no NodePool', () => {
  it.each<[string, Record<string, unknown>, string]>([
    [
      'a term with matchFields',
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }],
            },
          },
        },
      },
      'matchFields',
    ],
    [
      'a restricted label',
      { nodeSelector: { 'kubernetes.io/hostname': 'a' } },
      'restricts the label kubernetes.io/hostname',
    ],
    [
      "a label of Karpenter's domain",
      requiring([{ key: 'karpenter.sh/custom', operator: 'Exists' }]),
      'restricts the label karpenter.sh/custom',
    ],
    [
      'a capacity type Karpenter does not know',
      { nodeSelector: { 'karpenter.sh/capacity-type': 'spto' } },
      'none of the values is one Karpenter knows',
    ],
    [
      'karpenter.sh/nodepool DoesNotExist',
      requiring([{ key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' }]),
      'configured not to run',
    ],
    [
      'a heaviest preference that empties karpenter.sh/nodepool',
      {
        nodeSelector: { 'karpenter.sh/nodepool': 'general' },
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, preference: { matchExpressions: [{ key: 'example.com/x', operator: 'Exists' }] } },
              {
                weight: 90,
                preference: { matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'In', values: ['spot'] }] },
              },
            ],
          },
        },
      },
      'configured not to run',
    ],
  ])('%s', (_, spec, reason) => {
    const verdict = Capacity.of({ nodePools: [nodePool('general')] }).judge(placementOf(spec));
    expect(verdict.fits).toBe(false);
    expect(verdict.closest[0]?.reasons.join('; ')).toContain(reason);
  });
});

describe('resource quantities, compared for the limits note', () => {
  it.each([
    ['1k', '1000', 0],
    ['1Ki', '1000', 1],
    ['999m', '1', -1],
    ['1.5', '1500m', 0],
    ['1e3', '1k', 0],
    ['4Ti', '4000Gi', 1],
    ['1E', '1e18', 0],
    ['100n', '0.0000001', 0],
  ] as const)('%s against %s is %i', (left, right, expected) => {
    expect(compareQuantities(left, right)).toBe(expected);
  });

  it.each(['lots', '', '1.2.3', '5 Gi', 'Gi'])('refuses %j as no quantity', (text) => {
    expect(isQuantity(text)).toBe(false);
  });
});
