import { describe, expect, it } from 'vitest';
import { LIMITS, PRODUCT_ANNOTATION_PREFIX } from '../../lib/api/index.ts';
import { COST_LIMITS, estimateRuleCosts } from './cel-cost.ts';
import { loadCrd } from './corpus.ts';
import type { SchemaNode, ValidationRule } from './structural-schema.ts';
import { RESERVED_KEYS } from '../../lib/api/constants.ts';

const crd = loadCrd() as ReturnType<typeof loadCrd> & {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly scope: string;
    readonly names: Record<string, unknown>;
    readonly versions: readonly { readonly served: boolean; readonly additionalPrinterColumns: readonly unknown[] }[];
  };
};
const version = crd.spec.versions[0]!;
const root = crd.spec.versions[0]!.schema.openAPIV3Schema;

/** Every schema node with its path (properties by name, items as [], map values as .*). */
function walk(node: SchemaNode, path = ''): [string, SchemaNode][] {
  return [
    [path, node],
    ...Object.entries(node.properties ?? {}).flatMap(([name, child]) =>
      walk(child, path === '' ? name : `${path}.${name}`),
    ),
    ...(node.items === undefined ? [] : walk(node.items, `${path}[]`)),
    ...(node.additionalProperties === undefined ? [] : walk(node.additionalProperties, `${path}.*`)),
  ];
}

function at(path: string): SchemaNode {
  const found = walk(root).find(([candidate]) => candidate === path);
  if (found === undefined) throw new Error(`no schema node at ${path}`);
  return found[1];
}

function withoutDescriptions(node: SchemaNode): unknown {
  return JSON.parse(JSON.stringify(node, (key, value: unknown) => (key === 'description' ? undefined : value)));
}

/** The node without descriptions and without the given CEL rules. */
function withoutDescriptionsAndRules(node: SchemaNode, rules: readonly string[]): unknown {
  return JSON.parse(
    JSON.stringify(node, (key, value: unknown) => {
      if (key === 'description') return undefined;
      if (key === 'x-kubernetes-validations')
        return (value as ValidationRule[]).filter(({ rule }) => !rules.includes(rule));
      return value;
    }),
  );
}

function rulesAt(path: string): string[] {
  return at(path)['x-kubernetes-validations']?.map(({ rule }) => rule) ?? [];
}

const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED = 'preferredDuringSchedulingIgnoredDuringExecution';
const AFFINITIES = ['spec.workloadSelector.nodeAffinityMatch', 'spec.mutationAdd.nodeAffinity'];
const REQUIRED_TERMS = AFFINITIES.map((affinity) => `${affinity}.${REQUIRED}.nodeSelectorTerms[]`);
const PREFERRED_TERMS = AFFINITIES.map((affinity) => `${affinity}.${PREFERRED}[].preference`);
const TERMS = [...REQUIRED_TERMS, ...PREFERRED_TERMS];
const LISTS_OF_CONFIGURED_ITEMS = [
  'spec.workloadSelector.tolerationsMatch',
  'spec.mutationAdd.tolerations',
  'spec.mutationRemove.nodeAffinity.keys',
  'spec.mutationRemove.nodeSelector.keys',
  'spec.mutationRemove.tolerations.keys',
];

