/**
 * The one declaration of the PodMutation contract, in TypeBox: its TypeScript types are inferred from it,
 * the validator runs its structural part (lib/api/structure.ts), and `npm run crd` generates the CRD's
 * openAPIV3Schema from it. It declares shape and bounds, and names the checks of each node: the validator's
 * (lib/api/checks.ts) and the rules both enforcement points apply (lib/api/rules.ts, one message each), which the CRD
 * carries as CEL. Shared fragments (a node selector requirement, a term, a node affinity, a toleration) are declared
 * once. The CRD's descriptions are not here: the generator lays them over it (lib/api/crd-docs.ts).
 *
 * Why TypeBox rather than zod 4: a TypeBox schema is a JSON Schema object at run time, so the CRD is the declaration
 * itself with `x-kubernetes-*` keys passing through untouched, where zod needs a conversion (toJSONSchema) and
 * metadata threaded through it; and its named builders tree-shake out of the admission bundle.
 *
 * Extensions read by the validator and dropped from the CRD: `x-check` (a named check of lib/api/checks.ts),
 * `x-key-check` (the same, run on each key of a map), `x-cel` (the named rules of lib/api/rules.ts the CRD attaches
 * as CEL to the node), `x-checked-by-parent` (a value its parent's check validates, so its pattern is the CRD's
 * only), `x-noun` (what a list or map holds, for limit messages), `x-message` (the reason for a value of the wrong
 * type or out of range), `x-required` and `x-min` (the reasons when a required field is absent, or a list or map
 * holds too few), `x-reason` (one reason for all three cases), `x-forbidden` (the named rule a field breaks by being
 * set at all), `x-absent-when` (`false` or `empty`: a value the normalized rule leaves out).
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
import type { RawInteger } from '../json/index.ts';
import { ENFORCEMENTS, LIMITS, PLACEMENT_MODES } from './constants.ts';
import type { RuleName } from './rules.ts';

const QUALIFIED_NAME =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$';
const OPTIONAL_QUALIFIED_NAME =
  '^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$';
const LABEL_VALUE = '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$';
const LABEL_VALUE_OR_INTEGER = '^((([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?|[+-][0-9]+)$';
const DNS1123_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const DNS1123_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const QUALIFIED_NAME_MAX = 317;

/** The named rules of a node, which the CRD generator attaches as CEL. */
function cel(...rules: readonly RuleName[]): { readonly 'x-cel': readonly RuleName[] } {
  return { 'x-cel': rules };
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
const labelKey = (check: 'label-key' | 'label-key-reserved-allowed') =>
  StringSchema({ maxLength: QUALIFIED_NAME_MAX, pattern: QUALIFIED_NAME, 'x-check': check });

/** An int64 field: a number, or beyond 2^53 the digits a double would round (lib/json's RawInteger). */
const Int64 = (options: Record<string, unknown> = {}) =>
  Unsafe<number | RawInteger>({ type: 'integer', format: 'int64', ...options });

const labelValue = () => StringSchema({ maxLength: 63, pattern: LABEL_VALUE, 'x-check': 'label-value' });

// --- Node affinity: one requirement, one term, one affinity, for matching and adding alike. ---

const NODE_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'] as const;

/** Where a term sits: Kubernetes validates the values of a Pod's required terms as label values, not preferred ones. */
type Placement = 'required' | 'preferred';

const REQUIREMENT_RULES: readonly RuleName[] = [
  'reserved-requirement-key',
  'in-needs-values',
  'in-values-are-label-values',
  'exists-takes-no-values',
  'gt-lt-one-value',
  'gt-lt-int64',
];

function nodeRequirement(placement: Placement) {
  const required = placement === 'required';
  return ObjectSchema(
    {
      key: labelKey('label-key'),
      operator: StringEnum(NODE_OPERATORS),
      values: Optional(
        // The requirement's check validates each value against its operator: a label value, or a 64-bit integer.
        ArraySchema(StringSchema({ maxLength: 63, pattern: LABEL_VALUE_OR_INTEGER, 'x-checked-by-parent': true }), {
          maxItems: LIMITS.configuredValuesPerExpression,
          'x-noun': 'values',
          'x-absent-when': 'empty',
        }),
      ),
    },
    {
      'x-check': required ? 'node-requirement-required' : 'node-requirement-preferred',
      ...cel(...REQUIREMENT_RULES, ...(required ? (['required-gt-lt-unsigned'] as const) : [])),
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
        key: Optional(StringSchema()),
        operator: Optional(StringSchema()),
        values: Optional(ArraySchema(StringSchema())),
      }),
      { 'x-forbidden': 'no-match-fields' satisfies RuleName },
    ),
  ),
);

