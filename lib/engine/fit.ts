/**
 * Where the Pod fits before and after the rules (lib/capacity), judged only for a Pod the review changes: the check
 * behind admission's warning and the rules annotated `if-unschedulable: skip`. The hot path asks only for kinds (the
 * first fitting Node shape or NodePool ends the search); a verdict with its counts and words is computed when read.
 */
import { Placement, type Capacity, type Verdict, type VerdictKind } from '../capacity/index.ts';
import type { PodFacts } from './pod.ts';
import { currentNodeAffinity, INITIAL_STATE, type SchedulingState } from './state.ts';

/** What the engine asks of a capacity: a Capacity, or one read on first use (the endpoint's published capacity). */
export type CapacityJudge = Pick<Capacity, 'judge' | 'kindOf'>;

/** Where the Pod fitted as it came (before) and where it fits after the rules and managed steps (after). */
export interface FitPair {
  readonly before: Verdict;
  readonly after: Verdict;
  /** True when the Pod fitted (or was not judged) before and fits nowhere after: after.isNewlyUnschedulable(before). */
  readonly stranded: boolean;
  /** after.kind, found without counting or words (Capacity.kindOf). */
  readonly afterKind: VerdictKind;
}

/** The placement of the Pod as a state leaves it: the state's fields, the Pod's own where no step changed them. */
function placementOf(state: SchedulingState, facts: PodFacts): Placement {
  return Placement.of({
    nodeSelector: state.nodeSelector ?? facts.nodeSelector,
    nodeAffinity: currentNodeAffinity(state, facts),
    tolerations: state.tolerations ?? facts.tolerations,
  });
}

/** One state of the Pod, judged on demand: its kind cheaply, its verdict in full; each at most once. */
export class Judged {
  private kindMemo: VerdictKind | undefined;
  private verdictMemo: Verdict | undefined;

  constructor(
    private readonly capacity: CapacityJudge,
    private readonly placement: Placement,
  ) {}

  get kind(): VerdictKind {
    this.kindMemo ??= this.verdictMemo?.kind ?? this.capacity.kindOf(this.placement);
    return this.kindMemo;
  }

  get verdict(): Verdict {
    this.verdictMemo ??= this.capacity.judge(this.placement);
    return this.verdictMemo;
  }

  /** True when this state fits nowhere and `from` did not: after.isNewlyUnschedulable(before), on kinds. */
  strands(from: Judged): boolean {
    return this.kind === 'nowhere' && from.kind !== 'nowhere';
  }
}

/** Judges states of one Pod against one capacity; the Pod as it came is judged once, on first need. */
export class FitJudge {
  private incoming: Judged | undefined;

  constructor(
    private readonly capacity: CapacityJudge,
    private readonly facts: PodFacts,
  ) {}

  /** The Pod as it came. */
  before(): Judged {
    this.incoming ??= this.judge(INITIAL_STATE);
    return this.incoming;
  }

  /** The Pod as this state leaves it. */
  judge(state: SchedulingState): Judged {
    return new Judged(this.capacity, placementOf(state, this.facts));
  }

  /** Where the Pod fitted and fits: the verdicts computed when read, `stranded` from the kinds. */
  pair(state: SchedulingState): FitPair {
    return new JudgedPair(this.before(), this.judge(state));
  }
}

// A class rather than an object literal with getters: V8 builds those slowly, and this is on the hot path.
class JudgedPair implements FitPair {
  readonly stranded: boolean;
  readonly afterKind: VerdictKind;

  constructor(
    private readonly from: Judged,
    private readonly to: Judged,
  ) {
    this.stranded = to.strands(from);
    this.afterKind = to.kind;
  }

  get before(): Verdict {
    return this.from.verdict;
  }

  get after(): Verdict {
    return this.to.verdict;
  }
}
