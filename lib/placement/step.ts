import {
  andRequiredAffinity,
  warn,
  type ManagedStep,
  type MutationContext,
  type PodFacts,
  type SchedulingState,
  type StepResult,
} from '../engine/index.ts';
import type { PlacementMode } from '../api/index.ts';
import { labelRequirement, term, type Term } from '../scheduling/index.ts';
import { createPlacementSelection, type ChosenPlacement, type PlacementSources } from './selection.ts';
import { sequenceChoice, statefulSetOrdinal } from './sequence.ts';
import {
  CAPACITY_ANNOTATION,
  CAPACITY_LABELS,
  INSTANCE_TYPE_KEY,
  type CapacityChoice,
  type CapacityFlavour,
} from './types.ts';

// FNV-1a: a fast, well-spread hash; the request uid it reads is random per admission, so buckets come out uniform.
function bucketOf(seed: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < seed.length; index += 1) {
    hash ^= seed.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % 100;
}

// A symbol, not a field: no JSON input (a Pod, a review) can carry it, so only code that calls withRecordedCapacity sets it.
const RECORDED = Symbol('recorded capacity choice');

type RecordingContext = MutationContext & { readonly [RECORDED]?: CapacityChoice };

/**
 * The context of a Pod whose Diversity choice is already known to the caller, not to the Pod: `report` passes the
 * choice the running Pod was admitted with, so that the Pod a rollout would create is compared under the same draw.
 * A value that is no capacity choice leaves the context as it is.
 */
export function withRecordedCapacity(context: MutationContext, choice: unknown): MutationContext {
  if (choice !== 'spot' && choice !== 'on-demand') return context;
  const recording: RecordingContext = { ...context, [RECORDED]: choice };
  return recording;
}

/**
 * The capacity a Diversity Pod gets, decided by the webhook alone: by the Pod's number in its workload's sequence
 * (sequence.ts: a StatefulSet Pod's ordinal, else the counter the caller read into the context), so that every prefix
 * of the workload's Pods holds the split exactly; without one, Spot for `spotPercent` of the hash buckets of its
 * admission request's uid. The Pod's own capacity annotation is never read: a Pod author who writes it in a template
 * would otherwise choose their capacity. A choice recorded by the caller (withRecordedCapacity) is kept when the policy
 * can still make it, so that a change of spotPercent to 0, or to 100 without minOnDemand, shows up as pending Pods.
 */
function diversityChoice(context: RecordingContext, chosen: ChosenPlacement, facts: PodFacts): CapacityChoice {
  const target = { spotPercent: chosen.spotPercent, minOnDemand: chosen.minOnDemand };
  const { spotPercent } = target;
  const recorded = context[RECORDED];
  if (recorded === 'spot' && spotPercent > 0) return recorded;
  // Under spotPercent 100, minOnDemand still puts the first Pods on on-demand.
  if (recorded === 'on-demand' && (spotPercent < 100 || target.minOnDemand > 0)) return recorded;
  const sequence = statefulSetOrdinal(facts) ?? context.sequence;
  if (sequence !== undefined) return sequenceChoice(sequence, target);
  return bucketOf(context.requestUid) < spotPercent ? 'spot' : 'on-demand';
}

/** The annotation the ReplicaSet controller ranks Pods by for deletion, lowest first (PodDeletionCost, beta since 1.22). */
const DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';
// The cost is an int32 (pkg/apis/core/helper GetDeletionCostFromPodAnnotations); the ReplicaSet controller deletes the
// lowest cost first among running and ready Pods (pkg/controller/controller_utils.go ActivePodsWithRanks).
const MAX_DELETION_COST = 2_147_483_647;