const EMPTY_TERM = 'a term needs at least one requirement (an empty term matches no node)';

function nodeSelectorTerm(placement: Placement) {
  return ObjectSchema(
    {
      matchExpressions: ArraySchema(nodeRequirement(placement), {
        minItems: 1,
        maxItems: LIMITS.configuredExpressionsPerTerm,
        'x-noun': 'requirements',
        'x-required': EMPTY_TERM,
        'x-min': EMPTY_TERM,
      }),
      matchFields,
    },
    cel('no-match-fields'),
  );
}

const REQUIRED_FIELD = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED_FIELD = 'preferredDuringSchedulingIgnoredDuringExecution';

function nodeAffinity() {
  return ObjectSchema(
    {
      [REQUIRED_FIELD]: Optional(
        ObjectSchema({
          nodeSelectorTerms: ArraySchema(nodeSelectorTerm('required'), {
            minItems: 1,
            maxItems: LIMITS.configuredRequiredTerms,
            'x-noun': 'terms',
            'x-reason': 'must be a list of at least one term',
          }),
        }),
      ),
      [PREFERRED_FIELD]: Optional(
        ArraySchema(
          ObjectSchema({
            weight: Integer({
              format: 'int32',
              minimum: 1,
              maximum: 100,
              'x-message': 'must be an integer from 1 to 100',
            }),
            preference: nodeSelectorTerm('preferred'),
          }),
          {
            minItems: 1,
            maxItems: LIMITS.configuredPreferredTerms,
            'x-noun': 'terms',
            'x-reason': 'must be a list of at least one weighted term, or be omitted',
          },
        ),
      ),
    },
    { 'x-check': 'node-affinity', ...cel('node-affinity-not-empty') },
  );
}

// --- Tolerations, label selectors, maps of labels. ---

function toleration(options: Record<string, unknown> = {}) {
  return ObjectSchema(
    {
      key: Optional(
        StringSchema({ maxLength: QUALIFIED_NAME_MAX, pattern: OPTIONAL_QUALIFIED_NAME, 'x-check': 'toleration-key' }),
      ),
      operator: Optional(StringEnum(['', 'Equal', 'Exists'], { 'x-message': 'must be Equal, Exists or absent' })),
      value: Optional(labelValue()),
      effect: Optional(
        StringEnum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'], {
          'x-message': 'must be empty, NoSchedule, PreferNoSchedule or NoExecute',
        }),
      ),
      tolerationSeconds: Optional(Int64({ 'x-message': 'must be an integer' })),
    },
    {
      'x-check': 'toleration',
      ...options,
      ...cel('toleration-empty-key-exists', 'toleration-exists-no-value', 'toleration-seconds-no-execute'),
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

/**
 * A map of node label pairs (nodeSelector). Its keys may be reserved where a rule only reads them (nodeSelectorMatch):
 * the API reference reserves the managed keys in node affinity, and a Pod's nodeSelector pin is the customer's own.
 */
function nodeLabelMap(reserved: 'reserved-allowed' | 'reserved-refused', options: Record<string, unknown>) {
  return StringMap(labelValue(), {
    maxProperties: LIMITS.configuredListItems,
    'x-noun': 'entries',
    'x-key-check': reserved === 'reserved-allowed' ? 'label-key-reserved-allowed' : 'label-key',
    ...options,
    ...(reserved === 'reserved-allowed' ? {} : cel('reserved-map-key')),
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
      }),
    ),
    matchExpressions: Optional(
      ArraySchema(
        ObjectSchema(
          {
            key: labelKey('label-key-reserved-allowed'),
            operator: StringEnum(LABEL_OPERATORS),
            values: Optional(
              ArraySchema(labelValue(), {
                maxItems: LIMITS.configuredValuesPerExpression,
                'x-noun': 'values',
                'x-absent-when': 'empty',
              }),
            ),
          },
          { 'x-check': 'label-requirement', ...cel('in-needs-values', 'exists-takes-no-values') },
        ),
        {
          minItems: 1,
          maxItems: LIMITS.configuredListItems,
          'x-noun': 'requirements',
          'x-min': 'must hold at least one requirement; omit it to select on matchLabels only',
          'x-message': 'must be a list of requirements',
        },
      ),
    ),
  },
  { 'x-check': 'label-selector', ...cel('label-selector-not-empty') },
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

