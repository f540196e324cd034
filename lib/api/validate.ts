/**
 * The validator of the PodMutation contract: the resource envelope, then the structure the declaration gives
 * (lib/api/schema.ts, run by lib/api/structure.ts with the named checks of lib/api/checks.ts), then what only the
 * normalized rule shows: that it removes or adds something, and the per-rule budget.
 */
import { DEFAULT_TOLERATION_KEYS, DEFAULT_TOLERATION_SECONDS, type Toleration } from '../scheduling/index.ts';
import {
  previewInput,
  isDns1123Subdomain,
  isJsonObject,
  IssueList,
  type Issue,
  type IssueSink,
} from '../values/index.ts';
import { checkRemovesOrAdds, checkRuleBudget } from './checks.ts';
import { PodMutationSpecSchema, type PodMutationSpec } from './schema.ts';
import { validateStructure } from './structure.ts';
import {
  ENFORCEMENT_ANNOTATION,
  DEFAULT_ENFORCEMENT,
  ENFORCEMENTS,
  isEnforcement,
  POD_MUTATION_ANNOTATIONS,
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  PRODUCT_ANNOTATION_PREFIX,
  type Enforcement,
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

/**
 * The rule's enforcement from its annotation. A value other than enforce or audit is an issue, never a default:
 * a typo such as "Audit" must not turn a rule meant to be audited into one that changes Pods. A key under the
 * product's prefix that the product does not define is an issue too, for the same reason: a misspelt key
 * ("…/enforcment: audit") would otherwise leave the rule enforced. The CRD cannot say either, because CEL on a custom
 * resource does not see metadata.annotations.
 */
function readEnforcement(metadata: Record<string, unknown>, issues: IssueSink): Enforcement {
  const { annotations } = metadata;
  if (annotations === undefined || annotations === null) return DEFAULT_ENFORCEMENT;
  if (!isJsonObject(annotations)) {
    issues.add('metadata.annotations', 'must be a map of strings');
    return DEFAULT_ENFORCEMENT;
  }
  for (const key of Object.keys(annotations)) {
    if (!key.startsWith(PRODUCT_ANNOTATION_PREFIX) || POD_MUTATION_ANNOTATIONS.includes(key)) continue;
    issues.add(
      `metadata.annotations[${previewInput(key)}]`,
      `unknown annotation under ${PRODUCT_ANNOTATION_PREFIX}; expected one of ${POD_MUTATION_ANNOTATIONS.join(', ')}`,
    );
  }
  const value = annotations[ENFORCEMENT_ANNOTATION];
  if (value === undefined) return DEFAULT_ENFORCEMENT;
  if (isEnforcement(value)) return value;
  issues.add(
    `metadata.annotations["${ENFORCEMENT_ANNOTATION}"]`,
    `must be ${ENFORCEMENTS.join(' or ')} (got ${previewInput(value)})`,
  );
  return DEFAULT_ENFORCEMENT;
}

/** The verdict on an invalid resource: its name, its generation when it has one, and the issues. */
function invalidVerdict(name: string, generation: number | undefined, issues: IssueList): RuleVerdict {
  return {
    valid: false,
    invalid:
      generation === undefined ? { name, issues: issues.reported() } : { name, generation, issues: issues.reported() },
  };
}

/**
 * Validates one PodMutation resource against the API contract and normalizes it
 * (defaults applied, unknown fields rejected). Pure; every issue names its field path.
 */
export function validatePodMutation(resource: unknown): RuleVerdict {
  const issues = new IssueList(MAX_ISSUES);
  const name = reportedName(resource);
  const generation =
    isJsonObject(resource) && isJsonObject(resource.metadata) && typeof resource.metadata.generation === 'number'
      ? resource.metadata.generation
      : undefined;

  if (!isJsonObject(resource)) {
    issues.add('', 'must be an object');
    return invalidVerdict(name, generation, issues);
  }
  if (resource.apiVersion !== POD_MUTATION_API_VERSION) {
    issues.add('apiVersion', `must be ${POD_MUTATION_API_VERSION} (got ${previewInput(resource.apiVersion)})`);
  }
  if (resource.kind !== POD_MUTATION_KIND)
    issues.add('kind', `must be ${POD_MUTATION_KIND} (got ${previewInput(resource.kind)})`);
  if (!isJsonObject(resource.metadata) || typeof resource.metadata.name !== 'string' || resource.metadata.name === '') {
    issues.add('metadata.name', 'is required');
  } else if (!isDns1123Subdomain(resource.metadata.name)) {
    issues.add('metadata.name', 'must be a lowercase DNS-1123 subdomain of at most 253 characters');
  }
  const enforcement = isJsonObject(resource.metadata)
    ? readEnforcement(resource.metadata, issues)
    : DEFAULT_ENFORCEMENT;
  const { spec } = resource;
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
    priority: normalized.priority ?? 0,
    workloadSelector: normalized.workloadSelector,
    mutationRemove: remove,
    mutationAdd: add,
  };
  checkRuleBudget(rule, issues);
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
 * What a valid rule says that it likely does not mean, for `validate` to warn about (never an invalid rule): a
 * tolerationsMatch entry that every Pod meets, because the API server's DefaultTolerationSeconds admission plugin
 * gives every Pod its not-ready and unreachable tolerations before any webhook runs, so that the entry restricts nothing.
 */
export function ruleWarnings(rule: NormalizedRule, resource?: unknown): Issue[] {
  const entries: readonly Toleration[] = rule.workloadSelector.tolerationsMatch ?? [];
  const spec = isJsonObject(resource) && isJsonObject(resource.spec) ? resource.spec : undefined;
  // The schema defaults enable to false, so a rule that leaves it out is stored disabled: the likeliest first mistake.
  const disabled: Issue[] =
    spec !== undefined && !Object.hasOwn(spec, 'enable')
      ? [
          {
            field: 'spec.enable',
            reason:
              'is not set, so the rule is disabled and applied to no Pod (enable defaults to false); set enable: true to apply it, or enable: false to say it is meant',
          },
        ]
      : [];
  return [
    ...disabled,
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
  ];
}

/** One line per issue, each naming the rule and the field path. */
export function describeIssues(invalid: {
  readonly name: string;
  readonly issues: readonly { field: string; reason: string }[];
}): string[] {
  return invalid.issues.map(
    (issue) => `PodMutation "${invalid.name}": ${issue.field === '' ? '(resource)' : issue.field}: ${issue.reason}`,
  );
}

/** The PodMutation resource a normalized rule stands for (the inverse of normalization). Pure. */
export function ruleToResource(rule: NormalizedRule): Record<string, unknown> {
  return {
    apiVersion: POD_MUTATION_API_VERSION,
    kind: POD_MUTATION_KIND,
    metadata: {
      name: rule.name,
      ...(rule.generation === undefined ? {} : { generation: rule.generation }),
      // A snapshot published before rules carried an enforcement holds none; its rules were all enforced.
      ...(rule.enforcement === 'audit' ? { annotations: { [ENFORCEMENT_ANNOTATION]: rule.enforcement } } : {}),
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
