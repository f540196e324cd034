/**
 * Karpenter NodePools (karpenter.sh/v1; EKS Auto Mode's are the same API) as Karpenter's provisioner judges a pending
 * Pod against them: whether it considers the Pod at all, whether the NodePool's NodeClaim template is compatible with
 * one of the Pod's required terms, and whether the Pod tolerates the template's taints.
 */
import { labelValueProblem, qualifiedNameProblem } from '../syntax/index.ts';
import { KarpenterRequirement, KarpenterRequirements, atoi, memo, requirementKey } from './karpenter-requirements.ts';
import {
  NODE_POOL_LABEL,
  NORMALIZED_LABELS,
  TEMPLATE_LABELS,
  WELL_KNOWN_LABELS,
  WELL_KNOWN_VALUES,
  isRestrictedLabel,
  nodeClassLabel,
} from './labels.ts';
import type { Placement } from './placement.ts';
import { compareQuantities } from './quantity.ts';
import { hasUntoleratedTaint, taintText, untoleratedTaints, type Taint } from './taints.ts';

/** A requirement of a NodePool's template (NodeSelectorRequirementWithMinValues); minValues does not change fit. */
interface NodePoolRequirement {
  readonly key: string;
  /** In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte or Lte. */
  readonly operator: string;
  readonly values: readonly string[];
}

/** A NodePool as far as fit goes: its template, the fields that take it out of provisioning, and its limits. */
interface NodePool {
  readonly name: string;
  /** spec.template.metadata.labels. */
  readonly labels: Readonly<Record<string, string>>;
  readonly requirements: readonly NodePoolRequirement[];
  /** spec.template.spec.taints; startupTaints are removed once a Node is up, so they never keep a Pod off it. */
  readonly taints: readonly Taint[];
  readonly nodeClassRef: { readonly group: string; readonly kind: string; readonly name: string };
  /** spec.weight; higher is tried first. */
  readonly weight: number | undefined;
  /** spec.replicas: a static NodePool, which provisions no Node for a pending Pod. */
  readonly replicas: number | undefined;
  /** spec.limits, as quantities. */
  readonly limits: Readonly<Record<string, string>>;
  /** status.resources: what its Nodes use of the limits. */
  readonly resources: Readonly<Record<string, string>>;
  /** The Ready condition's status: false only when it says False (with `notReadyReason`); undefined when absent. */
  readonly ready: boolean | undefined;
  readonly notReadyReason: string;
  /** metadata.deletionTimestamp is set. */
  readonly deleting: boolean;
}

/** A NodePool with what judging it needs computed once: its template's requirements, and why it is left out. */
interface CompiledNodePool {
  readonly pool: NodePool;
  readonly requirements: KarpenterRequirements;
  /** Why Karpenter would not provision from it at all, or undefined. */
  readonly excluded: string | undefined;
  /** Which limits its Nodes already reach, as a note ("cpu 1000 of 1000"), or undefined. */
  readonly atLimits: string | undefined;
}

/**
 * The requirements of the NodeClaim template Karpenter makes of a NodePool (NewNodeClaimTemplate): the template's
 * requirements, then its labels with the NodePool's name and node class set over them, then registered and initialized.
 */
function templateRequirements(pool: NodePool): KarpenterRequirements {
  const labels = {
    ...pool.labels,
    [NODE_POOL_LABEL]: pool.name,
    [nodeClassLabel(pool.nodeClassRef.group, pool.nodeClassRef.kind)]: pool.nodeClassRef.name,
  };
  return KarpenterRequirements.of([
    ...pool.requirements.map((requirement) =>
      KarpenterRequirement.of(requirement.key, requirement.operator, requirement.values),
    ),
    ...KarpenterRequirements.ofLabels(labels),
    ...KarpenterRequirements.ofLabels(TEMPLATE_LABELS),
  ]);
}

// The provisioner leaves out static, unready and deleting NodePools (sigs.k8s.io/karpenter
// pkg/controllers/provisioning/provisioner.go, NewScheduler). A NodePool whose status says nothing of readiness (a
// manifest rather than a live object) is not left out: nothing says it cannot provision.
function exclusion(pool: NodePool): string | undefined {
  if (pool.deleting) return 'being deleted';
  if (pool.replicas !== undefined)
    return `static (replicas: ${pool.replicas}): it provisions no Node for a pending Pod`;
  if (pool.ready === false) return `not Ready${pool.notReadyReason === '' ? '' : ` (${pool.notReadyReason})`}`;
  return undefined;
}