function nameList<T extends TSchema>(item: T, what: string) {
  return Optional(
    ArraySchema(item, {
      minItems: 1,
      maxItems: LIMITS.selectorNames,
      'x-noun': 'entries',
      'x-min': `must list at least one ${what}; omit it to select any ${what}`,
      'x-message': 'must be a list of strings',
    }),
  );
}

const workloadSelector = ObjectSchema(
  {
    all: Optional(BooleanSchema({ 'x-absent-when': 'false' })),
    namespaces: nameList(StringSchema({ maxLength: 63, pattern: DNS1123_LABEL, 'x-check': 'namespace' }), 'namespace'),
    kinds: nameList(StringSchema({ maxLength: 63, pattern: '^[A-Za-z][A-Za-z0-9]*$', 'x-check': 'kind' }), 'kind'),
    names: nameList(StringSchema({ maxLength: 253, pattern: DNS1123_SUBDOMAIN, 'x-check': 'workload-name' }), 'name'),
    labelSelector: Optional(labelSelector),
    nodeAffinityMatch: Optional(nodeAffinity()),
    nodeSelectorMatch: Optional(
      nodeLabelMap('reserved-allowed', {
        minProperties: 1,
        'x-min': 'must hold at least one pair; omit it to select any nodeSelector',
      }),
    ),
    tolerationsMatch: Optional(
      tolerations({
        minItems: 1,
        'x-min': 'must list at least one toleration; omit it to select any tolerations',
        'x-entry': { minProperties: 1, 'x-min': 'must set at least one field: an empty entry matches any toleration' },
      }),
    ),
  },
  {
    'x-check': 'workload-selector',
    'x-required': 'is required: set at least one dimension, or all: true to select every Pod',
    ...cel('selector-sets-dimension', 'selector-all-alone'),
  },
);

const removedKeys = (check: 'label-key' | 'label-key-reserved-allowed', rules: readonly RuleName[]) =>
  ArraySchema(
    StringSchema({
      maxLength: QUALIFIED_NAME_MAX,
      pattern: QUALIFIED_NAME,
      'x-check': check,
      ...(rules.length > 0 ? cel(...rules) : {}),
    }),
    {
      minItems: 1,
      maxItems: LIMITS.configuredListItems,
      'x-noun': 'keys',
      'x-reason': 'must be a list of at least one label key',
    },
  );

const mutationRemove = ObjectSchema({
  nodeAffinity: Optional(
    ObjectSchema(
      {
        keys: Optional(removedKeys('label-key', ['reserved-key'])),
        all: Optional(BooleanSchema({ 'x-absent-when': 'false' })),
      },
      { 'x-check': 'remove-node-affinity', ...cel('remove-node-affinity-one-of') },
    ),
  ),
  // A nodeSelector pin on a reserved key (an instance type) is the Pod's own: a rule may remove it, never add one.
  nodeSelector: Optional(ObjectSchema({ keys: removedKeys('label-key-reserved-allowed', []) })),
  tolerations: Optional(ObjectSchema({ keys: removedKeys('label-key-reserved-allowed', []) })),
});

const mutationAdd = ObjectSchema({
  annotations: Optional(
    StringMap(StringSchema({ maxLength: LIMITS.annotationValueChars }), {
      maxProperties: LIMITS.configuredListItems,
      'x-noun': 'annotations',
      'x-key-check': 'annotation-key',
      ...cel('product-annotation'),
    }),
  ),
  nodeSelector: Optional(nodeLabelMap('reserved-refused', {})),
  tolerations: Optional(tolerations({})),
  nodeAffinity: Optional(nodeAffinity()),
});

