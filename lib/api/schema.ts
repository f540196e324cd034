/**
 * The one declaration of the PodMutation contract, in TypeBox: its TypeScript types are inferred from it,
 * the validator runs its structural part (lib/api/structure.ts), and `npm run crd` generates the CRD's
 * openAPIV3Schema from it. Each CEL rule is declared beside the named check that enforces the same in the validator
 * (lib/api/checks.ts); shared fragments (a node selector requirement, a term, a node affinity, a toleration) are
 * declared once.
 *
 * Why TypeBox rather than zod 4: a TypeBox schema is a JSON Schema object at run time, so the CRD is the declaration
 * itself with `x-kubernetes-*` keys passing through untouched, where zod needs a conversion (toJSONSchema) and
 * metadata threaded through it; and its named builders tree-shake out of the admission bundle.
 *
 * Extensions read by the validator and dropped from the CRD: `x-check` (a named check of lib/api/checks.ts),
 * `x-key-check` (the same, run on each key of a map), `x-checked-by-parent` (a value its parent's check validates,
 * so its pattern is the CRD's only), `x-noun` (what a list or map holds, for limit messages), `x-message` (the reason
 * for a value of the wrong type or out of range), `x-required` and `x-min` (the reasons when a required field is
 * absent, or a list or map holds too few), `x-forbidden` (the reason for a field that may not be set at all),
 * `x-absent-when` (`false` or `empty`: a value the normalized rule leaves out).
 */
import {
  Array as ArraySchema,
  Boolean as BooleanSchema,
  Integer,
  Object as ObjectSchema,
  Optional,
  String as StringSchema,
  Unsafe,
  type Static,
  type TSchema,
} from '@sinclair/typebox';
import {
  ENFORCEMENT_ANNOTATION,
  ENFORCEMENTS,
  LIMITS,
  PRODUCT_ANNOTATION_PREFIX,
  RESERVED_KEYS,
  RULE_BUDGET,
} from './types.ts';

declare global {
  /**
   * Whether the declaration carries the CRD's descriptions and CEL rules. The Lambda bundles define it false
   * (scripts/build.ts), so the bundler drops that text, 17 KiB of the admission bundle: the functions only validate.
   */
  var SCHEMA_DOCS: boolean;
}
globalThis.SCHEMA_DOCS ??= true;

/** One x-kubernetes-validations entry. */
interface CelRule {
  readonly rule: string;
  readonly message: string;
}

const QUALIFIED_NAME =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$';
const OPTIONAL_QUALIFIED_NAME =
  '^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$';
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
const LABEL_VALUE_OR_INTEGER = '^((([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?|[+-][0-9]+)$';
const DNS1123_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const DNS1123_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const QUALIFIED_NAME_MAX = 317;

const RESERVED = [...RESERVED_KEYS];
const RESERVED_CEL_LIST = `[${RESERVED.map((key) => `'${key}'`).join(', ')}]`;
const RESERVED_NAMES = RESERVED.join(', ');
const KEY_SYNTAX =
  "a qualified name: an optional lowercase DNS subdomain prefix and \"/\", then a name of at most 63 alphanumerics, '-', '_' or '.' that starts and ends with an alphanumeric";
const VALUE_SYNTAX = "empty, or at most 63 alphanumerics, '-', '_' or '.' that starts and ends with an alphanumeric";

// Each description and CEL rule is written `SCHEMA_DOCS ? … : {}` at its node, so that the bundler drops the text.
function cel(...rules: readonly CelRule[]): { readonly 'x-kubernetes-validations'?: readonly CelRule[] } {
  return rules.length > 0 ? { 'x-kubernetes-validations': rules } : {};
}

/** A string enumeration, typed as the union of its values. */
function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A map from keys to values of one schema (additionalProperties), as Kubernetes structural schemas declare maps. */
function StringMap<T extends TSchema>(values: T, options: Record<string, unknown> = {}) {
  return Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: values, ...options });
}

/** A label key (node label, taint key) checked by its named syntax check. */
const labelKey = (check: 'label-key' | 'label-key-reserved-allowed', description: string | undefined) =>
  StringSchema({
    maxLength: QUALIFIED_NAME_MAX,
    pattern: QUALIFIED_NAME,
    'x-check': check,
    ...(description === undefined ? {} : { description }),
  });

const labelValue = (options: Record<string, unknown> = {}) =>
  StringSchema({ maxLength: 63, pattern: LABEL_VALUE, 'x-check': 'label-value', ...options });

// --- Node affinity: one requirement, one term, one affinity, for matching and adding alike. ---

const NODE_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] as const;

/** Where a term sits: Kubernetes validates the values of a Pod's required terms as label values, not preferred ones. */
type Placement = 'required' | 'preferred';

