/**
 * A scheduling diff on one line (report's change, the sync's progress, rollout's reason, test's summary):
 * `heading: -before +after` per changed field, separated by "; ": the fields that schedule in the order of a Pod,
 * then the annotations, which schedule nothing, so that a line its callers cut at their bound keeps the scheduling.
 * Each entry prints with diff-text.ts's text, a term or preferred term in braces; entries are sorted, so that the
 * line never depends on the order of either Pod's lists. Only what Kubernetes reads as changed is named: no
 * reorderings, no repeats.
 */
import type { KeyChange, SchedulingDiff } from './diff.ts';
import {
  FIELD_HEADINGS,
  annotationText,
  nodeSelectorText,
  preferenceText,
  spreadText,
  termSetText,
  tolerationText,
} from './diff-text.ts';

function keyParts(changes: readonly KeyChange[], text: (key: string, value: string) => string): string[] {
  return changes.flatMap(({ key, before, after }) => [
    ...(before === undefined ? [] : [`-${text(key, before)}`]),
    ...(after === undefined ? [] : [`+${text(key, after)}`]),
  ]);
}

function entryParts<T>(
  changes: { readonly lost: readonly T[]; readonly gained: readonly T[] },
  text: (entry: T) => string,
) {
  const signed = (sign: '-' | '+', entries: readonly T[]) => entries.map((entry) => `${sign}${text(entry)}`).sort();
  return [...signed('-', changes.lost), ...signed('+', changes.gained)];
}

/** The diff on one line, "" when nothing changed as Kubernetes reads it. Pure; unbounded (callers cut it). */
function schedulingDiffSummary(diff: SchedulingDiff): string {
  const fields: (readonly [string, string[]])[] = [
    [FIELD_HEADINGS.nodeSelector, keyParts(diff.nodeSelector, nodeSelectorText)],
    [FIELD_HEADINGS.tolerations, entryParts(diff.tolerations, tolerationText)],
    [FIELD_HEADINGS.required, entryParts(diff.required, (term) => `{${termSetText(term)}}`)],
    [FIELD_HEADINGS.preferred, entryParts(diff.preferred, (entry) => `{${preferenceText(entry, termSetText)}}`)],
    [FIELD_HEADINGS.topologySpreadConstraints, entryParts(diff.topologySpreadConstraints, spreadText)],
    [FIELD_HEADINGS.annotations, keyParts(diff.annotations, annotationText)],
  ];
  return fields
    .filter(([, parts]) => parts.length > 0)
    .map(([heading, parts]) => `${heading}: ${parts.join(' ')}`)
    .join('; ');
}

export { schedulingDiffSummary };
