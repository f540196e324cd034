/**
 * A capacity whose judgments are remembered by placement: a report judges every Pod a rollout would recreate, and the
 * Pods of one template share their placement, so each distinct placement is judged once rather than once per Pod.
 */
import type { JudgeOptions, Placement, Verdict, VerdictKind } from '../capacity/index.ts';
import type { CapacityJudge } from '../engine/index.ts';

// Distinct placements remembered before the memory is emptied: about one per workload template, so a cluster's worth
// fits; beyond it the report stays correct and only judges again.
const MAX_REMEMBERED = 10_000;

/**
 * What decides a verdict: the nodeSelector, the required terms (each by its id, which names it as a set of
 * requirements) and the tolerations; preferred terms never filter.
 */
function keyOf(placement: Placement): string {
  return JSON.stringify([
    placement.nodeSelector,
    placement.required?.map((term) => term.id) ?? null,
    placement.tolerations,
  ]);
}

function remembered<T>(memory: Map<string, T>, key: string, compute: () => T): T {
  const known = memory.get(key);
  if (known !== undefined) return known;
  const value = compute();
  if (memory.size >= MAX_REMEMBERED) memory.clear();
  memory.set(key, value);
  return value;
}

/** The capacity's judge and kindOf, each remembered by the placement's key. */
class RememberedCapacity implements CapacityJudge {
  private readonly kinds = new Map<string, VerdictKind>();
  private readonly verdicts = new Map<string, Verdict>();

  constructor(private readonly capacity: CapacityJudge) {}

  kindOf(placement: Placement): VerdictKind {
    const key = keyOf(placement);
    return remembered(this.kinds, key, () => this.verdicts.get(key)?.kind ?? this.capacity.kindOf(placement));
  }

  judge(placement: Placement, options?: JudgeOptions): Verdict {
    if (options !== undefined) return this.capacity.judge(placement, options);
    return remembered(this.verdicts, keyOf(placement), () => this.capacity.judge(placement));
  }
}

export { RememberedCapacity };