const REQUIREMENT_RULES: readonly CelRule[] = !SCHEMA_DOCS
  ? []
  : [
      {
        rule: `!(self.key in ${RESERVED_CEL_LIST})`,
        message: `key is reserved for the product's managed capacity placement (${RESERVED_NAMES}) and cannot be used in rules`,
      },
      {
        rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
        message: 'operators In and NotIn need at least one value',
      },
      {
        rule: "!(self.operator in ['In', 'NotIn']) || !has(self.values) || self.values.all(v, !v.startsWith('-') && !v.startsWith('+'))",
        message: `values of In and NotIn must each be a label value: ${VALUE_SYNTAX}`,
      },
      {
        rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
        message: 'operators Exists and DoesNotExist take no values',
      },
      {
        rule: "!(self.operator in ['Gt', 'Lt']) || (has(self.values) && size(self.values) == 1)",
        message: 'operators Gt and Lt need exactly one value',
      },
      {
        rule: "!(self.operator in ['Gt', 'Lt']) || !has(self.values) || size(self.values) != 1 || (self.values[0].matches('^[+-]?[0-9]+$') && (!self.values[0].matches('^[+-]?0*[1-9][0-9]{18}') || (self.values[0].matches('^[+-]?0*[1-9][0-9]{18}$') && self.values[0].substring(size(self.values[0]) - 19) <= (self.values[0].startsWith('-') ? '9223372036854775808' : '9223372036854775807'))))",
        message:
          'the value of Gt and Lt must be a 64-bit integer: an optional sign and decimal digits, from -9223372036854775808 to 9223372036854775807',
      },
    ];

const REQUIRED_ONLY_RULE: CelRule = !SCHEMA_DOCS
  ? { rule: '', message: '' }
  : {
      rule: "!(self.operator in ['Gt', 'Lt']) || !has(self.values) || size(self.values) != 1 || !(self.values[0].startsWith('-') || self.values[0].startsWith('+'))",
      message:
        "the value of Gt and Lt in a required term must be unsigned decimal digits: the API server validates every value of a Pod's required node affinity as a label value, so a sign would make every matching Pod fail creation (preferred terms accept a sign)",
    };

function nodeRequirement(placement: Placement) {
  const required = placement === 'required';
  return ObjectSchema(
    {
      key: labelKey(
        'label-key',
        SCHEMA_DOCS
          ? `The node label key, ${KEY_SYNTAX}. The keys managed by the product (${RESERVED_NAMES}) are rejected.`
          : undefined,
      ),
      operator: StringEnum(NODE_OPERATORS, {
        ...(SCHEMA_DOCS
          ? {
              description: required
                ? "How the label is compared: In and NotIn need at least one value; Exists and DoesNotExist take no values; Gt and Lt take exactly one value, a 64-bit integer without a sign (the API server validates the values of a Pod's required node affinity as label values)."
                : 'How the label is compared: In and NotIn need at least one value; Exists and DoesNotExist take no values; Gt and Lt take exactly one value, a 64-bit integer (a sign is allowed in preferred terms).',
            }
          : {}),
      }),
      values: Optional(
        // The requirement's check validates each value against its operator: a label value, or a 64-bit integer.
        ArraySchema(StringSchema({ maxLength: 63, pattern: LABEL_VALUE_OR_INTEGER, 'x-checked-by-parent': true }), {
          maxItems: LIMITS.configuredValuesPerExpression,
          'x-noun': 'values',
          'x-absent-when': 'empty',
          ...(SCHEMA_DOCS
            ? {
                description: required
                  ? `The values to compare with, at most 64, compared as a set (order and duplicates do not matter when matching). Each is a label value: ${VALUE_SYNTAX}; so the single integer operand of Gt and Lt takes no sign.`
                  : `The values to compare with, at most 64, compared as a set (order and duplicates do not matter when matching). Each is a label value: ${VALUE_SYNTAX}, except the single integer operand of Gt and Lt, which may carry a sign.`,
              }
            : {}),
        }),
      ),
    },
    {
      'x-check': required ? 'node-requirement-required' : 'node-requirement-preferred',
      ...(SCHEMA_DOCS
        ? {
            description:
              'A requirement on one node label: the label key, an operator, and the values the operator compares with.',
          }
        : {}),
      ...(SCHEMA_DOCS ? cel(...REQUIREMENT_RULES, ...(required ? [REQUIRED_ONLY_RULE] : [])) : {}),
    },
  );
}

/**
 * matchFields is declared only so that the API server rejects it instead of silently dropping it; typed as never,
 * since no valid rule carries it.
 */
