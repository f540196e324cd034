/**
 * Where the Pod fits before and after the rules (lib/capacity), judged only for a Pod the review changes: the check
 * behind admission's warning and the rules annotated `if-unschedulable: skip`.
 */
import { Placement, type Capacity, type Verdict } from '../capacity/index.ts';
import type { PodFacts } from './pod.ts';
import { currentNodeAffinity, type SchedulingState } from './state.ts';

/** Where the Pod fitted as it came (before) and where it fits after the rules and managed steps (after). */
export interface FitPair {
  readonly before: Verdict;
  readonly after: Verdict;
}

/** The placement of the Pod as a state leaves it: the state's fields, the Pod's own where no step changed them. */
function placementOf(state: SchedulingState, facts: PodFacts): Placement {
  return Placement.of({
    nodeSelector: state.nodeSelector ?? facts.nodeSelector,
    nodeAffinity: currentNodeAffinity(state, facts),
    tolerations: state.tolerations ?? facts.tolerations,
  });
}

/** Judges states of one Pod against one capacity; the Pod as it came is judged once, on first need. */
export class FitJudge {
  private incoming: Verdict | undefined;

  constructor(
    private readonly capacity: Capacity,
    private readonly facts: PodFacts,
  ) {}

  /** Where the Pod as it came fits. */
  before(): Verdict {
    this.incoming ??= this.capacity.judge(placementOf({ warnings: [] }, this.facts));
    return this.incoming;
  }

  /** Where the Pod fits as this state leaves it. */
  judge(state: SchedulingState): Verdict {
    return this.capacity.judge(placementOf(state, this.facts));
  }

  /** True when going from one state to the next turns a Pod that fit (or was not judged) into one that fits nowhere. */
  strands(from: Verdict, to: SchedulingState): Verdict | undefined {
    const after = this.judge(to);
    return after.isNewlyUnschedulable(from) ? after : undefined;
  }
}
