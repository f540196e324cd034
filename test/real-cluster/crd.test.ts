/**
 * The PodMutation CRD in front of a real API server: infra/ applied in both modes of docs/design.md, the CRD accepted
 * and Established with its defaults, every corpus file given the verdict and the errors of the port
 * (test/infra/structural-schema.ts), the largest and the just-over-budget rules, the cost estimator port
 * (test/infra/cel-cost.ts) held to the API server's own estimates, unknown fields by client setting as docs/api.md's
 * table says, and what `kubectl get pm` and `kubectl explain pm.spec` print.
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ruleCost, validatePodMutation } from '../../lib/api/index.ts';
import { COST_LIMITS, estimateRuleCosts } from '../infra/cel-cost.ts';
import { loadCorpus, loadCrd } from '../infra/corpus.ts';
import {
  createCrdAdmission,
  type CrdError,
  type CrdVerdict,
  type SchemaNode,
  type ValidationRule,
} from '../infra/structural-schema.ts';
import { podMutation } from '../support/builders.ts';
import { largestRule } from '../support/largest-rule.ts';
import { omitKey } from '../support/objects.ts';
import type { ApiAnswer, Json } from './api.ts';
import type { CommandResult, ControlPlane } from './control-plane.ts';
import { useControlPlane } from './use-control-plane.ts';
import { RULE_BUDGET } from '../../lib/api/constants.ts';

const cluster = useControlPlane();

const INFRA = fileURLToPath(new URL('../../infra/', import.meta.url));
const CRD_NAME = 'podmutations.agent.cloudpilot.ai';
const PLACEMENT_CRD_NAME = 'podplacements.agent.cloudpilot.ai';
const PODMUTATIONS = '/apis/agent.cloudpilot.ai/v1alpha1/podmutations';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
// docs/design.md "Sync and cluster access": the label selector of each mode.
const EKS_MODE = 'podmutation.agent.cloudpilot.ai/access!=kubeconfig';
const KUBECONFIG_MODE = 'podmutation.agent.cloudpilot.ai/access!=eks-access-entry';

interface PrinterColumn {
  readonly name: string;
  readonly jsonPath: string;
  readonly type: string;
  readonly priority?: number;
}

const crd = loadCrd();
const admit = createCrdAdmission(crd);
const version = crd.spec.versions[0]! as (typeof crd.spec.versions)[number] & {
  readonly additionalPrinterColumns: readonly PrinterColumn[];
};
const schema = version.schema.openAPIV3Schema;

/** One cause of an API server refusal: its field ('' for none) and message. */
interface Cause {
  readonly field: string;
  readonly message: string;
}

function causesOf(answer: ApiAnswer): Cause[] {
  const body = answer.body as { message?: string; details?: { causes?: { field?: string; message?: string }[] } };
  const causes = body.details?.causes ?? [];
  if (causes.length === 0) return [{ field: '', message: body.message ?? answer.text }];
  // A field.Error without a path is sent as the field "<nil>".
  return causes.map(({ field, message }) => ({
    field: field === undefined || field === '<nil>' ? '' : field,
    message: message ?? '',
  }));
}

/**
 * Pairs each error of the port with a cause of the same field whose message contains the port's; returns the errors
 * that found none and the causes left over, so that both lists are empty exactly when the two answers agree.
 */
function unpaired(port: readonly CrdError[], real: readonly Cause[]): { port: Cause[]; real: Cause[] } {
  const left = [...real];
  const missing = port
    .filter((error) => {
      const index = left.findIndex((cause) => cause.field === error.field && cause.message.includes(error.message));
      if (index >= 0) left.splice(index, 1);
      return index < 0;
    })
    .map(({ field, message }) => ({ field, message }));
  return { port: missing, real: left };
}

/** The stored object without what the API server sets itself (metadata). */
function content(object: unknown): Json {
  return omitKey(object as Json, 'metadata');
}

async function dryRunCreate(plane: ControlPlane, resource: unknown): Promise<ApiAnswer> {
  return plane.admin.request('POST', PODMUTATIONS, {
    body: resource,
    query: { dryRun: 'All', fieldValidation: 'Strict' },
  });
}

