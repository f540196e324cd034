/** One RFC 6902 JSON Patch operation as the engine emits them. */
interface JsonPatchOperation {
  readonly op: 'add' | 'remove' | 'replace';
  readonly path: string;
  readonly value?: unknown;
}

/**
 * Escapes one object key as an RFC 6901 reference token ("~" as "~0", "/" as "~1").
 * @internal Exported for tests: tested on its own against RFC 6901's escapes.
 */
function escapePointerToken(key: string): string {
  if (!key.includes('~') && !key.includes('/')) return key;
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Structural equality of JSON values; shared subtrees compare by identity first. */
function jsonEqual(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (Array.isArray(left)) {
    return (
      Array.isArray(right) && left.length === right.length && left.every((item, index) => jsonEqual(item, right[index]))
    );
  }
  if (isPlainObject(left) && isPlainObject(right)) {
    const keys = Object.keys(left);
    if (keys.length !== Object.keys(right).length) return false;
    return keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]));
  }
  return false;
}

/** A diff being written: the operations so far, and the paths replaced whole. */
interface Diff {
  readonly operations: JsonPatchOperation[];
  readonly atomic: ReadonlySet<string>;
}

function diffInto(diff: Diff, path: string, before: unknown, after: unknown): void {
  const { operations, atomic } = diff;
  if (before === after) return;
  // Arrays and the listed subtrees are replaced whole: index operations are fragile against concurrent edits.
  if (!isPlainObject(before) || !isPlainObject(after) || atomic.has(path)) {
    if (!jsonEqual(before, after)) operations.push({ op: 'replace', path, value: after });
    return;
  }
  for (const key in before) {
    if (Object.hasOwn(before, key) && !Object.hasOwn(after, key))
      operations.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
  }
  for (const key in after) {
    if (!Object.hasOwn(after, key)) continue;
    const value = after[key];
    // Unchanged subtrees are shared with the original, so identity settles most members without building a path.
    if (before[key] === value && value !== undefined) continue;
    const childPath = `${path}/${escapePointerToken(key)}`;
    // A missing parent is created whole by one add, never written into.
    if (!Object.hasOwn(before, key)) operations.push({ op: 'add', path: childPath, value });
    else diffInto(diff, childPath, before[key], value);
  }
}

/**
 * The JSON Patch that turns `before` into `after`: object members are added, removed or recursed
 * into; arrays and the `atomic` paths (JSON pointers) are replaced whole; missing parents are added
 * whole. Applies with a strict RFC 6902 implementation to `before` exactly. Pure.
 */
function diffJson(
  before: unknown,
  after: unknown,
  atomic: ReadonlySet<string> = new Set(),
): readonly JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  if (isPlainObject(before) && isPlainObject(after)) diffInto({ operations, atomic }, '', before, after);
  else if (!jsonEqual(before, after)) operations.push({ op: 'replace', path: '', value: after });
  return operations;
}

export { escapePointerToken, jsonEqual, diffJson };
export type { JsonPatchOperation };