const matchFields = Optional(
  Unsafe<never>(
    ArraySchema(
      ObjectSchema({
        key: Optional(
          StringSchema(SCHEMA_DOCS ? { description: 'The node field (Kubernetes supports metadata.name only).' } : {}),
        ),
        operator: Optional(
          StringSchema(SCHEMA_DOCS ? { description: 'The operator, In or NotIn in Kubernetes.' } : {}),
        ),
        values: Optional(ArraySchema(StringSchema(), SCHEMA_DOCS ? { description: 'The field values.' } : {})),
      }),
      {
        'x-forbidden': 'matchFields is not supported in rules; use matchExpressions on node labels',
        ...(SCHEMA_DOCS
          ? {
              description:
                'Not supported: rules select nodes by label only, so any matchFields is rejected. It is declared only so that the API server rejects it instead of silently dropping it.',
            }
          : {}),
      },
    ),
  ),
);

function nodeSelectorTerm(placement: Placement) {
  return ObjectSchema(
    {
      matchExpressions: ArraySchema(nodeRequirement(placement), {
        minItems: 1,
        maxItems: LIMITS.configuredExpressionsPerTerm,
        'x-noun': 'requirements',
        'x-required': 'a term needs at least one requirement (an empty term matches no node)',
        'x-min': 'a term needs at least one requirement (an empty term matches no node)',
        ...(SCHEMA_DOCS
          ? {
              description:
                'Requirements on node labels, all of which must hold; at least 1 (an empty term matches no node) and at most 64.',
            }
          : {}),
      }),
      matchFields,
    },
    {
      ...(SCHEMA_DOCS
        ? { description: 'A node selector term: its requirements are ANDed. Terms of one selector are ORed.' }
        : {}),
      ...(SCHEMA_DOCS
        ? cel({
            rule: '!has(self.matchFields)',
            message: 'matchFields is not supported in rules; use matchExpressions on node labels',
          })
        : {}),
    },
  );
}

const REQUIRED_FIELD = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED_FIELD = 'preferredDuringSchedulingIgnoredDuringExecution';

function nodeAffinity(use: 'match' | 'add') {
  const match = use === 'match';
  return ObjectSchema(
    {
      [REQUIRED_FIELD]: Optional(
        ObjectSchema(
          {
            nodeSelectorTerms: ArraySchema(nodeSelectorTerm('required'), {
              minItems: 1,
              maxItems: LIMITS.configuredRequiredTerms,
              'x-noun': 'terms',
              'x-required': 'must be a list of at least one term',
              'x-min': 'must be a list of at least one term',
              'x-message': 'must be a list of at least one term',
              ...(SCHEMA_DOCS ? { description: 'The node selector terms, ORed; at least 1 and at most 64.' } : {}),
            }),
          },
          SCHEMA_DOCS
            ? {
                description: match
                  ? "Matches when some selector term matches some term of the Pod's required node affinity: every requirement of the selector term has an identical requirement in the Pod term (the Pod term may hold more)."
                  : "Required terms are ANDed with the Pod's current required selector: every current term is combined with every added term, then duplicate and redundant terms are dropped. A requirement on a key already present is added, not replaced; remove it first to replace it.",
              }
            : {},
        ),
      ),
      [PREFERRED_FIELD]: Optional(
        ArraySchema(
          ObjectSchema(
            {
              weight: Integer({
                format: 'int32',
                minimum: 1,
                maximum: 100,
                'x-message': 'must be an integer from 1 to 100',
                ...(SCHEMA_DOCS ? { description: 'The weight of the preference, from 1 to 100.' } : {}),
              }),
              preference: nodeSelectorTerm('preferred'),
            },
            SCHEMA_DOCS ? { description: 'A weighted preference for nodes that match a term.' } : {},
          ),
          {
            minItems: 1,
            maxItems: LIMITS.configuredPreferredTerms,
            'x-noun': 'terms',
            'x-min': 'must be a list of at least one weighted term, or be omitted',
            'x-message': 'must be a list of at least one weighted term, or be omitted',
            ...(SCHEMA_DOCS
              ? {
                  description: match
                    ? "Matches when every entry here has an entry of the Pod's preferred node affinity with the same weight whose term it matches as for required terms. At least 1 and at most 64 entries."
                    : 'Preferred entries are appended, except an entry identical (weight and requirements) to one already present. At least 1 and at most 64 entries.',
                }
              : {}),
          },
        ),
      ),
    },
    {
      'x-check': 'node-affinity',
      ...(SCHEMA_DOCS
        ? {
            description: match
              ? "Node affinity the Pod must already have, in the Kubernetes node affinity shape restricted to matchExpressions. Requirements are compared by key, operator and the set of values; a Pod without the corresponding affinity does not match. The product's reserved keys cannot be used."
              : "Node affinity to add, in the Kubernetes node affinity shape restricted to matchExpressions. The product's reserved keys cannot be used.",
          }
        : {}),
      ...(SCHEMA_DOCS
        ? cel({
            rule: `has(self.${REQUIRED_FIELD}) || has(self.${PREFERRED_FIELD})`,
            message: `set ${REQUIRED_FIELD}, ${PREFERRED_FIELD}, or both`,
          })
        : {}),
    },
  );
}

