/**
 * examples/rules/migrate-legacy-pool.yaml as a MutatingAdmissionPolicy (admissionregistration.k8s.io/v1) and its
 * binding: the same change to the same Pods, made by the API server's own CEL instead of by the webhook, applied with
 * kubectl and waited for as the webhook's registration is (webhook.ts). The builders of the pair are shared with the
 * other example rules' policies of mutating-policy.test.ts.
 */
import type { Json } from './api.ts';
import type { ControlPlane } from './control-plane.ts';
import { waitFor } from './processes.ts';
import { metricSum } from './webhook.ts';

/** A policy and its binding, and a Pod that tells whether the API server enforces the policy. */
interface MutatingPolicy {
  /** The name of the policy and of its binding. */
  readonly name: string;
  readonly policy: Json;
  readonly binding: Json;
  /** A Pod the policy changes, sent with a dry run to its namespace. */
  readonly probe: { readonly namespace: string; readonly pod: Json };
  /** True for the probe as the policy leaves it. */
  readonly mutated: (pod: Json) => boolean;
}

/** What a Pod policy selects and changes. */
interface PodPolicyOptions {
  readonly name: string;
  /** The namespaces selected (the rule's `namespaces`); when absent, every one the webhook's configuration sends. */
  readonly namespaces?: readonly string[];
  /** Named CEL expressions, all of which must hold for the Pod (matchConditions). */
  readonly conditions: Readonly<Record<string, string>>;
  /** Named CEL expressions the mutation reads as `variables.NAME`. */
  readonly variables?: Readonly<Record<string, string>>;
  /**
   * The JSONPatch expression: a list of `JSONPatch{…}`. Not an ApplyConfiguration: the API server refuses one that
   * sets an atomic field ("may not mutate atomic arrays, maps or structs"), and every scheduling field of a Pod is atomic
   * (nodeSelector, tolerations, each node selector term and preference list).
   */
  readonly jsonPatch: string;
  readonly reinvocationPolicy?: 'Never' | 'IfNeeded';
}

const NAME_LABEL = 'kubernetes.io/metadata.name';

/** The MutatingAdmissionPolicy of Pod CREATEs and its binding (without parameters), as kubectl applies them. */
function podPolicy(options: PodPolicyOptions): Pick<MutatingPolicy, 'name' | 'policy' | 'binding'> {
  const { name } = options;
  const named = (entries: Readonly<Record<string, string>>) =>
    Object.entries(entries).map(([key, expression]) => ({ name: key, expression }));
  return {
    name,
    policy: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name },
      spec: {
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
          namespaceSelector: {
            matchExpressions:
              options.namespaces === undefined
                ? [{ key: NAME_LABEL, operator: 'NotIn', values: ['kube-system'] }]
                : [{ key: NAME_LABEL, operator: 'In', values: [...options.namespaces] }],
          },
        },
        matchConditions: named(options.conditions),
        ...(options.variables === undefined ? {} : { variables: named(options.variables) }),
        failurePolicy: 'Fail',
        reinvocationPolicy: options.reinvocationPolicy ?? 'Never',
        mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: options.jsonPatch } }],
      },
    },
    binding: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: name },
    },
  };
}

/**
 * The workload kinds as the engine resolves them from the controller ownerReference (lib/engine/workload.ts): CEL
 * reads the same evidence, a ReplicaSet named `<deployment>-<pod-template-hash>`, never the workload itself.
 */
const OWNED_BY = {
  Deployment:
    "has(object.metadata.ownerReferences) && has(object.metadata.labels) && object.metadata.labels[?'pod-template-hash'].orValue('') != '' && " +
    "object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && r.kind == 'ReplicaSet' && " +
    "r.name.size() > object.metadata.labels['pod-template-hash'].size() + 1 && r.name.endsWith('-' + object.metadata.labels['pod-template-hash']))",
  StatefulSet:
    "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && r.kind == 'StatefulSet')",
  Job: "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && r.kind == 'Job')",
} as const;

