/** What the admission endpoint evaluates: the compiled customer rules and the managed steps, cached together. */
import type { RuleSnapshot } from '../api/index.ts';
import { compileSnapshotRules, type ManagedStep, type RuleSet } from '../engine/index.ts';
import type { StoreError } from '../errors/index.ts';
import { createPlacementStep, type CapacityFlavour, type PlacementPolicy } from '../placement/index.ts';
import type { PlacementStore, SnapshotStore } from '../store/index.ts';
import { createSnapshotCache, type SnapshotCache } from './snapshot-cache.ts';

/**
 * The value served per request: the rule set and the managed steps run after every customer rule. A plain
 * RuleSet is one without managed steps, so a cache compiling rules alone still serves the handler.
 */
interface AdmissionRules extends RuleSet {
  readonly managedSteps?: readonly ManagedStep[];
}

/** Options of the admission cache: both stores of one table, the refresh schedule and the capacity flavour. */
interface AdmissionRulesCacheOptions {
  readonly snapshots: Pick<SnapshotStore, 'readPointer' | 'readSnapshot'>;
  readonly placements: Pick<PlacementStore, 'readPlacementVersion' | 'readPlacements'>;
  readonly clusterId: string;
  readonly refreshSeconds: number;
  readonly maxStaleSeconds: number;
  /** Longest a request waits for a refresh, in milliseconds (createSnapshotCache's deadlineMs). */
  readonly deadlineMs?: number;
  readonly capacityFlavour: CapacityFlavour;
  /** Epoch milliseconds. */
  readonly clock?: () => number;
  readonly onRefreshFailure?: (error: StoreError) => void;
}

/** Compiles a snapshot (each rule validated again) and the placement policies for one flavour. Pure. */
function compileAdmissionRules(
  snapshot: RuleSnapshot,
  placements: readonly PlacementPolicy[],
  capacityFlavour: CapacityFlavour,
): AdmissionRules {
  // No step at all without policies: the hot path then does exactly what it did before placements existed.
  const managedSteps =
    placements.length === 0 ? [] : [createPlacementStep({ flavour: capacityFlavour, policies: placements })];
  return { ...compileSnapshotRules(snapshot.rules), managedSteps };
}

/**
 * The cache the admission handler reads: rule snapshot and placement policies refreshed together on one
 * schedule (two GetItems in parallel when nothing changed) and compiled once per change, never per request.
 */
function createAdmissionRulesCache(options: AdmissionRulesCacheOptions): SnapshotCache<AdmissionRules> {
  const { snapshots, capacityFlavour, ...schedule } = options;
  return createSnapshotCache({
    ...schedule,
    store: snapshots,
    compile: (snapshot, placements) => compileAdmissionRules(snapshot, placements, capacityFlavour),
  });
}

export { createAdmissionRulesCache };
export type { AdmissionRules, AdmissionRulesCacheOptions };