// --- Tolerations, label selectors, maps of labels. ---

function toleration(options: Record<string, unknown> = {}) {
  return ObjectSchema(
    {
      key: Optional(
        StringSchema({
          maxLength: QUALIFIED_NAME_MAX,
          pattern: OPTIONAL_QUALIFIED_NAME,
          'x-check': 'toleration-key',
          ...(SCHEMA_DOCS
            ? { description: `The taint key, ${KEY_SYNTAX}. Empty means every key and needs operator Exists.` }
            : {}),
        }),
      ),
      operator: Optional(
        StringEnum(['', 'Equal', 'Exists'], {
          'x-message': 'must be Equal, Exists or absent',
          ...(SCHEMA_DOCS
            ? {
                description:
                  'Equal (the default when empty or absent) compares the value; Exists matches any value and takes none.',
              }
            : {}),
        }),
      ),
      value: Optional(
        labelValue(
          SCHEMA_DOCS ? { description: `The taint value for operator Equal, a label value: ${VALUE_SYNTAX}.` } : {},
        ),
      ),
      effect: Optional(
        StringEnum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'], {
          'x-message': 'must be empty, NoSchedule, PreferNoSchedule or NoExecute',
          ...(SCHEMA_DOCS
            ? {
                description:
                  'The taint effect to tolerate: NoSchedule, PreferNoSchedule or NoExecute; empty means every effect.',
              }
            : {}),
        }),
      ),
      tolerationSeconds: Optional(
        Integer({
          format: 'int64',
          'x-message': 'must be an integer',
          ...(SCHEMA_DOCS
            ? {
                description:
                  'With effect NoExecute only: how long the Pod stays bound after the taint appears; absent means forever.',
              }
            : {}),
        }),
      ),
    },
    {
      'x-check': 'toleration',
      ...options,
      ...(SCHEMA_DOCS ? { description: 'A Kubernetes toleration.' } : {}),
      ...(SCHEMA_DOCS
        ? cel(
            {
              rule: "(has(self.key) && self.key != '') || (has(self.operator) && self.operator == 'Exists')",
              message: 'a toleration with an empty key must use operator Exists',
            },
            {
              rule: "!(has(self.operator) && self.operator == 'Exists') || !has(self.value) || self.value == ''",
              message: 'a toleration with operator Exists takes no value',
            },
            {
              rule: "!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",
              message: 'tolerationSeconds is only valid with effect NoExecute',
            },
          )
        : {}),
    },
  );
}

function tolerations(options: Record<string, unknown>) {
  return ArraySchema(toleration(options['x-entry'] as Record<string, unknown> | undefined), {
    maxItems: LIMITS.configuredListItems,
    'x-noun': 'tolerations',
    'x-message': 'must be a list of tolerations',
    ...Object.fromEntries(Object.entries(options).filter(([key]) => key !== 'x-entry')),
  });
}

const RESERVED_IN_MAP: CelRule = !SCHEMA_DOCS
  ? { rule: '', message: '' }
  : {
      rule: `!${RESERVED_CEL_LIST}.exists(k, k in self)`,
      message: `must not contain a key reserved for the product's managed capacity placement (${RESERVED_NAMES})`,
    };

/** A map of node label pairs (nodeSelector), whose keys may not be reserved. */
function nodeLabelMap(options: Record<string, unknown>) {
  return StringMap(labelValue(), {
    maxProperties: LIMITS.configuredListItems,
    'x-noun': 'entries',
    'x-key-check': 'label-key',
    ...options,
    ...(SCHEMA_DOCS ? cel(RESERVED_IN_MAP) : {}),
  });
}

const LABEL_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

