/** A Pod built from a template, as admission would see it in this cluster: what the API server and earlier admissions add before the webhook. */
import type { Pod, PodFacts } from '../engine/index.ts';
import { CAPACITY_ANNOTATION } from '../placement/index.ts';
import type { Toleration } from '../scheduling/index.ts';

// The taints the API server's DefaultTolerationSeconds admission plugin tolerates on every Pod, before webhooks run.
const DEFAULT_TOLERATION_KEYS = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'];

/** The plugin's own test: a toleration of this key (or of every key) for NoExecute (or every effect). */
function toleratesNoExecute(tolerations: readonly Toleration[], key: string): boolean {
  return tolerations.some((toleration) => (!toleration.key || toleration.key === key) && (!toleration.effect || toleration.effect === 'NoExecute'));
}

/**
 * The candidate Pod with what the running Pod shows this cluster adds before the webhook: the default
 * not-ready/unreachable tolerations (the running Pod's own, so that the cluster's configured seconds are kept, and only
 * when it carries them), and the capacity choice managed placement recorded, so that a Diversity Pod keeps its draw.
 */
function asAdmitted(candidate: Pod, running: PodFacts): Pod {
  const tolerations = candidate.spec?.tolerations ?? [];
  const defaults = DEFAULT_TOLERATION_KEYS.flatMap((key) => {
    if (toleratesNoExecute(tolerations, key)) return [];
    const inherited = running.tolerations.find((item) => item.key === key && item.operator === 'Exists' && item.effect === 'NoExecute');
    return inherited === undefined ? [] : [inherited];
  });
  const capacity = running.annotations[CAPACITY_ANNOTATION];
  if (defaults.length === 0 && capacity === undefined) return candidate;
  const metadata = capacity === undefined ? candidate.metadata : { ...candidate.metadata, annotations: { ...candidate.metadata?.annotations, [CAPACITY_ANNOTATION]: capacity } };
  const spec = defaults.length === 0 ? candidate.spec : { ...candidate.spec, tolerations: [...tolerations, ...defaults] };
  return { ...candidate, ...(metadata === undefined ? {} : { metadata }), ...(spec === undefined ? {} : { spec }) };
}

export { asAdmitted };