/** Expects the API server's answer to be the port's verdict: accepted and stored alike, or refused with the same errors. */
function expectSameAnswer(answer: ApiAnswer, verdict: CrdVerdict): void {
  expect(answer.status === 201, answer.text.slice(0, 2000)).toBe(verdict.accepted);
  if (verdict.accepted) expect(content(answer.body)).toEqual(content(verdict.stored));
  else expect(unpaired(verdict.errors, causesOf(answer))).toEqual({ port: [], real: [] });
}

function kubectlApply(plane: ControlPlane, args: readonly string[], resource?: unknown): Promise<CommandResult> {
  return plane.kubectl(
    ['apply', ...args, ...(resource === undefined ? [] : ['-f', '-'])],
    resource === undefined ? {} : { input: stringify(resource) },
  );
}

/** The objects `kubectl apply` reports, as kind/name (the resource's group left out). */
function appliedObjects(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => line.split(' ')[0]!.replace(/^([a-z]+)(\.[^/]*)?\//, '$1/'))
    .sort();
}

async function exists(plane: ControlPlane, object: string): Promise<boolean> {
  const [kindName, namespace] = object.split('@');
  const result = await plane.kubectl([
    'get',
    kindName!,
    ...(namespace === undefined ? [] : ['-n', namespace]),
    '-o',
    'name',
  ]);
  if (result.code !== 0 && !result.stderr.includes('NotFound'))
    throw new Error(`kubectl get ${object}: ${result.stderr}`);
  return result.code === 0;
}

/** What one user may do, by a SubjectAccessReview (the RBAC authorizer's own answer). */
async function allowed(
  plane: ControlPlane,
  subject: { user: string; groups: string[] },
  verb: string,
  resource: string,
): Promise<boolean> {
  const [plural, subresource] = resource.split('/');
  const group = plural === 'podmutations' || plural === 'podplacements' ? 'agent.cloudpilot.ai' : '';
  const review = await plane.admin.json<{ status: { allowed: boolean } }>(
    'POST',
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          ...subject,
          resourceAttributes: { group, resource: plural, verb, ...(subresource === undefined ? {} : { subresource }) },
        },
      },
    },
  );
  return review.status.allowed;
}

// infra/rbac.yaml: the sync may read PodMutations and PodPlacements and patch their status, nothing else.
const SYNC_ACCESS: readonly (readonly [verb: string, resource: string, allowed: boolean])[] = [
  ...['podmutations', 'podplacements'].flatMap((plural) => [
    ['get', plural, true] as const,
    ['list', plural, true] as const,
    ['watch', plural, true] as const,
    ['patch', `${plural}/status`, true] as const,
    ['update', `${plural}/status`, false] as const,
    ['create', plural, false] as const,
    ['update', plural, false] as const,
    ['patch', plural, false] as const,
    ['delete', plural, false] as const,
  ]),
  ['list', 'secrets', false],
];
const SYNC_GROUP = {
  user: 'arn:aws:sts::111122223333:assumed-role/podmutation-sync/lambda',
  groups: ['podmutation-sync', 'system:authenticated'],
};
const SYNC_SERVICE_ACCOUNT = {
  user: 'system:serviceaccount:podmutation-system:podmutation-sync',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:podmutation-system', 'system:authenticated'],
};

async function accessOf(
  plane: ControlPlane,
  subject: typeof SYNC_GROUP,
): Promise<(readonly [string, string, boolean])[]> {
  return Promise.all(
    SYNC_ACCESS.map(
      async ([verb, resource]) => [verb, resource, await allowed(plane, subject, verb, resource)] as const,
    ),
  );
}

let eksApply: CommandResult;
beforeAll(async () => {
  const plane = cluster();
  eksApply = await kubectlApply(plane, ['-k', INFRA, '-l', EKS_MODE]);
  if (eksApply.code !== 0) return;
  const established = await plane.kubectl(['wait', '--for=condition=Established', '--timeout=90s', `crd/${CRD_NAME}`]);
  if (established.code !== 0) throw new Error(`the CRD did not become Established: ${established.stderr}`);
}, 120_000);