describe('the PodMutation CRD', () => {
  it('is named podmutations.agent.cloudpilot.ai, cluster-scoped, with the short name pm', () => {
    expect(crd.metadata.name).toBe('podmutations.agent.cloudpilot.ai');
    expect(crd.spec.group).toBe('agent.cloudpilot.ai');
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names).toEqual({
      plural: 'podmutations',
      singular: 'podmutation',
      kind: 'PodMutation',
      listKind: 'PodMutationList',
      shortNames: ['pm'],
    });
  });

  it('serves and stores the single version v1alpha1 with a status subresource', () => {
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
  });

  it('prints Enabled, Priority, Accepted, Enforcement, Matched, Pending, Schedulable and Age columns', () => {
    expect(version.additionalPrinterColumns).toEqual([
      expect.objectContaining({ name: 'Enabled', type: 'boolean', jsonPath: '.spec.enable' }),
      expect.objectContaining({ name: 'Priority', type: 'integer', jsonPath: '.spec.priority' }),
      expect.objectContaining({
        name: 'Accepted',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="Accepted")].status',
      }),
      expect.objectContaining({ name: 'Enforcement', type: 'string', jsonPath: '.status.enforcement' }),
      expect.objectContaining({ name: 'Matched', type: 'integer', jsonPath: '.status.matchedPods' }),
      expect.objectContaining({ name: 'Pending', type: 'integer', jsonPath: '.status.pendingPods' }),
      expect.objectContaining({
        name: 'Schedulable',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="Schedulable")].status',
      }),
      expect.objectContaining({ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }),
    ]);
  });

  it('describes every field for kubectl explain', () => {
    // metadata is ObjectMeta; kubectl explain documents it, and the CRD may not restate it.
    const undescribed = walk(root)
      .filter(([path]) => path !== '' && path !== 'metadata' && !path.endsWith('[]') && !path.endsWith('.*'))
      .filter(([, node]) => (node.description ?? '').trim().length === 0)
      .map(([path]) => path);
    expect(undescribed).toEqual([]);
  });

  it('gives every schema node a type, as structural schemas require', () => {
    expect(
      walk(root)
        .filter(([, node]) => node.type === undefined)
        .map(([path]) => path),
    ).toEqual([]);
  });

  it('declares the configured limits as maxItems in both node affinities', () => {
    for (const affinity of AFFINITIES) {
      expect(at(`${affinity}.${REQUIRED}.nodeSelectorTerms`).maxItems).toBe(LIMITS.configuredRequiredTerms);
      expect(at(`${affinity}.${PREFERRED}`).maxItems).toBe(LIMITS.configuredPreferredTerms);
    }
    for (const term of TERMS) {
      expect(at(`${term}.matchExpressions`).maxItems).toBe(LIMITS.configuredExpressionsPerTerm);
      expect(at(`${term}.matchExpressions[].values`).maxItems).toBe(LIMITS.configuredValuesPerExpression);
    }
  });

  it('declares the configured list limit as maxItems on every toleration list and key list', () => {
    for (const list of LISTS_OF_CONFIGURED_ITEMS) expect(at(list).maxItems, list).toBe(LIMITS.configuredListItems);
  });

  it('bounds preferred weights to 1..100', () => {
    for (const affinity of AFFINITIES) {
      expect(at(`${affinity}.${PREFERRED}[].weight`)).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    }
  });

  it('enumerates the operators and effects', () => {
    for (const term of TERMS) {
      expect(at(`${term}.matchExpressions[].operator`).enum).toEqual([
        'In',
        'NotIn',
        'Exists',
        'DoesNotExist',
        'Gt',
        'Lt',
      ]);
    }
    expect(at('spec.workloadSelector.labelSelector.matchExpressions[].operator').enum).toEqual([
      'In',
      'NotIn',
      'Exists',
      'DoesNotExist',
    ]);
    for (const list of ['spec.workloadSelector.tolerationsMatch', 'spec.mutationAdd.tolerations']) {
      expect(at(`${list}[].operator`).enum).toEqual(['', 'Equal', 'Exists']);
      expect(at(`${list}[].effect`).enum).toEqual(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']);
    }
  });

  it('uses one node selector term schema for both required selectors and one for both preferred lists', () => {
    for (const terms of [REQUIRED_TERMS, PREFERRED_TERMS]) {
      const [first, ...others] = terms.map(at);
      for (const other of others) expect(other).toEqual(first);
    }
  });

  it('gives required terms one requirement rule more than preferred terms and no other difference but descriptions', () => {
    // Kubernetes validates the values of a Pod's required terms as label values, not those of preferred ones.
    const preferredRules = rulesAt(`${PREFERRED_TERMS[0]}.matchExpressions[]`);
    const requiredOnly = rulesAt(`${REQUIRED_TERMS[0]}.matchExpressions[]`).filter(
      (rule) => !preferredRules.includes(rule),
    );
    expect(requiredOnly).toHaveLength(1);
    expect(withoutDescriptionsAndRules(at(REQUIRED_TERMS[0]!), requiredOnly)).toEqual(
      withoutDescriptions(at(PREFERRED_TERMS[0]!)),
    );
  });

  it('uses one node affinity schema for matching and adding, apart from descriptions', () => {
    const [match, add] = AFFINITIES.map((path) => withoutDescriptions(at(path)));
    expect(add).toEqual(match);
  });

  it('declares matchFields in every term and forbids it with a rule', () => {
    for (const term of TERMS) {
      expect(at(term).properties).toHaveProperty('matchFields');
      expect(at(term)['x-kubernetes-validations']?.map(({ rule }) => rule)).toContain('!has(self.matchFields)');
    }
  });

  it('refuses the reserved keys exactly where the validator does', () => {
    const reservedRulePaths = walk(root)
      .filter(([, node]) =>
        (node['x-kubernetes-validations'] ?? []).some(({ rule }) =>
          [...RESERVED_KEYS].every((key) => rule.includes(`'${key}'`)),
        ),
      )
      .map(([path]) => path)
      .sort();
    expect(reservedRulePaths).toEqual(
      [
        ...TERMS.map((term) => `${term}.matchExpressions[]`),
        'spec.mutationAdd.nodeSelector',
        'spec.mutationRemove.nodeAffinity.keys[]',
      ].sort(),
    );
  });

  it("refuses annotations under the product's prefix", () => {
    const rules = at('spec.mutationAdd.annotations')['x-kubernetes-validations']?.map(({ rule }) => rule) ?? [];
    expect(rules.some((rule) => rule.includes(`'${PRODUCT_ANNOTATION_PREFIX}'`))).toBe(true);
  });

  it('describes the status the sync writes: Accepted conditions, observedGeneration and lastSyncTime', () => {
    const conditions = at('status.conditions');
    expect(conditions).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });
    expect(Object.keys(at('status.conditions[]').properties ?? {}).sort()).toEqual(
      ['lastTransitionTime', 'message', 'observedGeneration', 'reason', 'status', 'type'].sort(),
    );
    expect(at('status.conditions[].status').enum).toEqual(['True', 'False', 'Unknown']);
    expect(at('status.observedGeneration')).toMatchObject({ type: 'integer', format: 'int64' });
    expect(at('status.lastSyncTime')).toMatchObject({ type: 'string', format: 'date-time' });
  });
});