/** spec.enable, as PodMutation and PodPlacement declare it. */
const enable = () => Optional(BooleanSchema({ default: false, 'x-message': 'must be a boolean' }));

/** spec.priority, as PodMutation and PodPlacement declare it. */
const priority = () =>
  Optional(
    Integer({
      format: 'int32',
      default: 0,
      minimum: -2147483648,
      maximum: 2147483647,
      'x-message': 'must be a 32-bit integer',
    }),
  );

/** spec of a PodMutation. */
export const PodMutationSpecSchema = ObjectSchema(
  {
    enable: enable(),
    priority: priority(),
    workloadSelector,
    mutationRemove: Optional(mutationRemove),
    mutationAdd: Optional(mutationAdd),
  },
  cel('removes-or-adds', 'budget-requirements', 'budget-values'),
);

/**
 * spec of a PodPlacement: the workloads it selects, as a PodMutation selects them, and the managed capacity placement
 * their Pods get (the terms of the per-workload placement policies: mode, spotPercent, minOnDemand).
 */
export const PodPlacementSpecSchema = ObjectSchema(
  {
    enable: enable(),
    priority: priority(),
    workloadSelector,
    mode: StringEnum(PLACEMENT_MODES, { 'x-message': `must be one of ${PLACEMENT_MODES.join(', ')}` }),
    spotPercent: Optional(
      Integer({ format: 'int32', minimum: 0, maximum: 100, 'x-message': 'must be an integer from 0 to 100' }),
    ),
    minOnDemand: Optional(
      Integer({
        format: 'int32',
        minimum: 0,
        maximum: LIMITS.minOnDemand,
        'x-message': `must be an integer from 0 to ${LIMITS.minOnDemand}`,
      }),
    ),
  },
  { 'x-check': 'placement-mode-fields', ...cel('diversity-fields') },
);

/** A condition as the sync writes it (metav1.Condition's shape). */
const conditions = () =>
  Optional(
    ArraySchema(
      ObjectSchema({
        type: StringSchema({ maxLength: 316, pattern: QUALIFIED_NAME }),
        status: StringEnum(['True', 'False', 'Unknown']),
        reason: Optional(StringSchema({ maxLength: 1024, pattern: '^([A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?)?$' })),
        message: Optional(StringSchema({ maxLength: 32768 })),
        lastTransitionTime: Optional(StringSchema({ format: 'date-time' })),
        observedGeneration: Optional(Integer({ format: 'int64', minimum: 0 })),
      }),
      { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] },
    ),
  );

/** The status the sync writes; the CRD declares it, no rule ever carries it. */
export const PodMutationStatusSchema = ObjectSchema({
  conditions: conditions(),
  observedGeneration: Optional(Integer({ format: 'int64', minimum: 0 })),
  lastSyncTime: Optional(StringSchema({ format: 'date-time' })),
  enforcement: Optional(StringEnum(ENFORCEMENTS)),
  matchedPods: Optional(Integer({ format: 'int64', minimum: 0 })),
  pendingPods: Optional(Integer({ format: 'int64', minimum: 0 })),
  lastReportTime: Optional(StringSchema({ format: 'date-time' })),
});

/** The status the sync writes on a PodPlacement; the CRD declares it, no placement ever carries it. */
export const PodPlacementStatusSchema = ObjectSchema({
  conditions: conditions(),
  observedGeneration: Optional(Integer({ format: 'int64', minimum: 0 })),
  lastSyncTime: Optional(StringSchema({ format: 'date-time' })),
  matchedPods: Optional(Integer({ format: 'int64', minimum: 0 })),
  placedPods: Optional(Integer({ format: 'int64', minimum: 0 })),
  lastReportTime: Optional(StringSchema({ format: 'date-time' })),
});

/** spec.workloadSelector, as inferred from the declaration. */
export type WorkloadSelector = Static<typeof workloadSelector>;
/** spec.mutationRemove. */
export type MutationRemove = Static<typeof mutationRemove>;
/** spec.mutationAdd. */
export type MutationAdd = Static<typeof mutationAdd>;
/** spec of a PodMutation as written by users. */
export type PodMutationSpec = Static<typeof PodMutationSpecSchema>;
/** spec of a PodPlacement as written by users. */
export type PodPlacementSpec = Static<typeof PodPlacementSpecSchema>;
