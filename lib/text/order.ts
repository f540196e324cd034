/** The one order of text the product sorts by. */

/**
 * Orders two strings by UTF-16 code unit, as `Array.prototype.sort()` does without a comparator: never by
 * `localeCompare`, whose order depends on the runtime's locale data (ECMA-262, Array.prototype.sort's
 * SortCompare), so that every machine lists, pairs and applies in the same order.
 */
function compareCodeUnits(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

export { compareCodeUnits };
