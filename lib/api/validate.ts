/**
 * The validator of the PodMutation contract: the resource envelope, then the structure the declaration gives
 * (lib/api/schema.ts, run by lib/api/structure.ts with the named checks of lib/api/checks.ts), then what only the
 * normalized rule shows: that it removes or adds something, and the per-rule budget.
 */
import { DEFAULT_TOLERATION_KEYS, DEFAULT_TOLERATION_SECONDS, type Toleration } from '../scheduling/index.ts';
import { previewInput, isJsonObject, IssueList, type Issue, type IssueSink } from '../json/index.ts';
import { isDns1123Subdomain } from '../syntax/index.ts';
import { checkRemovesOrAdds, checkRuleBudget } from './checks.ts';
import { checkAddedTerms, matchConflictWarnings } from './contradictions.ts';
import { kindWarnings } from './kinds.ts';
import { PodMutationSpecSchema, type PodMutationSpec } from './schema.ts';
import { validateStructure } from './structure.ts';
import {
  ENFORCEMENT_ANNOTATION,
  DEFAULT_ENFORCEMENT,
  ENFORCEMENTS,
  POD_MUTATION_ANNOTATIONS,
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  IF_UNSCHEDULABLE,
  IF_UNSCHEDULABLE_ANNOTATION,
  type Enforcement,
  type IfUnschedulable,
} from './constants.ts';
import type { NormalizedRule, RuleVerdict } from './types.ts';

/** Issues kept per rule: enough to fix a rule, few enough to bound a status and a snapshot entry. */
const MAX_ISSUES = 32;

/** Name used to report a resource, even an invalid one. */
function reportedName(resource: unknown): string {
  if (
    isJsonObject(resource) &&
    isJsonObject(resource.metadata) &&
    typeof resource.metadata.name === 'string' &&
    resource.metadata.name !== ''
  ) {
    return resource.metadata.name;
  }
  return '<unnamed>';
}

/** What the product reads from a PodMutation's annotations. */
interface RuleAnnotations {
  readonly enforcement: Enforcement;
  readonly ifUnschedulable: IfUnschedulable | undefined;
}

/** One product annotation's value: one of `allowed`, else an issue naming the annotation and the values it takes. */
function annotationValue<T extends string>(
  annotations: Record<string, unknown>,
  key: string,
  allowed: readonly T[],
  issues: IssueSink,
): T | undefined {
  const value = annotations[key];
  if (value === undefined) return undefined;
  if ((allowed as readonly unknown[]).includes(value)) return value as T;
  issues.add(`metadata.annotations["${key}"]`, `must be ${allowed.join(' or ')} (got ${previewInput(value)})`);
  return undefined;
}

/**
 * The rule's enforcement and if-unschedulable from its annotations. A value outside the ones defined is an issue,
 * never a default: a typo such as "Audit" must not turn a rule meant to be audited into one that changes Pods, nor
 * "Skip" a rule meant to hold back into one that strands Pods. A key under the product's prefix that the product does
 * not define is an issue too, for the same reason: a misspelt key ("…/enforcment: audit") would otherwise leave the
 * rule enforced. The CRD cannot say either, because CEL on a custom resource does not see metadata.annotations.
 */
export function readAnnotations(
  metadata: Record<string, unknown>,
  issues: IssueSink,
  known: readonly string[],
): RuleAnnotations {
  const { annotations } = metadata;
  const defaults = { enforcement: DEFAULT_ENFORCEMENT, ifUnschedulable: undefined };
  if (annotations === undefined || annotations === null) return defaults;
  if (!isJsonObject(annotations)) {
    issues.add('metadata.annotations', 'must be a map of strings');
    return defaults;
  }
  for (const key of Object.keys(annotations)) {
    if (!key.startsWith(PRODUCT_ANNOTATION_PREFIX) || known.includes(key)) continue;
    const expected = known.length === 0 ? 'this kind takes none' : `expected one of ${known.join(', ')}`;
    issues.add(
      `metadata.annotations[${previewInput(key)}]`,
      `unknown annotation under ${PRODUCT_ANNOTATION_PREFIX}; ${expected}`,
    );
  }
  const enforcement = annotationValue(annotations, ENFORCEMENT_ANNOTATION, ENFORCEMENTS, issues);
  const ifUnschedulable = annotationValue(annotations, IF_UNSCHEDULABLE_ANNOTATION, IF_UNSCHEDULABLE, issues);
  // warn is the default, so the normalized rule carries only skip: one form per meaning, and older snapshots stay equal.
  return {
    enforcement: enforcement ?? DEFAULT_ENFORCEMENT,
    ifUnschedulable: ifUnschedulable === 'skip' ? 'skip' : undefined,
  };
}