/** The webhook's configuration skips Pods created bound (lib/webhook/configuration.ts); so does each policy. */
const NOT_BOUND = "!has(object.spec.nodeName) || object.spec.nodeName == ''";
/** And the Pods of DaemonSets, which the engine never mutates (a policy selecting no kind needs it). */
const NOT_DAEMONSET =
  "!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && r.kind == 'DaemonSet')";

/** The controller ownerReference of a probe Pod; never stored (a dry run), so its owner need not exist. */
function probeOwner(kind: 'ReplicaSet' | 'Job', name: string): Json {
  return {
    apiVersion: kind === 'Job' ? 'batch/v1' : 'apps/v1',
    kind,
    name,
    uid: '00000000-0000-4000-8000-000000000001',
    controller: true,
  };
}

const POOL = 'example.com/node-pool';
const MIGRATION_ANNOTATION = 'example.com/migration';
const TERMS_TYPE = 'Object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution';

/**
 * A copy of the requirement `e` of the object as the typed `type`: a JSONPatch value can hold the object's own fields
 * only through such a constructor (the API server cannot marshal them to JSON as they are).
 */
function requirement(type: string): string {
  return `${type}{key: e.key, operator: e.operator, ?values: e.?values}`;
}

/** A JSONPatch expression setting one annotation, whether or not the Pod has annotations yet. */
function setAnnotation(key: string, value: string): string {
  return (
    `has(object.metadata.annotations) ? JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('${key}'), value: '${value}'}` +
    ` : JSONPatch{op: 'add', path: '/metadata/annotations', value: {'${key}': '${value}'}}`
  );
}

// The Pod's required node selector terms, or none; matchConditions are evaluated before variables, so they repeat it.
const REQUIRED_TERMS =
  'object.spec.?affinity.?nodeAffinity.?requiredDuringSchedulingIgnoredDuringExecution.?nodeSelectorTerms.orValue([])';

/** The policy's name, which is the rule's. */
const MIGRATION_POLICY_NAME = 'migrate-legacy-pool';

/**
 * migrate-legacy-pool: in production, the Pods of Deployments and StatefulSets whose required node affinity has a term
 * with `example.com/node-pool In [legacy]` (the same set of values, as the rule's nodeAffinityMatch compares) lose
 * every node-pool requirement from every required term, keep the rest of each term, and gain `node-pool In [merged]`
 * in each, after what is left (the order the engine's combination gives); the migration annotation is set.
 */
function migrationPolicy(reinvocationPolicy: 'Never' | 'IfNeeded' = 'Never'): MutatingPolicy {
  const pair = podPolicy({
    name: MIGRATION_POLICY_NAME,
    namespaces: ['production'],
    variables: { terms: REQUIRED_TERMS },
    conditions: {
      'deployment-or-statefulset': `(${OWNED_BY.Deployment}) || (${OWNED_BY.StatefulSet})`,
      'not-bound': NOT_BOUND,
      'pinned-to-legacy':
        `(${REQUIRED_TERMS}).exists(t, has(t.matchExpressions) && t.matchExpressions.exists(e, e.key == '${POOL}' && ` +
        "e.operator == 'In' && has(e.values) && e.values.size() > 0 && e.values.all(v, v == 'legacy')))",
    },
    jsonPatch: `[
  JSONPatch{op: 'replace', path: '/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms',
    value: variables.terms.map(t, ${TERMS_TYPE}.nodeSelectorTerms{
      ?matchFields: t.?matchFields.optMap(l, l.map(e, ${requirement(`${TERMS_TYPE}.nodeSelectorTerms.matchFields`)})),
      matchExpressions: t.?matchExpressions.orValue([]).filter(e, e.key != '${POOL}').map(e, ${requirement(`${TERMS_TYPE}.nodeSelectorTerms.matchExpressions`)}) +
        [${TERMS_TYPE}.nodeSelectorTerms.matchExpressions{key: '${POOL}', operator: 'In', values: ['merged']}]
    })},
  ${setAnnotation(MIGRATION_ANNOTATION, 'merged-pool')}
]`,
    reinvocationPolicy,
  });
  return {
    ...pair,
    probe: {
      namespace: 'production',
      pod: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'migration-probe',
          labels: { 'pod-template-hash': '5d7f9c8b6' },
          ownerReferences: [probeOwner('ReplicaSet', 'migration-probe-5d7f9c8b6')],
        },
        spec: {
          containers: [{ name: 'c', image: 'probe' }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: POOL, operator: 'In', values: ['legacy'] }] }],
              },
            },
          },
        },
      },
    },
    mutated: (pod) =>
      (pod as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.[MIGRATION_ANNOTATION] ===
      'merged-pool',
  };
}

