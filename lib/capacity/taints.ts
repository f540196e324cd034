/** Taints and whether a Pod's tolerations tolerate them, as kube-scheduler and Karpenter decide it. */
import { MalformedInputError } from '../errors/index.ts';
import type { Toleration } from '../scheduling/index.ts';
import { objectList, optionalString, previewInput } from '../json/index.ts';

/** A core/v1 Taint as a Node or a NodePool's template carries it (timeAdded is not read). */
interface Taint {
  readonly key: string;
  /** "" when absent. */
  readonly value: string;
  readonly effect: TaintEffect;
}

/**
 * The effects the API server accepts on a Node's taint (and Karpenter's CRD on a NodePool's).
 * @internal Exported for tests: the tests enumerate the effects in their table.
 */
type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

const TAINT_EFFECTS: readonly TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

// k8s.io/apimachinery pkg/api/validate/content/decimal_int.go, IsDecimalInteger: "0", or an optional "-" and a
// non-zero digit first; then strconv.ParseInt(s, 10, 64).
const DECIMAL_INTEGER = /^(0|-?[1-9]\d*)$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function decimalInteger(value: string): bigint | undefined {
  if (!DECIMAL_INTEGER.test(value)) return undefined;
  const parsed = BigInt(value);
  return parsed < INT64_MIN || parsed > INT64_MAX ? undefined : parsed;
}

/**
 * Toleration.ToleratesTaint (k8s.io/api core/v1 toleration.go): an empty effect matches every effect, an empty key
 * every key (with Exists), an empty operator means Equal; Lt and Gt compare the values as int64 (the
 * TaintTolerationComparisonOperators feature: the API server admits them only where it is on, and Karpenter always
 * compares them); any other operator tolerates nothing.
 * @internal Exported for tests: tested on its own, table-driven from kube-scheduler's TaintToleration cases.
 */
function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  const effect = toleration.effect ?? '';
  if (effect !== '' && effect !== taint.effect) return false;
  const key = toleration.key ?? '';
  if (key !== '' && key !== taint.key) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === taint.value;
    case 'Exists':
      return true;
    case 'Lt':
    case 'Gt': {
      const bound = decimalInteger(toleration.value ?? '');
      const value = decimalInteger(taint.value);
      if (bound === undefined || value === undefined) return false;
      return toleration.operator === 'Lt' ? value < bound : value > bound;
    }
    default:
      return false;
  }
}

/** True when some toleration tolerates the taint (component-helpers scheduling/corev1 TolerationsTolerateTaint). */
function tolerated(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((toleration) => toleratesTaint(toleration, taint));
}

/**
 * The taints a Pod must tolerate and does not: those with effect NoSchedule or NoExecute, as kube-scheduler's
 * TaintToleration filter reads them (pkg/scheduler/framework/plugins/tainttoleration, DoNotScheduleTaintsFilterFunc).
 * PreferNoSchedule only scores. Karpenter reads a NodePool's taints the same way: its preference relaxation tolerates
 * every PreferNoSchedule taint before it gives up on a Pod (pkg/controllers/provisioning/scheduling/preferences.go).
 */
function untoleratedTaints(taints: readonly Taint[], tolerations: readonly Toleration[]): readonly Taint[] {
  return taints.filter((taint) => taint.effect !== 'PreferNoSchedule' && !tolerated(tolerations, taint));
}

/** True when some taint the Pod must tolerate it does not (untoleratedTaints, without the list). */
function hasUntoleratedTaint(taints: readonly Taint[], tolerations: readonly Toleration[]): boolean {
  for (const taint of taints) if (taint.effect !== 'PreferNoSchedule' && !tolerated(tolerations, taint)) return true;
  return false;
}

/** A taint as kubectl and the scheduler's messages write it: key=value:Effect (key:Effect without a value). */
function taintText(taint: Taint): string {
  return `${taint.key}${taint.value === '' ? '' : `=${taint.value}`}:${taint.effect}`;
}

/** A string at `path` that must be present and non-empty, else a MalformedInputError naming the path. */
function requiredString(value: unknown, path: string): string {
  const text = optionalString(value, path);
  if (text === '')
    throw new MalformedInputError(`${path}: required, and missing or empty`, { context: { field: path } });
  return text;
}

/** The taints at `path` (a Node's spec.taints, a NodePool's template taints, their published form), each checked. */
function readTaints(value: unknown, path: string): Taint[] {
  return objectList(value, path).map((taint, index) => {
    const at = `${path}[${index}]`;
    const effect = requiredString(taint.effect, `${at}.effect`);
    if (!(TAINT_EFFECTS as readonly string[]).includes(effect))
      throw new MalformedInputError(
        `${at}.effect: expected one of ${TAINT_EFFECTS.join(', ')}, got ${previewInput(effect)}`,
        { context: { field: `${at}.effect` } },
      );
    return {
      key: requiredString(taint.key, `${at}.key`),
      value: optionalString(taint.value, `${at}.value`),
      effect: effect as TaintEffect,
    };
  });
}

export { readTaints, requiredString, toleratesTaint, tolerated, untoleratedTaints, hasUntoleratedTaint, taintText };
export type { Taint, TaintEffect };
