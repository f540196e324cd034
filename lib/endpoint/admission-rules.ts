/** What the admission endpoint evaluates: the compiled customer rules and the managed steps, cached together. */
import type { RuleSnapshot } from '../api/index.ts';
import { Capacity, type Placement, type Verdict, type VerdictKind } from '../capacity/index.ts';
import { compileSnapshotRules, type CapacityJudge, type ManagedStep, type RuleSet } from '../engine/index.ts';
import type { JsonObject } from '../json/index.ts';
import { MalformedInputError, type StoreError } from '../errors/index.ts';
import {
  createPlacementStep,
  revalidatePlacements,
  type CapacityFlavour,
  type PlacementPolicy,
  type PlacementStep,
} from '../placement/index.ts';
import type { PlacementStore, SnapshotStore } from '../store/index.ts';
import { createSnapshotCache, type SnapshotCache } from './snapshot-cache.ts';

/**
 * The value served per request: the rule set and the managed steps run after every customer rule. A plain
 * RuleSet is one without managed steps, so a cache compiling rules alone still serves the handler.
 */
interface AdmissionRules extends RuleSet {
  readonly managedSteps?: readonly ManagedStep[];
  /** The placement step among managedSteps, whose Diversity Pods the handler numbers before the review. */
  readonly placement?: PlacementStep;
  /** The cluster's capacity the sync published (unknown, contradictions only, when it published none). */
  readonly capacity?: PublishedCapacity;
}

/**
 * The snapshot's capacity, read on the first review that changes a Pod rather than with the rules: a cold start that
 * serves no changed Pod never pays for it. One that cannot be read (a form this code does not know, from a newer sync)
 * leaves Pods judged on their own contradictions rather than failing admissions: the capacity only adds warnings and
 * holds rules back, and the rules themselves were read and validated.
 */
class PublishedCapacity implements CapacityJudge {
  private read: Capacity | undefined;
  /** Why the published capacity could not be read, once a review tried to. */
  problem: string | undefined;

  constructor(private readonly published: JsonObject | undefined) {}

  judge(placement: Placement): Verdict {
    return this.capacity().judge(placement);
  }

  kindOf(placement: Placement): VerdictKind {
    return this.capacity().kindOf(placement);
  }

  private capacity(): Capacity {
    if (this.read !== undefined) return this.read;
    try {
      this.read =
        this.published === undefined ? Capacity.unknown() : Capacity.fromPublished(this.published, 'capacity');
    } catch (error) {
      if (!(error instanceof MalformedInputError)) throw error;
      this.read = Capacity.unknown();
      this.problem = error.message;
    }
    return this.read;
  }
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

/** Compiles a snapshot (each rule and PodPlacement validated again) and the placement policies for one flavour. Pure. */
function compileAdmissionRules(
  snapshot: RuleSnapshot,
  placements: readonly PlacementPolicy[],
  capacityFlavour: CapacityFlavour,
): AdmissionRules {
  const step = createPlacementStep({
    flavour: capacityFlavour,
    policies: placements,
    placements: revalidatePlacements(snapshot.placements ?? []),
  });
  // No step at all without a policy or an enabled PodPlacement: the hot path then does what it did before placements.
  const placement = step.empty ? undefined : step;
  return {
    ...compileSnapshotRules(snapshot.rules),
    managedSteps: placement === undefined ? [] : [placement],
    ...(placement === undefined ? {} : { placement }),
    capacity: new PublishedCapacity(snapshot.capacity),
  };
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
export type { AdmissionRules };