const labelSelector = ObjectSchema(
  {
    matchLabels: Optional(
      StringMap(labelValue(), {
        minProperties: 1,
        maxProperties: LIMITS.configuredListItems,
        'x-noun': 'entries',
        'x-key-check': 'label-key-reserved-allowed',
        'x-min': 'must hold at least one label; omit it to select on matchExpressions only',
        ...(SCHEMA_DOCS ? { description: 'Labels the Pod must carry with exactly these values.' } : {}),
      }),
    ),
    matchExpressions: Optional(
      ArraySchema(
        ObjectSchema(
          {
            key: labelKey('label-key-reserved-allowed', SCHEMA_DOCS ? `The label key, ${KEY_SYNTAX}.` : undefined),
            operator: StringEnum(
              LABEL_OPERATORS,
              SCHEMA_DOCS
                ? { description: 'In and NotIn need at least one value; Exists and DoesNotExist take none.' }
                : {},
            ),
            values: Optional(
              ArraySchema(labelValue(), {
                maxItems: LIMITS.configuredValuesPerExpression,
                'x-noun': 'values',
                'x-absent-when': 'empty',
                ...(SCHEMA_DOCS
                  ? { description: `The values to compare with, each a label value: ${VALUE_SYNTAX}.` }
                  : {}),
              }),
            ),
          },
          {
            'x-check': 'label-requirement',
            ...(SCHEMA_DOCS ? { description: 'A requirement on one Pod label.' } : {}),
            ...(SCHEMA_DOCS
              ? cel(
                  {
                    rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
                    message: 'operators In and NotIn need at least one value',
                  },
                  {
                    rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
                    message: 'operators Exists and DoesNotExist take no values',
                  },
                )
              : {}),
          },
        ),
        {
          minItems: 1,
          maxItems: LIMITS.configuredListItems,
          'x-noun': 'requirements',
          'x-min': 'must hold at least one requirement; omit it to select on matchLabels only',
          'x-message': 'must be a list of requirements',
          ...(SCHEMA_DOCS ? { description: "Requirements on the Pod's labels, all of which must hold." } : {}),
        },
      ),
    ),
  },
  {
    'x-check': 'label-selector',
    ...(SCHEMA_DOCS ? { description: "A standard Kubernetes label selector on the Pod's labels." } : {}),
    ...(SCHEMA_DOCS
      ? cel({
          rule: 'has(self.matchLabels) || has(self.matchExpressions)',
          message: 'set matchLabels or matchExpressions: an empty label selector would select every Pod',
        })
      : {}),
  },
);

// --- The spec. ---

/** The selector dimensions; a selector sets at least one, or says all: true alone. */
export const SELECTOR_DIMENSIONS = [
  'namespaces',
  'kinds',
  'names',
  'labelSelector',
  'nodeAffinityMatch',
  'nodeSelectorMatch',
  'tolerationsMatch',
] as const;
const ANY_DIMENSION = SELECTOR_DIMENSIONS.map((dimension) => `has(self.${dimension})`).join(' || ');

function nameList<T extends TSchema>(item: T, what: string, description: string | undefined) {
  return Optional(
    ArraySchema(item, {
      minItems: 1,
      maxItems: LIMITS.selectorNames,
      'x-noun': 'entries',
      'x-min': `must list at least one ${what}; omit it to select any ${what}`,
      'x-message': 'must be a list of strings',
      ...(description === undefined ? {} : { description }),
    }),
  );
}

const workloadSelector = ObjectSchema(
  {
    all: Optional(
      BooleanSchema({
        'x-absent-when': 'false',
        ...(SCHEMA_DOCS
          ? {
              description:
                'true selects every Pod (DaemonSet Pods excepted) and takes no other dimension; false counts as absent.',
            }
          : {}),
      }),
    ),
    namespaces: nameList(
      StringSchema({ maxLength: 63, pattern: DNS1123_LABEL, 'x-check': 'namespace' }),
      'namespace',
      SCHEMA_DOCS ? 'Namespace names (exact match) the Pod must be created in.' : undefined,
    ),
    kinds: nameList(
      StringSchema({ maxLength: 63, pattern: '^[A-Za-z][A-Za-z0-9]*$', 'x-check': 'kind' }),
      'kind',
      SCHEMA_DOCS
        ? "Workload kinds, matched against the workload resolved from the Pod's controller: Deployment, Rollout, ReplicaSet, StatefulSet, CronJob, Job, any other controller kind as it is, or Pod for Pods without a controller."
        : undefined,
    ),
    names: nameList(
      StringSchema({ maxLength: 253, pattern: DNS1123_SUBDOMAIN, 'x-check': 'workload-name' }),
      'name',
      SCHEMA_DOCS
        ? 'Workload names (exact match) of the resolved workload; for Pods without a controller, the Pod name or generateName.'
        : undefined,
    ),
    labelSelector: Optional(labelSelector),
    nodeAffinityMatch: Optional(nodeAffinity('match')),
    nodeSelectorMatch: Optional(
      nodeLabelMap({
        minProperties: 1,
        'x-min': 'must hold at least one pair; omit it to select any nodeSelector',
        ...(SCHEMA_DOCS
          ? {
              description:
                "Pairs that must all be present in the Pod's spec.nodeSelector. The product's reserved keys cannot be used.",
            }
          : {}),
      }),
    ),
    tolerationsMatch: Optional(
      tolerations({
        minItems: 1,
        'x-min': 'must list at least one toleration; omit it to select any tolerations',
        'x-entry': { minProperties: 1, 'x-min': 'must set at least one field: an empty entry matches any toleration' },
        ...(SCHEMA_DOCS
          ? {
              description:
                'Tolerations that must each be present on the Pod, equal on every field the entry sets; at most 64.',
            }
          : {}),
      }),
    ),
  },
  {
    'x-check': 'workload-selector',
    'x-required': 'is required: set at least one dimension, or all: true to select every Pod',
    ...(SCHEMA_DOCS
      ? {
          description:
            'Which Pods the rule applies to. Set at least one dimension, or all: true alone to select every Pod: an empty selector is invalid, so that a misspelt or pruned field can never widen a rule. Every dimension that is set must match (AND); values within one list are ORed; a dimension that is absent does not restrict. Pods owned by a DaemonSet are never mutated.',
        }
      : {}),
    ...(SCHEMA_DOCS
      ? cel(
          {
            rule: `(has(self.all) && self.all) || ${ANY_DIMENSION}`,
            message:
              'sets no dimension: to select every Pod say all: true (an empty selector, for example one whose only field was misspelt and pruned, is invalid)',
          },
          {
            rule: `!(has(self.all) && self.all) || !(${ANY_DIMENSION})`,
            message: 'all: true selects every Pod and takes no other dimension',
          },
        )
      : {}),
  },
);

