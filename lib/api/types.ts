/** The types of PodMutation resources and of the rules validated from them. */
import type { Issue, JsonObject } from '../json/index.ts';
import type { Enforcement, IfUnschedulable, PlacementMode } from './constants.ts';
import type { MutationAdd, MutationRemove, WorkloadSelector } from './schema.ts';

/**
 * A validated rule with defaults applied and only known fields kept (JSON-serialisable;
 * this is what a snapshot stores). Invariant: it passed `validatePodMutation`.
 */
export interface NormalizedRule {
  readonly name: string;
  readonly generation?: number;
  readonly enable: boolean;
  /** From ENFORCEMENT_ANNOTATION; `audit` rules are matched and recorded, never applied. */
  readonly enforcement: Enforcement;
  /** From IF_UNSCHEDULABLE_ANNOTATION, set only when `skip`: absent means `warn` (and older snapshots hold none). */
  readonly ifUnschedulable?: IfUnschedulable;
  readonly priority: number;
  readonly workloadSelector: WorkloadSelector;
  readonly mutationRemove: MutationRemove;
  readonly mutationAdd: MutationAdd;
}

/**
 * A validated PodPlacement with defaults applied (JSON-serialisable; what a snapshot stores). Diversity always carries
 * spotPercent and minOnDemand; the other modes carry neither.
 */
export interface NormalizedPlacement {
  readonly name: string;
  readonly generation?: number;
  readonly enable: boolean;
  readonly priority: number;
  readonly workloadSelector: WorkloadSelector;
  readonly mode: PlacementMode;
  readonly spotPercent?: number;
  readonly minOnDemand?: number;
}

/** A rule that failed validation: it is never applied, and its reasons are reported. */
export interface InvalidRule {
  readonly name: string;
  readonly generation?: number;
  readonly issues: readonly Issue[];
}

/** The validator's verdict on one resource. */
export type RuleVerdict =
  { readonly valid: true; readonly rule: NormalizedRule } | { readonly valid: false; readonly invalid: InvalidRule };

/** The validator's verdict on one PodPlacement. */
export type PlacementVerdict =
  | { readonly valid: true; readonly placement: NormalizedPlacement }
  | { readonly valid: false; readonly invalid: InvalidRule };

/**
 * The full rule set of one cluster as published to the store: valid rules normalized,
 * invalid ones with their reasons, and the provenance a reader needs to judge freshness.
 */
export interface RuleSnapshot {
  readonly rules: readonly NormalizedRule[];
  readonly invalid: readonly InvalidRule[];
  /** resourceVersion of the Kubernetes list the snapshot was built from ("" for files). */
  readonly resourceVersion: string;
  /** Hash of the canonical JSON of rules and invalid; equal content gives equal hashes. */
  readonly contentHash: string;
  /** Monotonically increasing per cluster; assigned by the store on publish. */
  readonly version: number;
  /** ISO-8601 time of the sync that produced the content. */
  readonly syncedAt: string;
  /**
   * The cluster's Nodes and NodePools in lib/capacity's published form (Capacity.published()), for admission to judge
   * where a changed Pod fits; absent when the sync published none (files, or a snapshot from before it did).
   */
  readonly capacity?: JsonObject;
  /**
   * The valid PodPlacements, normalized (lib/api/placement.ts), published within the same budget as the rules; absent
   * when there are none (and in snapshots from before PodPlacement existed).
   */
  readonly placements?: readonly NormalizedPlacement[];
}