describe('the CEL rules of the CRD', () => {
  const costs = estimateRuleCosts(root);
  // The port approximates the API server's estimator, so it must fit with a twofold margin.
  const margin = 2;

  it('each stay within the per-rule cost budget of the API server', () => {
    const overBudget = costs.filter(({ total }) => total * margin > COST_LIMITS.perRule);
    expect(overBudget).toEqual([]);
  });

  it('together stay within the per-CRD cost budget of the API server', () => {
    const total = costs.reduce((sum, { total: cost }) => sum + cost, 0);
    expect(total * margin).toBeLessThanOrEqual(COST_LIMITS.perCrd);
  });

  it('are all costed, which means every field and function they use is declared', () => {
    const ruleCount = walk(root).reduce(
      (count, [, node]) => count + (node['x-kubernetes-validations']?.length ?? 0),
      0,
    );
    expect(costs).toHaveLength(ruleCount);
  });
});

describe('the CEL cost estimate', () => {
  const list = (maxItems?: number): SchemaNode => ({
    type: 'array',
    ...(maxItems === undefined ? {} : { maxItems }),
    items: {
      type: 'string',
      maxLength: 63,
      'x-kubernetes-validations': [{ rule: "self.matches('^[a-z]+$')", message: 'm' }],
    },
  });

  it('multiplies a rule by the maxItems of the lists above it', () => {
    const [bounded] = estimateRuleCosts({ type: 'object', properties: { names: list(10) } });
    expect(bounded).toMatchObject({ cardinality: 10, total: bounded!.cost * 10 });
  });

  it('assumes a request full of nodes below a list without maxItems', () => {
    const [unbounded] = estimateRuleCosts({ type: 'object', properties: { names: list() } });
    expect(unbounded!.cardinality).toBeGreaterThan(1_000_000);
    expect(unbounded!.total).toBeGreaterThan(COST_LIMITS.perRule);
  });

  it('refuses a rule that selects an undeclared field', () => {
    const schema: SchemaNode = {
      type: 'object',
      properties: { a: { type: 'string' } },
      'x-kubernetes-validations': [{ rule: 'has(self.b)', message: 'm' }],
    };
    expect(() => estimateRuleCosts(schema)).toThrow(/undefined field b/);
  });
});