describe('infra/ applied as docs/design.md says', () => {
  // docs/design.md "Sync and cluster access": what each mode applies; kind/name@namespace.
  const EKS_OBJECTS = [
    `customresourcedefinition/${CRD_NAME}`,
    `customresourcedefinition/${PLACEMENT_CRD_NAME}`,
    'clusterrole/podmutation-sync',
    'clusterrolebinding/podmutation-sync',
  ];
  const KUBECONFIG_OBJECTS = [
    `customresourcedefinition/${CRD_NAME}`,
    `customresourcedefinition/${PLACEMENT_CRD_NAME}`,
    'clusterrole/podmutation-sync',
    'namespace/podmutation-system',
    'serviceaccount/podmutation-sync@podmutation-system',
    'clusterrolebinding/podmutation-sync-serviceaccount',
  ];
  const only = (objects: readonly string[], others: readonly string[]) =>
    others.filter((object) => !objects.includes(object));

  it('in EKS mode creates the CRD, the ClusterRole and its group binding, and nothing of kubeconfig mode', async () => {
    const plane = cluster();
    expect(eksApply.code, eksApply.stderr).toBe(0);
    expect(appliedObjects(eksApply.stdout)).toEqual(EKS_OBJECTS.map((object) => object.split('@')[0]).sort());
    for (const object of EKS_OBJECTS) expect(await exists(plane, object), object).toBe(true);
    for (const object of only(EKS_OBJECTS, KUBECONFIG_OBJECTS)) expect(await exists(plane, object), object).toBe(false);
    expect(await accessOf(plane, SYNC_GROUP)).toEqual(SYNC_ACCESS);
  });

  it('in kubeconfig mode creates the namespace, the ServiceAccount and its binding, and not the group binding', async () => {
    const plane = cluster();
    // As on a cluster that never ran EKS mode: the one object kubeconfig mode must not bring back.
    for (const object of only(KUBECONFIG_OBJECTS, EKS_OBJECTS))
      expect((await plane.kubectl(['delete', object])).code).toBe(0);

    const applied = await kubectlApply(plane, ['-k', INFRA, '-l', KUBECONFIG_MODE]);

    expect(applied.code, applied.stderr).toBe(0);
    expect(appliedObjects(applied.stdout)).toEqual(KUBECONFIG_OBJECTS.map((object) => object.split('@')[0]).sort());
    for (const object of KUBECONFIG_OBJECTS) expect(await exists(plane, object), object).toBe(true);
    for (const object of only(KUBECONFIG_OBJECTS, EKS_OBJECTS)) expect(await exists(plane, object), object).toBe(false);
    expect(await accessOf(plane, SYNC_SERVICE_ACCOUNT)).toEqual(SYNC_ACCESS);
  });

  it('accepts infra/rbac-report.yaml, which lets the report group read Pods and nothing more, and gives the sync nothing', async () => {
    const plane = cluster();
    const applied = await kubectlApply(plane, ['-f', `${INFRA}rbac-report.yaml`]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(appliedObjects(applied.stdout)).toEqual([
      'clusterrole/podmutation-report',
      'clusterrole/podmutation-report-cluster-scoped',
      'clusterrolebinding/podmutation-report',
      'clusterrolebinding/podmutation-report-cluster-scoped',
    ]);
    const reader = { user: 'report-runner', groups: ['podmutation-report', 'system:authenticated'] };
    expect(await allowed(plane, reader, 'list', 'pods')).toBe(true);
    expect(await allowed(plane, reader, 'delete', 'pods')).toBe(false);
    expect(await allowed(plane, reader, 'list', 'podmutations')).toBe(true);
    expect(await allowed(plane, reader, 'patch', 'podmutations/status')).toBe(false);
    for (const subject of [SYNC_GROUP, SYNC_SERVICE_ACCOUNT])
      expect(await allowed(plane, subject, 'list', 'pods'), subject.user).toBe(false);
  });

  it('accepts infra/rbac-sync-report.yaml, which lets the sync, in either mode, read Pods and nothing more', async () => {
    const plane = cluster();
    const applied = await kubectlApply(plane, ['-f', `${INFRA}rbac-sync-report.yaml`]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(appliedObjects(applied.stdout)).toEqual([
      'clusterrole/podmutation-sync-report',
      'clusterrolebinding/podmutation-sync-report',
      'clusterrolebinding/podmutation-sync-report-serviceaccount',
    ]);
    for (const subject of [SYNC_GROUP, SYNC_SERVICE_ACCOUNT]) {
      expect(await allowed(plane, subject, 'list', 'pods'), subject.user).toBe(true);
      expect(await allowed(plane, subject, 'delete', 'pods'), subject.user).toBe(false);
    }
  });
});

describe('the CRD on the API server', () => {
  it('is Established with its names accepted and a structural schema', async () => {
    const stored = await cluster().admin.json<{
      status: { conditions: { type: string; status: string }[]; acceptedNames: Json };
    }>('GET', `${CRDS}/${CRD_NAME}`);
    const conditions = Object.fromEntries(stored.status.conditions.map(({ type, status }) => [type, status]));
    expect(conditions).toMatchObject({ Established: 'True', NamesAccepted: 'True' });
    expect(conditions).not.toHaveProperty('NonStructuralSchema');
    expect(stored.status.acceptedNames).toEqual(crd.spec.names);
  });

  it('defaults enable to false and priority to 0 on a PodMutation that omits them, as the port does', async () => {
    const plane = cluster();
    const resource = {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'defaults' },
      spec: { workloadSelector: { namespaces: ['shop'] }, mutationAdd: { annotations: { 'example.com/a': 'b' } } },
    };
    const applied = await kubectlApply(plane, [], resource);
    expect(applied.code, applied.stderr).toBe(0);

    const stored = await plane.admin.json<{ spec: Json }>('GET', `${PODMUTATIONS}/defaults`);

    expect(stored.spec).toMatchObject({ enable: false, priority: 0 });
    expect(stored.spec).toEqual(admit(resource).stored?.spec);
  });
});

describe('the corpus on the API server', () => {
  const corpus = (['valid', 'invalid', 'exceptions'] as const).flatMap((folder) =>
    loadCorpus(folder).map((entry) => ({ ...entry, name: `${folder}/${entry.file}`, folder })),
  );
  const answers = new Map<string, ApiAnswer>();
  // Dry-run creates, a few at a time: the API server validates each in full and stores none.
  const BATCH = 8;

  beforeAll(async () => {
    const plane = cluster();
    for (let start = 0; start < corpus.length; start += BATCH) {
      const batch = corpus.slice(start, start + BATCH);
      const results = await Promise.all(batch.map((entry) => dryRunCreate(plane, entry.resource)));
      batch.forEach((entry, index) => answers.set(entry.name, results[index]!));
    }
  }, 120_000);

  it('covers the valid, invalid and exception files', () => {
    expect(new Set(corpus.map(({ folder }) => folder))).toEqual(new Set(['valid', 'invalid', 'exceptions']));
    expect(answers.size).toBe(corpus.length);
  });

  it.each(corpus.map((entry) => [entry.name, entry] as const))(
    '%s gets the verdict, the errors and the stored object of the port',
    (_name, entry) => {
      const answer = answers.get(entry.name)!;
      expect(answer.status === 201).toBe(entry.folder !== 'invalid');
      expectSameAnswer(answer, admit(entry.resource));
    },
  );

  it.each(corpus.filter(({ folder }) => folder === 'invalid').map((entry) => [entry.name, entry] as const))(
    '%s is refused for the reason its "# crd:" line names, at that field',
    (_name, entry) => {
      const separator = entry.expectedRejection!.indexOf(': ');
      const [field, message] = [
        entry.expectedRejection!.slice(0, separator),
        entry.expectedRejection!.slice(separator + 2),
      ];
      const causes = causesOf(answers.get(entry.name)!);
      expect(
        causes.filter((cause) => cause.field === field && cause.message.includes(message)),
        JSON.stringify(causes),
      ).not.toEqual([]);
    },
  );
});

describe('the per-rule budget on the API server', () => {
  const requirement = (index: number, values: number) => ({
    key: `example.com/k${index}`,
    operator: 'In',
    values: Array.from({ length: values }, (_, value) => `v${value}`),
  });
  const required = (terms: number, perTerm: number, values: number) => ({
    nodeSelectorTerms: Array.from({ length: terms }, (_, term) => ({
      matchExpressions: Array.from({ length: perTerm }, (_, index) => requirement(term * perTerm + index, values)),
    })),
  });

  it('stores the largest rule the contract admits, spending the whole budget', async () => {
    const plane = cluster();
    const resource = largestRule();
    const verdict = validatePodMutation(resource);
    expect(verdict.valid && ruleCost(verdict.rule)).toMatchObject({
      requirements: RULE_BUDGET.maxRequirements,
      values: RULE_BUDGET.maxValues,
    });

    // A real create, not a dry run: etcd's request limit applies to the stored object too.
    const answer = await plane.admin.request('POST', PODMUTATIONS, {
      body: resource,
      query: { fieldValidation: 'Strict' },
    });

    expectSameAnswer(answer, admit(resource));
    expect(Buffer.byteLength(answer.text)).toBeGreaterThan(JSON.stringify(resource).length);
  });

  // test/api/budget.test.ts: one requirement or one value over the budget, each list within its own limit.
  it.each([
    [
      'one requirement more than the budget',
      required(4, 64, 1),
      { labelSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } },
    ],
    ['one value more than the budget', required(1, 17, 61), {}],
  ])('refuses a rule with %s at spec, as the port does', async (_, terms, selector) => {
    const resource = podMutation('over-budget', {
      workloadSelector: { namespaces: ['production'], ...selector },
      mutationAdd: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } },
    });
    const verdict = admit(resource);
    expect(verdict.errors.map(({ field }) => field)).toContain('spec');

    expectSameAnswer(await dryRunCreate(cluster(), resource), verdict);
  });
});

