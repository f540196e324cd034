/**
 * The report's change line: lib/scheduling's one semantic diff of the running Pod and the Pod a rollout would create,
 * on one line, bounded in length.
 */
import type { PodFacts } from '../engine/index.ts';
import {
  diffScheduling,
  sameScheduling,
  schedulingDiffSummary,
  schedulingFieldsOf,
  type SchedulingFields,
} from '../scheduling/index.ts';

/**
 * Longest change line, in characters; the rest is cut with "…".
 * @internal Exported for tests: the tests build a change at the limit.
 */
const MAX_CHANGE_CHARS = 240;

/**
 * lib/scheduling's one-line diff from `running` to `rollout`, at most 240 characters; "" exactly when the two
 * schedule alike as Kubernetes reads them (lib/scheduling's `sameScheduling`).
 */
function schedulingChangeLine(running: SchedulingFields, rollout: SchedulingFields): string {
  return boundedLine(schedulingDiffSummary(diffScheduling(running, rollout)));
}

/**
 * What a rollout would change on the running Pod, as lib/scheduling's one-line diff from the running Pod to the
 * rollout's (annotations only those `annotationKeys` names), at most 240 characters; undefined when the two schedule
 * alike as Kubernetes reads them (`sameScheduling`), whatever the order of tolerations, terms, requirements, values
 * and preferences.
 */
function schedulingChange(rollout: PodFacts, running: PodFacts, annotationKeys: readonly string[]): string | undefined {
  const keys = new Set(annotationKeys);
  const counts = (key: string): boolean => keys.has(key);
  const [before, after] = [schedulingFieldsOf(running.pod, counts), schedulingFieldsOf(rollout.pod, counts)];
  return sameScheduling(before, after) ? undefined : schedulingChangeLine(before, after);
}

/** A line cut to 240 characters, the cut marked with "…". */
function boundedLine(line: string): string {
  return line.length <= MAX_CHANGE_CHARS ? line : `${line.slice(0, MAX_CHANGE_CHARS - 1)}…`;
}

export { boundedLine, schedulingChange, schedulingChangeLine, MAX_CHANGE_CHARS };