function limitsReached(pool: NodePool): string | undefined {
  const reached = Object.entries(pool.limits).flatMap(([resource, limit]) => {
    const used = pool.resources[resource];
    return used !== undefined && compareQuantities(used, limit) >= 0 ? [`${resource} ${used} of ${limit}`] : [];
  });
  return reached.length === 0 ? undefined : `at its limits: ${reached.join(', ')}`;
}

/** Computes once what judging the NodePool needs. */
function compileNodePool(pool: NodePool): CompiledNodePool {
  return { pool, requirements: templateRequirements(pool), excluded: exclusion(pool), atLimits: limitsReached(pool) };
}

/** The Pod as Karpenter reads it: whether it is considered at all, and its strict requirements per required term. */
interface KarpenterPod {
  readonly refusal: string | undefined;
  /** One entry per required term, or one for the nodeSelector alone. */
  readonly terms: readonly KarpenterRequirements[];
}

function selectorRequirements(placement: Placement): KarpenterRequirement[] {
  return KarpenterRequirements.ofLabels(placement.nodeSelector);
}

// ValidateRequirement (pkg/apis/v1/nodeclaim_validation.go) for a Pod's requirement: the provisioner ignores a Pod any
// of whose requirements fails it.
const problems = memo<string | undefined>(4096);

function requirementProblem(key: string, operator: string, values: readonly string[]): string | undefined {
  const normalized = NORMALIZED_LABELS.get(key) ?? key;
  const problem = problems(requirementKey(normalized, operator, values), () =>
    validationProblem(normalized, operator, values),
  );
  return problem === undefined
    ? undefined
    : `${normalized} ${operator}${values.length === 0 ? '' : ` [${values.join(', ')}]`}: ${problem}`;
}

/** The requirement operators Karpenter supports, of a Pod's requirements and a NodePool's. */
const SUPPORTED_OPERATORS: ReadonlySet<string> = new Set([
  'In',
  'NotIn',
  'Exists',
  'DoesNotExist',
  'Gt',
  'Lt',
  'Gte',
  'Lte',
]);
const BOUNDS = new Set(['Gt', 'Lt', 'Gte', 'Lte']);

function validationProblem(key: string, operator: string, values: readonly string[]): string | undefined {
  if (!SUPPORTED_OPERATORS.has(operator)) return `Karpenter does not support the operator ${operator}`;
  if (isRestrictedLabel(key)) return `Karpenter restricts the label ${key}`;
  const known = WELL_KNOWN_VALUES.get(key);
  if (operator === 'In' && known !== undefined && !values.some((value) => known.has(value)))
    return `none of the values is one Karpenter knows (${[...known].join(', ')})`;
  const keyProblem = qualifiedNameProblem(key);
  if (keyProblem !== undefined) return `the key is not a qualified name (${keyProblem})`;
  for (const value of values) {
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined) return `a value is not a label value (${valueProblem})`;
  }
  if (operator === 'In' && values.length === 0) return 'In needs a value';
  if (BOUNDS.has(operator)) {
    const bound = values.length === 1 ? atoi(values[0]!) : undefined;
    if (bound === undefined || bound < 0n) return `${operator} needs one non-negative integer`;
  }
  return undefined;
}

/**
 * Why Karpenter ignores the Pod (Provisioner.Validate, pkg/controllers/provisioning/provisioner.go), or undefined: its
 * requirements, its heaviest preferred term included, say karpenter.sh/nodepool DoesNotExist; a nodeSelector pair or
 * a required term's requirement fails ValidateRequirement; a required term has matchFields.
 */
function karpenterRefusal(placement: Placement): string | undefined {
  const refusal = refusesNodePool(placement);
  if (refusal !== undefined) return refusal;
  for (const [key, value] of Object.entries(placement.nodeSelector)) {
    const problem = requirementProblem(key, 'In', [value]);
    if (problem !== undefined) return `nodeSelector ${problem}`;
  }
  for (const [index, term] of (placement.required ?? []).entries()) {
    if (term.fields.length > 0)
      return `node affinity term ${index + 1} has matchFields, which Karpenter does not support`;
    for (const requirement of term.expressions) {
      const problem = requirementProblem(requirement.key, requirement.operator, requirement.values);
      if (problem !== undefined) return `node affinity term ${index + 1}: ${problem}`;
    }
  }
  return undefined;
}

