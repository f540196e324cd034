/** A Pod built from a template, as admission would see it in this cluster: what the API server and earlier admissions add before the webhook. */
import type { Pod, PodFacts } from '../engine/index.ts';
import { DEFAULT_TOLERATION_KEYS, type Toleration } from '../scheduling/index.ts';

/** The plugin's own test: a toleration of this key (or of every key) for NoExecute (or every effect). */
function toleratesNoExecute(tolerations: readonly Toleration[], key: string): boolean {
  return tolerations.some(
    (toleration) =>
      (!toleration.key || toleration.key === key) && (!toleration.effect || toleration.effect === 'NoExecute'),
  );
}

/**
 * The candidate Pod with what the running Pod shows this cluster adds before the webhook: the default
 * not-ready/unreachable tolerations (the running Pod's own, so that the cluster's configured seconds are kept, and only
 * when it carries them). The capacity choice managed placement recorded is not copied into the Pod, which admission
 * never reads it from, but passed to the engine beside it (withRecordedCapacity).
 */
function asAdmitted(candidate: Pod, running: PodFacts): Pod {
  const tolerations = candidate.spec?.tolerations ?? [];
  const defaults = DEFAULT_TOLERATION_KEYS.flatMap((key) => {
    if (toleratesNoExecute(tolerations, key)) return [];
    const inherited = running.tolerations.find(
      (item) => item.key === key && item.operator === 'Exists' && item.effect === 'NoExecute',
    );
    return inherited === undefined ? [] : [inherited];
  });
  if (defaults.length === 0) return candidate;
  return { ...candidate, spec: { ...candidate.spec, tolerations: [...tolerations, ...defaults] } };
}

export { asAdmitted };