/**
 * The Pod with its deletion cost set from its sequence number, so that a scale-down deletes the latest numbers first
 * and leaves the first ones, an exact prefix of the sequence. Costs count down from the int32 maximum, all positive:
 * Pods admitted before the policy carry none (read as 0) and go first, so the live Pods converge on the sequence. A Pod
 * that sets its own cost keeps it, with a warning. StatefulSet Pods get none (their controller deletes by ordinal), nor
 * does a Pod reviewed without a sequence number.
 */
function withDeletionCost(state: SchedulingState, facts: PodFacts, context: MutationContext): SchedulingState {
  const { sequence } = context;
  if (sequence === undefined || statefulSetOrdinal(facts) !== undefined) return state;
  if (Object.hasOwn(facts.annotations, DELETION_COST_ANNOTATION)) {
    return warn(
      state,
      `managed capacity placement (Diversity): the Pod sets its own ${DELETION_COST_ANNOTATION}, so a scale-down may not keep the workload's Spot split`,
    );
  }
  const annotations = state.annotations ?? facts.annotations;
  const cost = String(Math.max(1, MAX_DELETION_COST - sequence));
  return { ...state, annotations: { ...annotations, [DELETION_COST_ANNOTATION]: cost } };
}

/** The warning of a Diversity Pod placed by its request's uid because its sequence number could not be had. */
function withRandomDrawWarning(state: SchedulingState, facts: PodFacts, context: MutationContext): SchedulingState {
  if (context.sequenceUnavailable === undefined || statefulSetOrdinal(facts) !== undefined) return state;
  return warn(
    state,
    `managed capacity placement (Diversity): Spot or on-demand was drawn at random for this Pod, since ${context.sequenceUnavailable}`,
  );
}

/**
 * Labels that set one Pod of a workload apart from the others, left out of the spread's selector, which would otherwise
 * select the Pod alone: a StatefulSet Pod's name and ordinal (statefulset.kubernetes.io/pod-name,
 * apps.kubernetes.io/pod-index: staging/src/k8s.io/api/apps/v1/types.go), an Indexed Job Pod's completion index
 * (batch.kubernetes.io/job-completion-index: staging/src/k8s.io/api/batch/v1/types.go), and the revision of the
 * controllers that replace Pods one at a time and run old and new revisions side by side for as long as they like
 * (controller-revision-hash of StatefulSets and DaemonSets, a DaemonSet's pod-template-generation). A Deployment's
 * pod-template-hash (a Rollout's rollouts-pod-template-hash) is kept: a rolling update surges new Pods beside old ones
 * that are about to go, so the new ReplicaSet spreads over itself, the selection the topology-spread docs recommend
 * with matchLabelKeys: [pod-template-hash]. It is written into matchLabels rather than named in matchLabelKeys, since
 * the API server merges matchLabelKeys into labelSelector when it creates the Pod (MatchLabelKeysInPodTopologySpread-
 * SelectorMerge, on by default since 1.34: pkg/registry/core/pod/strategy.go), after this review: the Pod would be
 * stored other than the webhook sent it, and its stamp would no longer check.
 */
const UNSHARED_LABELS: readonly string[] = [
  'statefulset.kubernetes.io/pod-name',
  'apps.kubernetes.io/pod-index',
  'batch.kubernetes.io/job-completion-index',
  'controller-revision-hash',
  'pod-template-generation',
];

/** The labels of a Pod that the other Pods of its workload (of its ReplicaSet, for a Deployment) carry too. */
function sharedLabels(labels: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (!UNSHARED_LABELS.some((key) => Object.hasOwn(labels, key))) return labels;
  return Object.fromEntries(Object.entries(labels).filter(([key]) => !UNSHARED_LABELS.includes(key)));
}

function withInstanceTypeSpread(state: SchedulingState, facts: PodFacts): SchedulingState {
  const current: readonly unknown[] = state.topologySpreadConstraints ?? facts.topologySpreadConstraints;
  const labels = sharedLabels(facts.labels);
  const spreadsAlready = current.some(
    (constraint) => (constraint as { topologyKey?: unknown }).topologyKey === INSTANCE_TYPE_KEY,
  );
  // Without shared labels there is nothing to select the workload's Pods by, so no spread is added.
  if (spreadsAlready || Object.keys(labels).length === 0) return state;
  const constraint = {
    maxSkew: 1,
    topologyKey: INSTANCE_TYPE_KEY,
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: labels },
  };
  return { ...state, topologySpreadConstraints: [...current, constraint] };
}