describe('the CEL cost estimate on the API server', () => {
  interface MutableNode {
    maxItems?: number;
    maxProperties?: number;
    properties?: Record<string, MutableNode>;
    items?: MutableNode;
    additionalProperties?: MutableNode;
    'x-kubernetes-validations'?: ValidationRule[];
  }
  const ROOT_FIELD = 'spec.validation.openAPIV3Schema';
  const AFFINITIES = ['spec.workloadSelector.nodeAffinityMatch', 'spec.mutationAdd.nodeAffinity'];
  const TERM_LISTS = AFFINITIES.flatMap((affinity) => [
    `${affinity}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`,
    `${affinity}.preferredDuringSchedulingIgnoredDuringExecution`,
  ]);
  // The label-key syntax the validator checks on map keys (lib/syntax), as one regular expression.
  const KEY_RULE = {
    rule: "self.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$'))",
    message: 'every key must be a label key',
  };

  function node(root: MutableNode, path: string): MutableNode {
    return path.split('.').reduce((parent, name) => parent.properties![name]!, root);
  }
  function everyNode(root: MutableNode): MutableNode[] {
    return [
      root,
      ...Object.values(root.properties ?? {}).flatMap(everyNode),
      ...[root.items, root.additionalProperties].flatMap((child) => (child === undefined ? [] : everyNode(child))),
    ];
  }

  // Each edit of the CRD's schema, with what it exercises in the estimate.
  const VARIANTS: readonly (readonly [string, (root: MutableNode) => void])[] = [
    ['as generated', () => {}],
    [
      'with the required terms to add at five times their bound (one rule over the per-rule budget, one just under)',
      (root) => {
        node(root, TERM_LISTS[2]!).maxItems! *= 5;
      },
    ],
    [
      'with every node affinity list at three times its bound and every rule twice (over the per-CRD budget)',
      (root) => {
        for (const list of TERM_LISTS) node(root, list).maxItems! *= 3;
        for (const each of everyNode(root))
          if (each['x-kubernetes-validations'] !== undefined)
            each['x-kubernetes-validations'].push(...each['x-kubernetes-validations']);
      },
    ],
    [
      'with the nodeSelector keys to remove unbounded (a request full of keys)',
      (root) => {
        delete node(root, 'spec.mutationRemove.nodeSelector.keys').maxItems;
      },
    ],
    [
      'with a per-key regular expression on mutationAdd.nodeSelector (map keys cost as empty strings)',
      (root) => {
        node(root, 'spec.mutationAdd.nodeSelector')['x-kubernetes-validations']!.push(KEY_RULE);
      },
    ],
    [
      'with that regular expression on mutationAdd.nodeSelector unbounded',
      (root) => {
        const map = node(root, 'spec.mutationAdd.nodeSelector');
        delete map.maxProperties;
        map['x-kubernetes-validations']!.push(KEY_RULE);
      },
    ],
  ];

  /** apiextensions validation getCostErrorMessage: how the API server prints the factor over the budget. */
  function factor(cost: number, limit: number): string {
    const over = cost / limit;
    if (over > 100) return 'more than 100x';
    return over < 1.5 ? `${over.toFixed(6)}x` : `${over.toFixed(1)}x`;
  }

  /** The field of a rule of the schema, as the API server names it in a CRD refusal. */
  function ruleField(path: string, index: number): string {
    const segments =
      path === ''
        ? []
        : path
            .split('.')
            .map((name) =>
              name === '*'
                ? 'additionalProperties'
                : name.endsWith('[]')
                  ? `properties[${name.slice(0, -2)}].items`
                  : `properties[${name}]`,
            );
    return [ROOT_FIELD, ...segments, `x-kubernetes-validations[${index}].rule`].join('.');
  }

  /** The cost refusals the port predicts for a schema. */
  function estimatedRefusals(root: SchemaNode): Cause[] {
    const costs = estimateRuleCosts(root);
    const seen = new Map<string, number>();
    const refusals = costs.flatMap(({ path, total }) => {
      const index = seen.get(path) ?? 0;
      seen.set(path, index + 1);
      return total > COST_LIMITS.perRule
        ? [
            {
              field: ruleField(path, index),
              message: `estimated rule cost exceeds budget by factor of ${factor(total, COST_LIMITS.perRule)}`,
            },
          ]
        : [];
    });
    const total = costs.reduce((sum, { total: cost }) => sum + cost, 0);
    if (total > COST_LIMITS.perCrd) {
      refusals.push({
        field: ROOT_FIELD,
        message: `x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of ${factor(total, COST_LIMITS.perCrd)}`,
      });
    }
    return refusals;
  }

  const byField = (left: Cause, right: Cause) =>
    left.field.localeCompare(right.field) || left.message.localeCompare(right.message);

  it.each(VARIANTS.map(([description, edit], index) => [description, edit, index] as const))(
    'the CRD %s gets the cost refusals the port estimates',
    async (_, edit, index) => {
      const variant = structuredClone(crd) as unknown as {
        metadata: { name: string };
        spec: { group: string; versions: { schema: { openAPIV3Schema: MutableNode } }[] };
      };
      variant.spec.group = `variant${index}.example.com`;
      variant.metadata = { name: `podmutations.${variant.spec.group}` };
      edit(variant.spec.versions[0]!.schema.openAPIV3Schema);
      const expected = estimatedRefusals(variant.spec.versions[0]!.schema.openAPIV3Schema);

      const answer = await cluster().admin.request('POST', CRDS, { body: variant, query: { dryRun: 'All' } });

      expect(answer.status, answer.text.slice(0, 2000)).toBe(expected.length === 0 ? 201 : 422);
      const refusals =
        answer.status === 201
          ? []
          : causesOf(answer).filter(({ message }) => message.includes('exceeds budget by factor of'));
      const real = refusals.map(({ field, message }) => ({
        field,
        message: message.replace(/^Forbidden: /, '').replace(/ \(try simplifying.*$/, ''),
      }));
      expect(real.sort(byField)).toEqual(expected.sort(byField));
    },
  );
});

describe('unknown fields, by client setting (docs/api.md "Validation")', () => {
  interface Outcome {
    readonly refused: boolean;
    readonly message: string;
    readonly warnings: string;
  }
  const viaKubectl =
    (...args: string[]) =>
    async (plane: ControlPlane, resource: unknown): Promise<Outcome> => {
      const result = await kubectlApply(plane, args, resource);
      return { refused: result.code !== 0, message: result.stderr, warnings: result.stderr };
    };
  const viaCreate =
    (fieldValidation: string) =>
    async (plane: ControlPlane, resource: unknown): Promise<Outcome> => {
      const answer = await plane.admin.request('POST', PODMUTATIONS, { body: resource, query: { fieldValidation } });
      return {
        refused: answer.status >= 400,
        message: (answer.body as { message?: string }).message ?? '',
        warnings: String(answer.headers.warning ?? ''),
      };
    };
  const CLIENTS: readonly (readonly [string, (plane: ControlPlane, resource: unknown) => Promise<Outcome>])[] = [
    ['kubectl apply --validate=strict', viaKubectl('--validate=strict')],
    ['kubectl apply --validate=warn', viaKubectl('--validate=warn')],
    ['kubectl apply --validate=ignore', viaKubectl('--validate=ignore')],
    ['kubectl apply --server-side', viaKubectl('--server-side')],
    ['a create with fieldValidation=Strict', viaCreate('Strict')],
    ['a create with fieldValidation=Warn', viaCreate('Warn')],
    ['a create with fieldValidation=Ignore', viaCreate('Ignore')],
  ];
  const rule = (name: string, workloadSelector: Json) => ({
    apiVersion: 'agent.cloudpilot.ai/v1alpha1',
    kind: 'PodMutation',
    metadata: { name },
    spec: { workloadSelector, mutationAdd: { annotations: { 'example.com/a': 'b' } } },
  });
  const cases = CLIENTS.map(([client, apply], index) => [client, apply, `typo-${index}`] as const);

  it.each(cases)(
    '%s stores a misspelt field beside a valid dimension as written, without a warning',
    async (_, apply, name) => {
      const plane = cluster();
      const selector = { namespaces: ['production'], kind: ['Deployment'] };

      const outcome = await apply(plane, rule(name, selector));

      expect(outcome.refused, outcome.message).toBe(false);
      expect(outcome.warnings).not.toMatch(/unknown field/i);
      const stored = await plane.admin.json<{ spec: { workloadSelector: Json } }>('GET', `${PODMUTATIONS}/${name}`);
      expect(stored.spec.workloadSelector).toEqual(selector);
    },
  );

  it.each(cases)(
    '%s refuses a misspelt field that was the selector\'s only content: "sets no dimension"',
    async (_, apply, name) => {
      const plane = cluster();

      const outcome = await apply(plane, rule(`${name}-alone`, { namespace: ['production'] }));

      expect(outcome.refused).toBe(true);
      expect(outcome.message).toContain('spec.workloadSelector: Invalid value: sets no dimension');
      expect((await plane.admin.request('GET', `${PODMUTATIONS}/${name}-alone`)).status).toBe(404);
    },
  );
});

describe('kubectl on PodMutations', () => {
  /** A printer column's value, as kubectl prints it, for the simple JSONPath forms the CRD uses. */
  function columnValue(object: Json, jsonPath: string): string {
    let value: unknown = object;
    for (const [, name, filterKey, filterValue] of jsonPath.matchAll(
      /\.([A-Za-z]+)|\[\?\(@\.([A-Za-z]+)=="([^"]*)"\)\]/g,
    )) {
      if (name !== undefined) value = (value as Json | undefined)?.[name];
      else value = (value as Json[] | undefined)?.find((item) => item[filterKey!] === filterValue);
    }
    if (value === undefined) return '';
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw new Error(`${jsonPath} selects no printable value`);
    return String(value);
  }

  /** The cells of a kubectl table, cut at the columns where the header's names start. */
  function table(stdout: string): { header: string[]; rows: string[][] } {
    const [headerLine, ...rowLines] = stdout.trimEnd().split('\n');
    const starts = [...headerLine!.matchAll(/\S+/g)].map((match) => match.index);
    const cut = (line: string) => starts.map((start, index) => line.slice(start, starts[index + 1]).trim());
    return { header: cut(headerLine!), rows: rowLines.map(cut) };
  }

  const columns = version.additionalPrinterColumns;
  const headerOf = (shown: readonly PrinterColumn[]) => ['NAME', ...shown.map(({ name }) => name.toUpperCase())];

  // A rule with every printed field set: priority, and the status the sync writes.
  let stored: Json;
  beforeAll(async () => {
    const plane = cluster();
    await plane.admin.json('POST', PODMUTATIONS, {
      body: podMutation('printed', { priority: 7, mutationAdd: { annotations: { 'example.com/a': 'b' } } }),
    });
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await plane.admin.json('PATCH', `${PODMUTATIONS}/printed/status`, {
      contentType: 'application/merge-patch+json',
      body: {
        status: {
          conditions: [
            { type: 'Accepted', status: 'True', reason: 'Valid', message: '', lastTransitionTime: now },
            { type: 'Schedulable', status: 'Unknown', reason: 'PodsNotJudged', message: '', lastTransitionTime: now },
          ],
          enforcement: 'audit',
          matchedPods: 3,
          pendingPods: 1,
        },
      },
    });
    stored = await plane.admin.json<Json>('GET', `${PODMUTATIONS}/printed`);
  });

  it.each([
    ['kubectl get pm', [], columns.filter(({ priority }) => (priority ?? 0) === 0)],
    ['kubectl get pm -o wide', ['-o', 'wide'], columns],
  ])(
    '%s prints the columns the CRD declares for it, in order, with the values of their JSONPaths',
    async (_, args, shown) => {
      const printed = await cluster().kubectl(['get', 'pm', 'printed', ...args]);

      expect(printed.code, printed.stderr).toBe(0);
      const { header, rows } = table(printed.stdout);
      expect(header).toEqual(headerOf(shown));
      expect(rows).toHaveLength(1);
      shown.forEach((column, index) => {
        const cell = rows[0]![index + 1];
        if (column.type === 'date') expect(cell, column.name).toMatch(/^\d+[smhd]/);
        else expect(cell, column.name).toBe(columnValue(stored, column.jsonPath));
      });
      // Every column has a value here, so none of the checks above compared two empty strings.
      expect(rows[0]!.filter((cell) => cell === '')).toEqual([]);
    },
  );

  const explainType = (field: SchemaNode): string => {
    if (field.type === 'array') return `[]${explainType(field.items!)}`;
    if (field.type === 'object')
      return field.additionalProperties === undefined
        ? 'Object'
        : `map[string]${explainType(field.additionalProperties)}`;
    return field.type!;
  };
  const flat = (text: string) => text.replace(/\s+/g, ' ').trim();

  it.each([
    ['pm.spec', schema.properties!.spec!],
    ['pm.spec.workloadSelector', schema.properties!.spec!.properties!.workloadSelector!],
    [
      'pm.spec.mutationRemove.nodeAffinity',
      schema.properties!.spec!.properties!.mutationRemove!.properties!.nodeAffinity!,
    ],
  ])(
    'kubectl explain %s prints the description, type and requirement of the field and each of its fields',
    async (path, field) => {
      const explained = await cluster().kubectl(['explain', path]);

      expect(explained.code, explained.stderr).toBe(0);
      const text = flat(explained.stdout);
      expect(text).toContain(flat(field.description!));
      for (const [name, child] of Object.entries(field.properties!)) {
        const required = field.required?.includes(name) === true ? ' -required-' : '';
        expect(text, name).toContain(flat(`${name} <${explainType(child)}>${required} ${child.description!}`));
      }
    },
  );
});