// validateKarpenterManagedLabelCanExist: NewPodRequirements (the nodeSelector, the heaviest preference and the first
// required term) say karpenter.sh/nodepool DoesNotExist. Only a Pod that names the label can.
function refusesNodePool(placement: Placement): string | undefined {
  const firstTerm = placement.required?.[0]?.expressions ?? [];
  const names = (requirement: { readonly key: string }) => requirement.key === NODE_POOL_LABEL;
  if (
    !Object.hasOwn(placement.nodeSelector, NODE_POOL_LABEL) &&
    !firstTerm.some(names) &&
    !placement.preferred.some((preference) => preference.term.expressions.some(names))
  )
    return undefined;
  // NewPodRequirements takes the heaviest preference; sort.Slice keeps the first of equal weights for fewer than 13.
  const heaviest = placement.preferred.reduce<(typeof placement.preferred)[number] | undefined>(
    (best, preference) => (best === undefined || preference.weight > best.weight ? preference : best),
    undefined,
  );
  const loose = KarpenterRequirements.of([
    ...selectorRequirements(placement),
    ...(heaviest?.term.expressions ?? []).map((item) => KarpenterRequirement.of(item.key, item.operator, item.values)),
    ...firstTerm.map((item) => KarpenterRequirement.of(item.key, item.operator, item.values)),
  ]);
  if (loose.has(NODE_POOL_LABEL) && loose.get(NODE_POOL_LABEL).operator() === 'DoesNotExist')
    return `the Pod asks for ${NODE_POOL_LABEL} DoesNotExist: it is configured not to run on Karpenter's Nodes`;
  return undefined;
}

/** The Pod as Karpenter's provisioner reads it, once per judgment. */
function karpenterPod(placement: Placement): KarpenterPod {
  const selector = selectorRequirements(placement);
  const terms = placement.required ?? [undefined];
  return {
    refusal: karpenterRefusal(placement),
    // NewStrictPodRequirements of the Pod with one required term at a time, as preference relaxation tries them.
    terms: terms.map((term) =>
      KarpenterRequirements.of([
        ...selector,
        ...(term?.expressions ?? []).map((item) => KarpenterRequirement.of(item.key, item.operator, item.values)),
      ]),
    ),
  };
}

/** True when the NodePool would create a Node for the Pod: nodePoolMisfits() is empty, found without its messages. */
function nodePoolFits(compiled: CompiledNodePool, pod: KarpenterPod, placement: Placement): boolean {
  if (compiled.excluded !== undefined || pod.refusal !== undefined) return false;
  if (hasUntoleratedTaint(compiled.pool.taints, placement.tolerations)) return false;
  return pod.terms.some((term) => compiled.requirements.isCompatible(term, WELL_KNOWN_LABELS));
}

/**
 * Why the Pod fits no Node the NodePool would create, one reason per failing key or taint; empty when it fits. For a
 * Pod with several required terms the reasons are those of the term that fails on the fewest.
 */
function nodePoolMisfits(compiled: CompiledNodePool, pod: KarpenterPod, placement: Placement): readonly string[] {
  if (compiled.excluded !== undefined) return [`the NodePool is ${compiled.excluded}`];
  if (pod.refusal !== undefined) return [`Karpenter ignores the Pod: ${pod.refusal}`];
  const reasons = untoleratedTaints(compiled.pool.taints, placement.tolerations).map(
    (taint) => `taint ${taintText(taint)} not tolerated`,
  );
  let closest: readonly string[] | undefined;
  for (const [index, term] of pod.terms.entries()) {
    const problems = compiled.requirements.compatible(term, WELL_KNOWN_LABELS);
    if (problems.length === 0) return reasons;
    const labelled = pod.terms.length === 1 ? problems : problems.map((problem) => `term ${index + 1}: ${problem}`);
    if (closest === undefined || labelled.length < closest.length) closest = labelled;
  }
  return [...(closest ?? []), ...reasons];
}

export { compileNodePool, karpenterPod, nodePoolFits, nodePoolMisfits, SUPPORTED_OPERATORS };
export type { NodePool, NodePoolRequirement, CompiledNodePool, KarpenterPod };
