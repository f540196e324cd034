/**
 * The report's change line: lib/scheduling's one semantic diff of the running Pod and the Pod a rollout would create,
 * on one line, bounded in length.
 */
import type { PodFacts } from '../engine/index.ts';
import { diffScheduling, schedulingDiffSummary, type SchedulingFields } from '../scheduling/index.ts';

/** Longest change line, in characters; the rest is cut with "…". */
const MAX_CHANGE_CHARS = 240;

/** The scheduling fields of a Pod the engine read, with only the annotations `annotationKeys` names. */
function fieldsOf(facts: PodFacts, annotationKeys: readonly string[]): SchedulingFields {
  const annotations: Record<string, string> = {};
  for (const key of annotationKeys)
    if (Object.hasOwn(facts.annotations, key)) annotations[key] = facts.annotations[key]!;
  return {
    annotations,
    nodeSelector: facts.nodeSelector,
    tolerations: facts.tolerations,
    nodeAffinity: facts.pod.spec?.affinity?.nodeAffinity,
    topologySpreadConstraints: facts.topologySpreadConstraints,
  };
}

/**
 * What a rollout would change on the running Pod, as lib/scheduling's one-line diff from the running Pod to the
 * rollout's (annotations only those `annotationKeys` names), at most 240 characters; "" when the scheduling is the
 * same as Kubernetes reads it, whatever the order of tolerations, terms, requirements, values and preferences.
 */
function schedulingChange(rollout: PodFacts, running: PodFacts, annotationKeys: readonly string[]): string {
  return boundedLine(
    schedulingDiffSummary(diffScheduling(fieldsOf(running, annotationKeys), fieldsOf(rollout, annotationKeys))),
  );
}

/** A line cut to 240 characters, the cut marked with "…". */
function boundedLine(line: string): string {
  return line.length <= MAX_CHANGE_CHARS ? line : `${line.slice(0, MAX_CHANGE_CHARS - 1)}…`;
}

export { boundedLine, schedulingChange, MAX_CHANGE_CHARS };
