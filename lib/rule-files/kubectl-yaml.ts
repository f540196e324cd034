/**
 * YAML read as kubectl reads it: sigs.k8s.io/yaml, which resolves plain scalars with go.yaml.in/yaml/v2 (YAML 1.1:
 * `on`, `yes`, `y` are true, `0777` is octal, `1_000` is 1000) and then turns mapping keys into JSON strings. A rule
 * file must mean to podmutation what it means to the cluster it is applied to; test/fixtures/yaml/kubectl-scalars.json
 * holds kubectl's own answers (test/yaml-scalars/ generates them).
 */
import { isScalar, visit, type Document, type ParseOptions, type ScalarTag, type SchemaOptions } from 'yaml';

const INT64_MAX = 2n ** 63n - 1n;

// go.yaml.in/yaml/v2 resolve.go: the words it resolves before looking at a scalar's first character.
const NULL_TAG: ScalarTag = {
  tag: 'tag:yaml.org,2002:null',
  default: true,
  test: /^(?:~|null|Null|NULL)?$/,
  resolve: () => null,
};
const BOOL_TAG: ScalarTag = {
  tag: 'tag:yaml.org,2002:bool',
  default: true,
  test: /^(?:y|Y|yes|Yes|YES|on|On|ON|true|True|TRUE|n|N|no|No|NO|off|Off|OFF|false|False|FALSE)$/,
  resolve: (text) => /^(?:y|Y|yes|Yes|YES|on|On|ON|true|True|TRUE)$/.test(text),
};
const SPECIAL_FLOAT_TAG: ScalarTag = {
  tag: 'tag:yaml.org,2002:float',
  default: true,
  test: /^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  resolve: (text) => (/nan/i.test(text) ? Number.NaN : text.startsWith('-') ? -Infinity : Infinity),
};

// resolve.go's yamlStyleFloat: the decimal forms it reads as a float once an integer read has failed.
const YAML_STYLE_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
// What Go's strconv.ParseInt and ParseUint accept with base 0 (a sign, then 0b, 0o, 0x, a leading 0 for octal, or decimal).
const GO_INTEGER = /^([-+]?)(0[bB][01]+|0[oO]?[0-7]+|0[xX][0-9a-fA-F]+|[1-9][0-9]*|0)$/;

/** A plain scalar that starts as a number does, read as resolve.go reads it: an integer, a float, or else the text. */
function goNumber(text: string): unknown {
  const plain = text.replaceAll('_', '');
  const integer = GO_INTEGER.exec(plain);
  if (integer !== null) {
    const [, sign, digits] = integer as unknown as [string, string, string];
    // BigInt reads 0b, 0o and 0x; Go's leading-0 octal is written 0o for it.
    const magnitude = BigInt(/^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits);
    // Beyond 64 bits kubectl rounds it to a float, which every int64 field refuses as well: the digits are kept, so that
    // the refusal names the number as written (lib/api's int64 range) rather than a rounded one.
    return sign === '-' ? -magnitude : magnitude;
  }
  if (YAML_STYLE_FLOAT.test(plain)) {
    const value = Number(plain);
    // ParseFloat fails out of range (1e400): the scalar stays a string.
    return Number.isFinite(value) ? value : text;
  }
  return text;
}
const NUMBER_TAG: ScalarTag = {
  tag: 'tag:yaml.org,2002:int',
  default: true,
  test: /^[-+.0-9]/,
  resolve: goNumber,
};

/** The parse options of kubectl's scalars: its own plain-scalar resolution, exact integers, `<<` merge keys. */
export const KUBECTL_YAML_OPTIONS: ParseOptions & SchemaOptions = {
  schema: 'failsafe',
  customTags: [NULL_TAG, BOOL_TAG, SPECIAL_FLOAT_TAG, NUMBER_TAG],
  intAsBigInt: true,
  merge: true,
};

/** A float key as sigs.k8s.io/yaml writes it: strconv.FormatFloat(f, 'g', -1, 32), and .inf, -.inf, .nan. */
function floatKey(value: number): string {
  if (Number.isNaN(value)) return '.nan';
  if (!Number.isFinite(value)) return value > 0 ? '.inf' : '-.inf';
  const single = Math.fround(value);
  let digits = '';
  for (let precision = 1; precision <= 9; precision += 1) {
    digits = single.toPrecision(precision);
    if (Math.fround(Number(digits)) === single) break;
  }
  const [mantissa = '', exponentText] = Number(digits).toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(Number(digits));
}

/**
 * Turns a document's non-string mapping keys into the strings sigs.k8s.io/yaml makes of them, and reports what it
 * refuses (a null or uint64 key, an infinite or NaN value, which JSON cannot hold). Returns the first problem, if any.
 */
export function asKubectlReadsIt(document: Document): string | undefined {
  let problem: string | undefined;
  visit(document, {
    Pair(_, pair) {
      if (!isScalar(pair.key)) return;
      const key: unknown = pair.key.value;
      if (typeof key === 'string') return;
      if (key === null) problem ??= 'a mapping key is null, which kubectl cannot read as a JSON key';
      else if (typeof key === 'bigint' && key > INT64_MAX)
        problem ??= `mapping key ${key} is beyond int64, which kubectl cannot read as a JSON key`;
      else if (typeof key === 'number') pair.key.value = floatKey(key);
      else if (typeof key === 'bigint' || typeof key === 'boolean') pair.key.value = String(key);
    },
    Scalar(key, node) {
      if (key === 'key' || typeof node.value !== 'number' || Number.isFinite(node.value)) return;
      problem ??= `${node.source ?? String(node.value)} is not a JSON number (infinite or NaN), as kubectl reports it`;
    },
  });
  return problem;
}
