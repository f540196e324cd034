/**
 * No typo and no pruned field can widen a rule's scope, however the rule reached the cluster. Rules are put
 * into the fake cluster exactly as the API server stores them after decoding: with today's CRD, whose spec keeps
 * unknown fields, and with a CRD that prunes them (an older install), which leaves only empty containers behind.
 */
import { describe, expect, it } from 'vitest';
import { validatePodMutation } from '../../lib/api/index.ts';
import { loadCrd } from '../infra/corpus.ts';
import { createCrdAdmission, type CustomResourceDefinition, type SchemaNode } from '../infra/structural-schema.ts';
import { omitKey } from '../support/objects.ts';
import { syncSubject, useSyncWorld } from './support.ts';

const crd = loadCrd();
const keeping = createCrdAdmission(crd);

/** The CRD with every x-kubernetes-preserve-unknown-fields removed: it prunes unknown fields, as the CRD once did. */
function pruningCrd(source: CustomResourceDefinition): CustomResourceDefinition {
  const strip = (node: SchemaNode): SchemaNode => {
    const { properties, items, additionalProperties, ...rest } = omitKey(node, 'x-kubernetes-preserve-unknown-fields');
    return {
      ...rest,
      ...(properties === undefined
        ? {}
        : { properties: Object.fromEntries(Object.entries(properties).map(([key, child]) => [key, strip(child)])) }),
      ...(items === undefined ? {} : { items: strip(items) }),
      ...(additionalProperties === undefined ? {} : { additionalProperties: strip(additionalProperties) }),
    };
  };
  const [version] = source.spec.versions;
  return {
    spec: {
      ...source.spec,
      versions: [{ ...version!, schema: { openAPIV3Schema: strip(version!.schema.openAPIV3Schema) } }],
    },
  };
}
const pruning = createCrdAdmission(pruningCrd(crd));

const required = (key: string, value: string) => ({
  requiredDuringSchedulingIgnoredDuringExecution: {
    nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: [value] }] }],
  },
});
const add = { mutationAdd: { annotations: { 'example.com/migrated': 'yes' } } };

function resource(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name },
    spec: { enable: true, ...add, ...spec },
  };
}

/** One typo at each level of the selector, beside a correct dimension, and the field path it must be rejected at. */
const TYPO_BESIDE_A_DIMENSION: readonly (readonly [string, Record<string, unknown>, string])[] = [
  [
    'a selector dimension',
    { workloadSelector: { namespaces: ['production'], kind: ['Deployment'] } },
    'spec.workloadSelector.kind',
  ],
  [
    'a label selector field',
    {
      workloadSelector: {
        labelSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }], matchLabel: { tier: 'web' } },
      },
    },
    'spec.workloadSelector.labelSelector.matchLabel',
  ],
  [
    'a label requirement field',
    {
      workloadSelector: {
        labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'], value: 'api' }] },
      },
    },
    'spec.workloadSelector.labelSelector.matchExpressions[0].value',
  ],
  [
    'a node affinity half',
    {
      workloadSelector: {
        nodeAffinityMatch: { ...required('example.com/pool', 'legacy'), preferredDuringScheduling: [] },
      },
    },
    'spec.workloadSelector.nodeAffinityMatch.preferredDuringScheduling',
  ],
  [
    'a node selector term field',
    {
      workloadSelector: {
        nodeAffinityMatch: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'example.com/pool', operator: 'Exists' }], matchExpresions: [] },
            ],
          },
        },
      },
    },
    'spec.workloadSelector.nodeAffinityMatch.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpresions',
  ],
  [
    'a node requirement field',
    {
      workloadSelector: {
        nodeAffinityMatch: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'example.com/pool', operator: 'In', values: ['legacy'], vaules: ['new'] }] },
            ],
          },
        },
      },
    },
    'spec.workloadSelector.nodeAffinityMatch.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].vaules',
  ],
  [
    'a toleration field',
    {
      workloadSelector: { tolerationsMatch: [{ key: 'example.com/legacy', operator: 'Exists', efect: 'NoSchedule' }] },
    },
    'spec.workloadSelector.tolerationsMatch[0].efect',
  ],
  ['the spec', { workloadSelector: { namespaces: ['production'] }, prority: 10 }, 'spec.prority'],
];

