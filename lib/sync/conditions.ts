/**
 * The conditions of a PodMutation's status, as metav1.Condition keeps them: one entry per type, lastTransitionTime
 * moved only when the status flips. A JSON merge patch replaces the whole array, so each write repeats every other
 * condition as it was. Pure.
 */
import { isJsonObject } from '../json/index.ts';

/** The part of a condition its writer decides; the rest (lastTransitionTime, observedGeneration) follows from it. */
interface ConditionFields {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

/** The conditions array of a status as listed (anything else reads as none). */
function conditionsOf(status: unknown): readonly unknown[] {
  const conditions = isJsonObject(status) ? status['conditions'] : undefined;
  return Array.isArray(conditions) ? (conditions as readonly unknown[]) : [];
}

/** The condition of this type in `conditions`, and where it is. */
function findCondition(
  conditions: readonly unknown[],
  type: string,
): { readonly index: number; readonly existing: Readonly<Record<string, unknown>> | undefined } {
  const index = conditions.findIndex((condition) => isJsonObject(condition) && condition['type'] === type);
  return { index, existing: index === -1 ? undefined : (conditions[index] as Readonly<Record<string, unknown>>) };
}

/** True when the condition already states `wanted` for `generation` (any generation when it is unknown). */
function conditionUpToDate(
  existing: Readonly<Record<string, unknown>> | undefined,
  wanted: ConditionFields,
  generation: number | undefined,
): boolean {
  return (
    existing !== undefined &&
    existing['status'] === wanted.status &&
    existing['reason'] === wanted.reason &&
    existing['message'] === wanted.message &&
    (generation === undefined || existing['observedGeneration'] === generation)
  );
}

/** When a condition is written: at `now` (ISO-8601), for the resource's `generation` (none: not recorded). */
interface Observed {
  readonly generation: number | undefined;
  readonly now: string;
}

/**
 * `conditions` with the condition of `type` set to `wanted` at `now`, in its place or appended; its
 * lastTransitionTime is kept while its status stays the same.
 */
function withCondition(
  conditions: readonly unknown[],
  type: string,
  wanted: ConditionFields,
  { generation, now }: Observed,
): readonly unknown[] {
  const { index, existing } = findCondition(conditions, type);
  const keptTransition = existing?.['status'] === wanted.status ? existing['lastTransitionTime'] : undefined;
  const condition = {
    type,
    ...wanted,
    lastTransitionTime: typeof keptTransition === 'string' ? keptTransition : now,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
  return index === -1 ? [...conditions, condition] : conditions.map((entry, at) => (at === index ? condition : entry));
}

/** `conditions` without the condition of `type`, or undefined when it has none. */
function withoutCondition(conditions: readonly unknown[], type: string): readonly unknown[] | undefined {
  const { index } = findCondition(conditions, type);
  return index === -1 ? undefined : conditions.filter((_, at) => at !== index);
}

export { conditionsOf, conditionUpToDate, findCondition, withCondition, withoutCondition };
export type { ConditionFields };
