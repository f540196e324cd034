/** Small object helpers for tests. */

/** A shallow copy of `object` without `key`: what `const { [key]: dropped, ...rest } = object` gives as rest, with no unused name. */
export function omitKey<T extends object, K extends keyof T>(object: T, key: K): Omit<T, K> {
  const copy: { -readonly [P in keyof T]?: T[P] } = { ...object };
  delete copy[key];
  return copy as Omit<T, K>;
}

/** A condition of a PodMutation's status as the sync writes it (a metav1.Condition). */
export interface StatusCondition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration?: number;
}