/** The verdict on an invalid resource: its name, its generation when it has one, and the issues. */
function invalidVerdict(name: string, generation: number | undefined, issues: IssueList): RuleVerdict {
  return {
    valid: false,
    invalid:
      generation === undefined ? { name, issues: issues.reported() } : { name, generation, issues: issues.reported() },
  };
}

/** What every resource of the contract carries around its spec: the checked envelope, read before the spec. */
interface Envelope {
  readonly name: string;
  readonly generation: number | undefined;
  readonly metadata: Record<string, unknown> | undefined;
  readonly resource: Record<string, unknown> | undefined;
}

/** Checks that the resource is an object, its apiVersion, kind and metadata.name, adding an issue for each that is wrong. Pure. */
export function readEnvelope(resource: unknown, kind: string, issues: IssueSink): Envelope {
  const name = reportedName(resource);
  if (!isJsonObject(resource)) {
    issues.add('', 'must be an object');
    return { name, generation: undefined, metadata: undefined, resource: undefined };
  }
  const metadata = isJsonObject(resource.metadata) ? resource.metadata : undefined;
  const generation = typeof metadata?.generation === 'number' ? metadata.generation : undefined;
  if (resource.apiVersion !== POD_MUTATION_API_VERSION) {
    issues.add('apiVersion', `must be ${POD_MUTATION_API_VERSION} (got ${previewInput(resource.apiVersion)})`);
  }
  if (resource.kind !== kind) issues.add('kind', `must be ${kind} (got ${previewInput(resource.kind)})`);
  if (metadata === undefined || typeof metadata.name !== 'string' || metadata.name === '') {
    issues.add('metadata.name', 'is required');
  } else if (!isDns1123Subdomain(metadata.name)) {
    issues.add('metadata.name', 'must be a lowercase DNS-1123 subdomain of at most 253 characters');
  }
  return { name, generation, metadata, resource };
}

/**
 * Validates one PodMutation resource against the API contract and normalizes it
 * (defaults applied, unknown fields rejected). Pure; every issue names its field path.
 */
export function validatePodMutation(resource: unknown): RuleVerdict {
  const issues = new IssueList(MAX_ISSUES);
  const envelope = readEnvelope(resource, POD_MUTATION_KIND, issues);
  const { name, generation, metadata } = envelope;
  if (envelope.resource === undefined) return invalidVerdict(name, generation, issues);
  const { enforcement, ifUnschedulable } =
    metadata === undefined
      ? { enforcement: DEFAULT_ENFORCEMENT, ifUnschedulable: undefined }
      : readAnnotations(metadata, issues, POD_MUTATION_ANNOTATIONS);
  const { spec } = envelope.resource;
  if (!isJsonObject(spec)) {
    issues.add('spec', 'must be an object');
    return invalidVerdict(name, generation, issues);
  }
  const normalized = validateStructure(PodMutationSpecSchema, spec, 'spec', issues) as PodMutationSpec;
  if (issues.count > 0) return invalidVerdict(name, generation, issues);

  const remove = normalized.mutationRemove ?? {};
  const add = normalized.mutationAdd ?? {};
  if (!checkRemovesOrAdds(remove, add, issues)) return invalidVerdict(name, generation, issues);
  const rule: NormalizedRule = {
    name,
    ...(generation === undefined ? {} : { generation }),
    enable: normalized.enable === true,
    enforcement,
    ...(ifUnschedulable === undefined ? {} : { ifUnschedulable }),
    priority: normalized.priority ?? 0,
    workloadSelector: normalized.workloadSelector,
    mutationRemove: remove,
    mutationAdd: add,
  };
  checkRuleBudget(rule, issues);
  checkAddedTerms(rule, issues);
  if (issues.count > 0) return invalidVerdict(name, generation, issues);
  return { valid: true, rule };
}

/**
 * True when a tolerationsMatch entry is met by a toleration the API server gives every Pod (DEFAULT_TOLERATION_KEYS):
 * as the engine matches, every field the entry sets equals that toleration's (an absent operator compared as Equal, an
 * absent value as "").
 */