function withCapacityAnnotation(state: SchedulingState, facts: PodFacts, choice: CapacityChoice): SchedulingState {
  const annotations = state.annotations ?? facts.annotations;
  if (annotations[CAPACITY_ANNOTATION] === choice) return state;
  return { ...state, annotations: { ...annotations, [CAPACITY_ANNOTATION]: choice } };
}

/** The managed capacity placement step, which also says which placement a Pod gets and why (for explain, admission). */
export interface PlacementStep extends ManagedStep {
  /** The placement the Pod gets, and the other PodPlacements that select it; undefined when none does. Pure. */
  readonly choose: (facts: PodFacts) => ChosenPlacement | undefined;
  /** True when no policy and no enabled PodPlacement exists: the step changes no Pod. */
  readonly empty: boolean;
}

/**
 * The managed capacity placement step: for a Pod with a placement (a table policy for its workload, else the first
 * PodPlacement that selects it), ANDs the flavour's capacity requirement into every required term (creating the
 * selector when there is none); Diversity also records the choice, sets the deletion cost and spreads across instance
 * types. Runs after every customer rule.
 */
export function createPlacementStep(options: { readonly flavour: CapacityFlavour } & PlacementSources): PlacementStep {
  const label = CAPACITY_LABELS[options.flavour];
  const selection = createPlacementSelection(options);
  const requirementTerm = (choice: CapacityChoice) => [
    term([labelRequirement(label.key, 'In', [choice === 'spot' ? label.spot : label.onDemand])]),
  ];
  return {
    // Not a valid PodMutation name, so it can never be mistaken for a customer rule in the applied annotation.
    name: 'managed:capacity',
    choose: selection.choose,
    empty: selection.empty,
    apply(state: SchedulingState, facts: PodFacts, context: MutationContext): StepResult | undefined {
      const chosen = selection.choose(facts);
      if (chosen === undefined) return undefined;
      const owner = {
        name: `managed:${chosen.mode}`,
        subject: `managed capacity placement (${chosen.mode}, ${chosen.source})`,
      };
      const choice: CapacityChoice =
        chosen.mode === 'Spot'
          ? 'spot'
          : chosen.mode === 'NonSpot'
            ? 'on-demand'
            : diversityChoice(context, chosen, facts);
      const result = andRequiredAffinity(state, facts, owner, requirementTerm(choice));
      if ('denied' in result || chosen.mode !== 'Diversity') return result;
      const annotated = withDeletionCost(withCapacityAnnotation(result.state, facts, choice), facts, context);
      return { state: withRandomDrawWarning(withInstanceTypeSpread(annotated, facts), facts, context) };
    },
  };
}

/**
 * Whether a Pod's required node affinity already carries what a placement of `mode` adds: every required term holds
 * `<capacity key> In [<value>]` of the flavour, the Spot value for Spot, the on-demand one for NonSpot, either for
 * Diversity (each Pod draws its own). A Pod without required terms is not placed. Pure.
 */
export function isPlaced(
  required: readonly Term[] | undefined,
  mode: PlacementMode,
  flavour: CapacityFlavour,
): boolean {
  const label = CAPACITY_LABELS[flavour];
  const values = mode === 'Spot' ? [label.spot] : mode === 'NonSpot' ? [label.onDemand] : [label.spot, label.onDemand];
  const ids = values.map((value) => labelRequirement(label.key, 'In', [value]).id);
  return required !== undefined && required.length > 0 && required.every((each) => ids.some((id) => each.ids.has(id)));
}
