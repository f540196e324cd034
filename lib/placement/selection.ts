import {
  DEFAULT_MIN_ON_DEMAND,
  DEFAULT_SPOT_PERCENT,
  describeIssues,
  placementToResource,
  POD_PLACEMENT_KIND,
  validatePodPlacement,
  type NormalizedPlacement,
  type PlacementMode,
} from '../api/index.ts';
import { StoreError } from '../errors/index.ts';
import { compileRuleSet, matchingRules, type PodFacts, type RuleSet } from '../engine/index.ts';
import { workloadKey } from './policy.ts';
import type { PlacementPolicy } from './types.ts';

/** The placement one Pod gets: its mode and Diversity's terms, and where it was declared. */
export interface ChosenPlacement {
  readonly mode: PlacementMode;
  readonly spotPercent: number;
  readonly minOnDemand: number;
  /** `PodPlacement "name"`, or `placement policy namespace/kind/name` for a policy of the table. */
  readonly source: string;
  /** The PodPlacement's name; undefined for a policy of the table. */
  readonly placement?: string;
  /** The other enabled PodPlacements that select the Pod, in application order; none of them applies. */
  readonly alsoMatched: readonly string[];
}

/** Where placements come from: the per-workload policies of the table, and the PodPlacements of the cluster. */
export interface PlacementSources {
  readonly policies?: readonly PlacementPolicy[];
  readonly placements?: readonly NormalizedPlacement[];
}

/**
 * The PodPlacements compiled for matching, through the engine's own selector code: a PodPlacement selects exactly the
 * Pods a PodMutation with its workloadSelector would match, in the same order (ascending priority, then name).
 */
function compilePlacements(placements: readonly NormalizedPlacement[]): RuleSet {
  return compileRuleSet(
    placements.map((placement) => ({
      name: placement.name,
      enable: placement.enable,
      enforcement: 'enforce',
      priority: placement.priority,
      workloadSelector: placement.workloadSelector,
      mutationRemove: {},
      mutationAdd: {},
    })),
  );
}

/**
 * Chooses each Pod's placement: a per-workload policy of the table wins (an operator's override), else the first
 * enabled PodPlacement that selects the Pod in application order; the others that select it are listed, never
 * applied. Built once per snapshot; `choose` is pure.
 */
export function createPlacementSelection(sources: PlacementSources): {
  readonly choose: (facts: PodFacts) => ChosenPlacement | undefined;
  readonly empty: boolean;
} {
  const byWorkload = new Map(
    (sources.policies ?? []).map((policy) => [workloadKey(policy.namespace, policy.kind, policy.name), policy]),
  );
  const placements = sources.placements ?? [];
  const compiled = compilePlacements(placements);
  const byName = new Map(placements.map((placement) => [placement.name, placement]));
  const choose = (facts: PodFacts): ChosenPlacement | undefined => {
    const { workload } = facts;
    const matched = compiled.rules.length === 0 ? [] : matchingRules(compiled, facts).map((rule) => rule.name);
    const policy = byWorkload.get(workloadKey(workload.namespace, workload.kind, workload.name));
    if (policy !== undefined) {
      return {
        mode: policy.mode,
        spotPercent: policy.spotPercent ?? DEFAULT_SPOT_PERCENT,
        minOnDemand: policy.minOnDemand ?? DEFAULT_MIN_ON_DEMAND,
        source: `placement policy ${workloadKey(policy.namespace, policy.kind, policy.name)}`,
        alsoMatched: matched,
      };
    }
    const [first, ...others] = matched;
    if (first === undefined) return undefined;
    const placement = byName.get(first)!;
    return {
      mode: placement.mode,
      spotPercent: placement.spotPercent ?? DEFAULT_SPOT_PERCENT,
      minOnDemand: placement.minOnDemand ?? DEFAULT_MIN_ON_DEMAND,
      source: `PodPlacement "${first}"`,
      placement: first,
      alsoMatched: others,
    };
  };
  return { choose, empty: byWorkload.size === 0 && !placements.some((placement) => placement.enable) };
}

/**
 * The PodPlacements of a snapshot read from the store, each validated again: a store holding a placement the validator
 * rejects is corrupted, and nothing of it is served (as compileSnapshotRules does for rules).
 */
export function revalidatePlacements(placements: readonly NormalizedPlacement[]): readonly NormalizedPlacement[] {
  const revalidated = placements.map((placement) => {
    const verdict = validatePodPlacement(placementToResource(placement));
    if (verdict.valid) return verdict.placement;
    const issues = describeIssues(verdict.invalid, POD_PLACEMENT_KIND).join('; ');
    throw new StoreError(`snapshot PodPlacement "${verdict.invalid.name}" fails validation: ${issues}`, {
      context: { placement: verdict.invalid.name },
    });
  });
  if (new Set(revalidated.map((placement) => placement.name)).size !== revalidated.length)
    throw new StoreError('snapshot holds two PodPlacements of the same name');
  return revalidated;
}