/** A typo that leaves its container empty once pruned: caught however the rule is stored. */
const TYPO_ALONE: readonly (readonly [string, Record<string, unknown>, string])[] = [
  ['the only selector dimension', { workloadSelector: { namespace: ['production'] } }, 'spec.workloadSelector'],
  [
    'the only label selector field',
    { workloadSelector: { labelSelector: { matchLabel: { app: 'web' } } } },
    'spec.workloadSelector.labelSelector',
  ],
  [
    'every field of a toleration to match',
    { workloadSelector: { tolerationsMatch: [{ kye: 'example.com/legacy' }] } },
    'spec.workloadSelector.tolerationsMatch[0]',
  ],
];

describe('a typo beside a correct dimension, stored by the CRD that keeps unknown fields', () => {
  it.each(TYPO_BESIDE_A_DIMENSION)(
    'in %s is kept by the API server and rejected by the validator at its path',
    (_, spec, field) => {
      const verdict = keeping(resource('typo', spec));
      expect(verdict.accepted).toBe(true);
      const rule = validatePodMutation(verdict.stored);
      expect(rule.valid).toBe(false);
      expect(rule.valid ? [] : rule.invalid.issues.map((issue) => issue.field)).toContain(field);
    },
  );

  it.each(TYPO_BESIDE_A_DIMENSION.slice(0, 1))(
    'in %s would be pruned by a CRD that prunes, widening the rule silently',
    (_, spec) => {
      // Why the CRD keeps unknown fields: once pruned, nothing is left to reject.
      const verdict = pruning(resource('typo', spec));
      expect(validatePodMutation(verdict.stored).valid).toBe(true);
    },
  );
});

describe('a typo that is the only content of its container', () => {
  it.each(TYPO_ALONE)('in %s is rejected by the validator when the API server pruned it', (_, spec, field) => {
    const verdict = pruning(resource('typo', spec));
    const rule = validatePodMutation(verdict.stored);
    expect(rule.valid ? [] : rule.invalid.issues.map((issue) => issue.field)).toContain(field);
  });

  it.each(TYPO_ALONE.slice(0, 2))(
    'in %s is refused at apply time by the CRD that keeps unknown fields',
    (_, spec, field) => {
      const verdict = keeping(resource('typo', spec));
      expect(verdict.accepted).toBe(false);
      expect(verdict.errors.map((error) => error.field)).toContain(field);
    },
  );
});

describe('the sync of typo rules through the fake API server', () => {
  const world = useSyncWorld();

  it('publishes none of them and writes Accepted=False naming the field, however they were stored', async () => {
    const stored = [
      ...TYPO_BESIDE_A_DIMENSION.map(([, spec, field], index) => ({
        name: `kept-${index}`,
        object: keeping(resource('x', spec)).stored!,
        field,
      })),
      ...TYPO_ALONE.map(([, spec, field], index) => ({
        name: `pruned-${index}`,
        object: pruning(resource('x', spec)).stored!,
        field,
      })),
    ];
    for (const { name, object } of stored) world.server.put({ metadata: { name }, spec: object.spec });
    world.server.put({
      metadata: { name: 'correct' },
      spec: { enable: true, workloadSelector: { namespaces: ['production'] }, ...add },
    });
    const subject = syncSubject(world);

    const report = await subject.sync();

    expect(report).toMatchObject({ outcome: 'published', valid: 1, invalid: stored.length });
    expect((await world.store(subject.clusterId).read())?.rules.map((rule) => rule.name)).toEqual(['correct']);
    for (const { name, field } of stored) {
      const patch = world.server.statusPatches.find((candidate) => candidate.name === name);
      const condition = (patch?.body as { status: { conditions: { type: string; status: string; message: string }[] } })
        .status.conditions[0]!;
      expect(condition).toMatchObject({ type: 'Accepted', status: 'False' });
      expect(condition.message).toContain(`PodMutation "${name}": ${field}:`);
    }
  });
});
