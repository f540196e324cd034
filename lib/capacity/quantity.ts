/**
 * Kubernetes resource quantities ("1000", "250m", "64Gi", "1e3"), as k8s.io/apimachinery pkg/api/resource/quantity.go
 * parses them, for comparing a NodePool's usage with its limits.
 */

const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

// The binary suffixes are powers of 2; the decimal ones powers of 10 (quantity.go's suffixer).
const BINARY: Readonly<Record<string, bigint>> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
// Exponents beyond this are refused rather than expanded into huge integers (quantity.go caps scale the same way).
const MAX_EXPONENT = 1000;

/** A quantity as an exact fraction: numerator over denominator (positive). */
interface Fraction {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

/** The quantity's exact value, or undefined when the text is no quantity. */
function parseQuantity(text: string): Fraction | undefined {
  const match = QUANTITY.exec(text.trim());
  if (match === null) return undefined;
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match;
  if (whole === '' && fraction === '') return undefined;
  let numerator = BigInt(`${whole}${fraction}` || '0');
  let denominator = 10n ** BigInt(fraction.length);
  if (sign === '-') numerator = -numerator;
  const binary = BINARY[suffix];
  if (binary !== undefined) numerator *= 2n ** binary;
  else {
    const exponent = DECIMAL[suffix] ?? Number(suffix.slice(1));
    if (Math.abs(exponent) > MAX_EXPONENT) return undefined;
    if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
    else denominator *= 10n ** BigInt(-exponent);
  }
  return { numerator, denominator };
}

/** True when the text is a quantity Kubernetes reads. */
function isQuantity(text: string): boolean {
  return parseQuantity(text) !== undefined;
}

/** -1, 0 or 1 as `left` is less than, equal to or more than `right`; a text that is no quantity compares as less. */
function compareQuantities(left: string, right: string): number {
  const a = parseQuantity(left);
  const b = parseQuantity(right);
  if (a === undefined || b === undefined) return -1;
  const difference = a.numerator * b.denominator - b.numerator * a.denominator;
  return difference === 0n ? 0 : difference > 0n ? 1 : -1;
}

export { isQuantity, compareQuantities };
