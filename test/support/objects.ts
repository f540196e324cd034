/** Small object helpers for tests. */

/** A shallow copy of `object` without `key`: what `const { [key]: dropped, ...rest } = object` gives as rest, with no unused name. */
export function omitKey<T extends object, K extends keyof T>(object: T, key: K): Omit<T, K> {
  const copy: { -readonly [P in keyof T]?: T[P] } = { ...object };
  delete copy[key];
  return copy as Omit<T, K>;
}