const removedKeys = (
  description: string | undefined,
  check: 'label-key' | 'label-key-reserved-allowed',
  rules: readonly CelRule[],
) =>
  ArraySchema(
    StringSchema({
      maxLength: QUALIFIED_NAME_MAX,
      pattern: QUALIFIED_NAME,
      'x-check': check,
      ...(SCHEMA_DOCS ? cel(...rules) : {}),
    }),
    {
      minItems: 1,
      maxItems: LIMITS.configuredListItems,
      'x-noun': 'keys',
      'x-required': 'must be a list of at least one label key',
      'x-min': 'must be a list of at least one label key',
      'x-message': 'must be a list of at least one label key',
      ...(description === undefined ? {} : { description }),
    },
  );

const RESERVED_KEY_RULE: CelRule = !SCHEMA_DOCS
  ? { rule: '', message: '' }
  : {
      rule: `!(self in ${RESERVED_CEL_LIST})`,
      message: `is reserved for the product's managed capacity placement (${RESERVED_NAMES}) and cannot be used in rules`,
    };

const mutationRemove = ObjectSchema(
  {
    nodeAffinity: Optional(
      ObjectSchema(
        {
          keys: Optional(
            removedKeys(
              SCHEMA_DOCS
                ? `Label keys whose requirements are removed from every required and preferred term; 1 to 64 keys, each ${KEY_SYNTAX}. The product's reserved keys cannot be removed.`
                : undefined,
              'label-key',
              [RESERVED_KEY_RULE],
            ),
          ),
          all: Optional(
            BooleanSchema({
              'x-absent-when': 'false',
              ...(SCHEMA_DOCS
                ? {
                    description:
                      'true removes all required and preferred node affinity; podAffinity and podAntiAffinity stay.',
                  }
                : {}),
            }),
          ),
        },
        {
          'x-check': 'remove-node-affinity',
          ...(SCHEMA_DOCS
            ? {
                description:
                  'Required and preferred node affinity to remove. Set exactly one of keys or all: true (all: false counts as absent). A preferred term left empty is dropped; a required term left empty clears the whole required selector, since an empty term would match no node.',
              }
            : {}),
          ...(SCHEMA_DOCS
            ? cel({
                rule: 'has(self.keys) != (has(self.all) && self.all)',
                message:
                  'set exactly one of keys (a non-empty list of label keys) or all: true; all: false counts as absent',
              })
            : {}),
        },
      ),
    ),
    nodeSelector: Optional(
      ObjectSchema(
        {
          keys: removedKeys(
            SCHEMA_DOCS
              ? `The nodeSelector keys to remove; 1 to 64 keys, each ${KEY_SYNTAX}. The product's reserved keys cannot be removed.`
              : undefined,
            'label-key',
            [RESERVED_KEY_RULE],
          ),
        },
        SCHEMA_DOCS ? { description: "Keys to remove from the Pod's spec.nodeSelector." } : {},
      ),
    ),
    tolerations: Optional(
      ObjectSchema(
        {
          keys: removedKeys(
            SCHEMA_DOCS ? `Tolerations with these keys are removed; 1 to 64 keys, each ${KEY_SYNTAX}.` : undefined,
            'label-key-reserved-allowed',
            [],
          ),
        },
        SCHEMA_DOCS ? { description: 'Tolerations to remove from the Pod, by key.' } : {},
      ),
    ),
  },
  SCHEMA_DOCS
    ? { description: 'What to remove from a selected Pod. Applied before mutationAdd of the same rule.' }
    : {},
);