/** How many mutations of the policy the API server has run (its check counter, errors included). */
async function policyChecks(plane: ControlPlane, name: string): Promise<number> {
  return metricSum(await plane.metrics(), 'apiserver_mutating_admission_policy_check_total', { policy: name });
}

/**
 * Sends the probe with a dry run and says whether the policy ran on it (its check counter moved) and whether the
 * probe came back as the policy leaves it. The counter tells this policy from a webhook making the same change.
 */
async function probeOnce(plane: ControlPlane, policy: MutatingPolicy): Promise<{ ran: boolean; mutated: boolean }> {
  const before = await policyChecks(plane, policy.name);
  const pod = await plane.admin.json<Json>('POST', `/api/v1/namespaces/${policy.probe.namespace}/pods`, {
    body: policy.probe.pod,
    query: { dryRun: 'All' },
  });
  return { ran: (await policyChecks(plane, policy.name)) > before, mutated: policy.mutated(pod) };
}

async function kubectlOrThrow(plane: ControlPlane, args: readonly string[], input?: string): Promise<void> {
  const run = await plane.kubectl(args, input === undefined ? {} : { input });
  if (run.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${run.stderr}`);
}

/**
 * `kubectl apply` of the policy and its binding, then waits until the API server enforces them: policies reach it
 * through an informer, so a Pod created right after the apply may still miss it. The probe's namespace must exist
 * (production, for migrate-legacy-pool).
 */
async function applyMutatingPolicy(plane: ControlPlane, policy: MutatingPolicy): Promise<void> {
  await kubectlOrThrow(
    plane,
    ['apply', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [policy.policy, policy.binding] }),
  );
  await waitFor(`the API server to enforce MutatingAdmissionPolicy ${policy.name}`, async () => {
    const { ran, mutated } = await probeOnce(plane, policy);
    return ran && mutated ? true : undefined;
  });
}

/**
 * `kubectl delete` of the binding and the policy, then waits until the probe is admitted without the policy (its
 * counter stands still; a webhook registered beside it may still make the same change).
 */
async function deleteMutatingPolicy(plane: ControlPlane, policy: MutatingPolicy): Promise<void> {
  await kubectlOrThrow(plane, [
    'delete',
    '--ignore-not-found',
    `mutatingadmissionpolicybinding/${policy.name}`,
    `mutatingadmissionpolicy/${policy.name}`,
  ]);
  await waitFor(`the API server to drop MutatingAdmissionPolicy ${policy.name}`, async () =>
    (await probeOnce(plane, policy)).ran ? undefined : true,
  );
}

/** applyMutatingPolicy of migrate-legacy-pool's policy (reinvocationPolicy Never unless given). */
function applyMigrationPolicy(plane: ControlPlane, reinvocationPolicy?: 'Never' | 'IfNeeded'): Promise<void> {
  return applyMutatingPolicy(plane, migrationPolicy(reinvocationPolicy));
}

/** deleteMutatingPolicy of migrate-legacy-pool's policy. */
function deleteMigrationPolicy(plane: ControlPlane): Promise<void> {
  return deleteMutatingPolicy(plane, migrationPolicy());
}

export {
  MIGRATION_POLICY_NAME,
  NOT_BOUND,
  NOT_DAEMONSET,
  OWNED_BY,
  applyMigrationPolicy,
  applyMutatingPolicy,
  deleteMigrationPolicy,
  deleteMutatingPolicy,
  migrationPolicy,
  podPolicy,
  policyChecks,
  probeOwner,
  requirement,
};
export type { MutatingPolicy, PodPolicyOptions };