function matchesDefaultToleration(entry: Toleration): boolean {
  return DEFAULT_TOLERATION_KEYS.some(
    (key) =>
      (entry.key === undefined || entry.key === key) &&
      (entry.operator === undefined || entry.operator === 'Exists') &&
      (entry.value === undefined || entry.value === '') &&
      (entry.effect === undefined || entry.effect === 'NoExecute') &&
      (entry.tolerationSeconds === undefined || entry.tolerationSeconds === DEFAULT_TOLERATION_SECONDS),
  );
}

/**
 * What a valid rule says that it likely does not mean, for `validate` and the sync's status to warn about (never an
 * invalid rule): enable left out; a kind that is a near miss of a workload kind (lib/api/kinds.ts); a tolerationsMatch
 * entry that every Pod meets, because the API server's DefaultTolerationSeconds admission plugin gives every Pod its
 * not-ready and unreachable tolerations before any webhook runs, so that the entry restricts nothing; and an added term
 * that excludes what the rule's own match keeps (matchConflictWarnings).
 */
export function ruleWarnings(rule: NormalizedRule, resource?: unknown): Issue[] {
  const entries: readonly Toleration[] = rule.workloadSelector.tolerationsMatch ?? [];
  const disabled = enableWarning(resource, 'rule', 'applied to no Pod');
  return [
    ...disabled,
    ...kindWarnings(rule.workloadSelector.kinds),
    ...entries.flatMap((entry, index) =>
      matchesDefaultToleration(entry)
        ? [
            {
              field: `spec.workloadSelector.tolerationsMatch[${index}]`,
              reason: `matches every Pod, so it restricts nothing: the API server's DefaultTolerationSeconds admission plugin gives each Pod the tolerations ${DEFAULT_TOLERATION_KEYS.join(' and ')} (operator Exists, effect NoExecute, ${DEFAULT_TOLERATION_SECONDS} s) before webhooks run, unless it tolerates those taints itself; to select every Pod say all: true`,
            },
          ]
        : [],
    ),
    ...matchConflictWarnings(rule),
  ];
}

/**
 * The warning for a resource that leaves spec.enable out: the schema defaults it to false, so the resource is stored
 * disabled, the likeliest first mistake. None when it sets enable either way.
 */
export function enableWarning(resource: unknown, noun: string, effect: string): Issue[] {
  const spec = isJsonObject(resource) && isJsonObject(resource.spec) ? resource.spec : undefined;
  if (spec === undefined || Object.hasOwn(spec, 'enable')) return [];
  return [
    {
      field: 'spec.enable',
      reason: `is not set, so the ${noun} is disabled and ${effect} (enable defaults to false); set enable: true to apply it, or enable: false to say it is meant`,
    },
  ];
}

/** One line per issue, each naming the resource (a PodMutation unless `kind` says otherwise) and the field path. */
export function describeIssues(
  invalid: { readonly name: string; readonly issues: readonly { field: string; reason: string }[] },
  kind: string = POD_MUTATION_KIND,
): string[] {
  return invalid.issues.map(
    (issue) => `${kind} "${invalid.name}": ${issue.field === '' ? '(resource)' : issue.field}: ${issue.reason}`,
  );
}

/** The product annotations a normalized rule stands for, or undefined when it has none. */
function annotationsOf(rule: NormalizedRule): { annotations: Record<string, string> } | undefined {
  const annotations: Record<string, string> = {};
  // A snapshot published before rules carried an enforcement holds none; its rules were all enforced.
  if (rule.enforcement === 'audit') annotations[ENFORCEMENT_ANNOTATION] = rule.enforcement;
  if (rule.ifUnschedulable === 'skip') annotations[IF_UNSCHEDULABLE_ANNOTATION] = rule.ifUnschedulable;
  return Object.keys(annotations).length === 0 ? undefined : { annotations };
}

/** The PodMutation resource a normalized rule stands for (the inverse of normalization). Pure. */
export function ruleToResource(rule: NormalizedRule): Record<string, unknown> {
  return {
    apiVersion: POD_MUTATION_API_VERSION,
    kind: POD_MUTATION_KIND,
    metadata: {
      name: rule.name,
      ...(rule.generation === undefined ? {} : { generation: rule.generation }),
      ...(annotationsOf(rule) ?? {}),
    },
    spec: {
      enable: rule.enable,
      priority: rule.priority,
      workloadSelector: rule.workloadSelector,
      mutationRemove: rule.mutationRemove,
      mutationAdd: rule.mutationAdd,
    },
  };
}