const mutationAdd = ObjectSchema(
  {
    annotations: Optional(
      StringMap(StringSchema({ maxLength: LIMITS.annotationValueChars }), {
        maxProperties: LIMITS.configuredListItems,
        'x-noun': 'annotations',
        'x-key-check': 'annotation-key',
        ...(SCHEMA_DOCS
          ? {
              description: `Annotations to set on the Pod, overwriting existing values. Keys are qualified names; keys under ${PRODUCT_ANNOTATION_PREFIX} are managed by the product and rejected.`,
            }
          : {}),
        ...(SCHEMA_DOCS
          ? cel({
              rule: `self.all(k, !k.startsWith('${PRODUCT_ANNOTATION_PREFIX}'))`,
              message: `annotations under ${PRODUCT_ANNOTATION_PREFIX} are managed by the product and cannot be set by rules`,
            })
          : {}),
      }),
    ),
    nodeSelector: Optional(
      nodeLabelMap(
        SCHEMA_DOCS
          ? {
              description:
                "Pairs to set in the Pod's spec.nodeSelector, overwriting existing values. The product's reserved keys cannot be used.",
            }
          : {},
      ),
    ),
    tolerations: Optional(
      tolerations(
        SCHEMA_DOCS
          ? { description: 'Tolerations to append to the Pod, unless an identical one is present; at most 64.' }
          : {},
      ),
    ),
    nodeAffinity: Optional(nodeAffinity('add')),
  },
  SCHEMA_DOCS ? { description: 'What to add to a selected Pod. Applied after mutationRemove of the same rule.' } : {},
);

/** CEL of one budget count over the rule's node affinities and label selector requirements. */
function budgetRule(per: (list: string) => string): string {
  const ofAffinity = (affinity: string) =>
    `(has(${affinity}.${REQUIRED_FIELD}) ? ${affinity}.${REQUIRED_FIELD}.nodeSelectorTerms.map(t, ${per('t.matchExpressions')}).sum() : 0) + ` +
    `(has(${affinity}.${PREFERRED_FIELD}) ? ${affinity}.${PREFERRED_FIELD}.map(p, ${per('p.preference.matchExpressions')}).sum() : 0)`;
  return [
    `(has(self.workloadSelector) && has(self.workloadSelector.nodeAffinityMatch) ? ${ofAffinity('self.workloadSelector.nodeAffinityMatch')} : 0)`,
    `(has(self.workloadSelector) && has(self.workloadSelector.labelSelector) && has(self.workloadSelector.labelSelector.matchExpressions) ? ${per('self.workloadSelector.labelSelector.matchExpressions')} : 0)`,
    `(has(self.mutationAdd) && has(self.mutationAdd.nodeAffinity) ? ${ofAffinity('self.mutationAdd.nodeAffinity')} : 0)`,
  ].join(' + ');
}

const REMOVES_OR_ADDS = !SCHEMA_DOCS
  ? ''
  : '(has(self.mutationRemove) && (has(self.mutationRemove.nodeAffinity) || has(self.mutationRemove.nodeSelector) || has(self.mutationRemove.tolerations))) || ' +
    '(has(self.mutationAdd) && ((has(self.mutationAdd.annotations) && size(self.mutationAdd.annotations) > 0) || (has(self.mutationAdd.nodeSelector) && size(self.mutationAdd.nodeSelector) > 0) || (has(self.mutationAdd.tolerations) && size(self.mutationAdd.tolerations) > 0) || has(self.mutationAdd.nodeAffinity)))';

/** spec of a PodMutation. */
export const PodMutationSpecSchema = ObjectSchema(
  {
    enable: Optional(
      BooleanSchema({
        default: false,
        'x-message': 'must be a boolean',
        ...(SCHEMA_DOCS
          ? { description: 'Whether the rule is applied. A rule is applied only when enable is true.' }
          : {}),
      }),
    ),
    priority: Optional(
      Integer({
        format: 'int32',
        default: 0,
        minimum: -2147483648,
        maximum: 2147483647,
        'x-message': 'must be a 32-bit integer',
        ...(SCHEMA_DOCS
          ? {
              description:
                'Order among matching rules: lower priorities apply first, equal priorities in order of name. Default 0.',
            }
          : {}),
      }),
    ),
    workloadSelector,
    mutationRemove: Optional(mutationRemove),
    mutationAdd: Optional(mutationAdd),
  },
  {
    ...(SCHEMA_DOCS
      ? {
          description:
            'What the rule selects and how it rewrites the scheduling fields of each new Pod it selects. Every enabled rule is matched against the Pod as it arrives, before any rule mutates it; matching rules then apply in ascending priority, then name, each removing before adding.',
        }
      : {}),
    ...(SCHEMA_DOCS
      ? cel(
          {
            rule: REMOVES_OR_ADDS,
            message: 'mutationRemove and mutationAdd are both absent or empty; a rule must remove or add something',
          },
          {
            rule: `${budgetRule((list) => `size(${list})`)} <= ${RULE_BUDGET.maxRequirements}`,
            message: `the rule holds more than ${RULE_BUDGET.maxRequirements} requirements (node affinity and label selector), above the per-rule budget`,
          },
          {
            rule: `${budgetRule((list) => `${list}.map(e, has(e.values) ? size(e.values) : 0).sum()`)} <= ${RULE_BUDGET.maxValues}`,
            message: `the rule holds more than ${RULE_BUDGET.maxValues} requirement values, above the per-rule budget`,
          },
        )
      : {}),
  },
);

/** The status the sync writes; the CRD declares it, no rule ever carries it. */
export const PodMutationStatusSchema = ObjectSchema(
  {
    conditions: Optional(
      ArraySchema(
        ObjectSchema(
          {
            type: StringSchema({
              maxLength: 316,
              pattern: QUALIFIED_NAME,
              ...(SCHEMA_DOCS ? { description: 'The condition type, e.g. Accepted.' } : {}),
            }),
            status: StringEnum(
              ['True', 'False', 'Unknown'],
              SCHEMA_DOCS ? { description: 'True, False or Unknown.' } : {},
            ),
            reason: Optional(
              StringSchema({
                maxLength: 1024,
                pattern: '^([A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?)?$',
                ...(SCHEMA_DOCS ? { description: 'A CamelCase reason for the status, e.g. Valid or Invalid.' } : {}),
              }),
            ),
            message: Optional(
              StringSchema({
                maxLength: 32768,
                ...(SCHEMA_DOCS
                  ? { description: 'A human-readable explanation; for an invalid rule, the field paths and reasons.' }
                  : {}),
              }),
            ),
            lastTransitionTime: Optional(
              StringSchema({
                format: 'date-time',
                ...(SCHEMA_DOCS ? { description: 'When the status last changed.' } : {}),
              }),
            ),
            observedGeneration: Optional(
              Integer({
                format: 'int64',
                minimum: 0,
                ...(SCHEMA_DOCS ? { description: 'The metadata.generation the condition was computed from.' } : {}),
              }),
            ),
          },
          SCHEMA_DOCS ? { description: 'One condition, in the shape of a Kubernetes metav1.Condition.' } : {},
        ),
        {
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          ...(SCHEMA_DOCS
            ? {
                description:
                  'Conditions of the rule. Accepted is True (reason Valid) when the rule passed validation and is served to admission, False (reason Invalid) with the validation message when it is skipped.',
              }
            : {}),
        },
      ),
    ),
    observedGeneration: Optional(
      Integer({
        format: 'int64',
        minimum: 0,
        ...(SCHEMA_DOCS ? { description: 'The metadata.generation the sync last validated.' } : {}),
      }),
    ),
    lastSyncTime: Optional(
      StringSchema({
        format: 'date-time',
        ...(SCHEMA_DOCS
          ? {
              description:
                'When the sync last wrote this status (it writes only when the verdict, the generation or the enforcement changes).',
            }
          : {}),
      }),
    ),
    enforcement: Optional(
      StringEnum(
        ENFORCEMENTS,
        SCHEMA_DOCS
          ? {
              description: `How admission treats the valid rule: enforce applies it, audit only records it (the ${ENFORCEMENT_ANNOTATION} annotation).`,
            }
          : {},
      ),
    ),
    matchedPods: Optional(
      Integer({
        format: 'int64',
        minimum: 0,
        ...(SCHEMA_DOCS
          ? {
              description:
                'Running Pods the rule matches, as of lastReportTime (the sync report, reportIntervalMinutes).',
            }
          : {}),
      }),
    ),
    pendingPods: Optional(
      Integer({
        format: 'int64',
        minimum: 0,
        ...(SCHEMA_DOCS
          ? { description: 'Matched Pods whose scheduling a rollout would still change, as of lastReportTime.' }
          : {}),
      }),
    ),
    lastReportTime: Optional(
      StringSchema({
        format: 'date-time',
        ...(SCHEMA_DOCS
          ? { description: 'When the sync last computed matchedPods and pendingPods (written when they change).' }
          : {}),
      }),
    ),
  },
  SCHEMA_DOCS
    ? {
        description: 'What the sync last observed about this rule. Written by the sync function; never set it by hand.',
      }
    : {},
);

/** spec.workloadSelector, as inferred from the declaration. */
export type WorkloadSelector = Static<typeof workloadSelector>;
/** spec.mutationRemove. */
export type MutationRemove = Static<typeof mutationRemove>;
/** spec.mutationAdd. */
export type MutationAdd = Static<typeof mutationAdd>;
/** spec of a PodMutation as written by users. */
export type PodMutationSpec = Static<typeof PodMutationSpecSchema>;
