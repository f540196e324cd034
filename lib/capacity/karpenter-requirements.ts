/**
 * Karpenter's requirement algebra, as sigs.k8s.io/karpenter pkg/scheduling/requirement.go and requirements.go define
 * it: a requirement is a set of allowed values (or its complement) with optional integer bounds, requirements on one
 * key intersect, and Compatible decides whether a Pod's requirements can be met by a NodeClaim template's.
 */
import { NORMALIZED_LABELS } from './labels.ts';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const DIGITS = /^[+-]?\d+$/;

/** Go's strconv.Atoi on a 64-bit machine: the value, or undefined for a syntax or range error. */
function atoi(text: string): bigint | undefined {
  if (!DIGITS.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

/**
 * The int Karpenter takes a Gt, Lt, Gte or Lte operand as: it ignores Atoi's error (the value is "prevalidated"), and
 * Atoi then returns 0 for a syntax error and the clamped value for a range error.
 */
function operand(text: string | undefined): bigint {
  const value = atoi(text ?? '');
  if (value !== undefined) return value;
  if (text === undefined || !DIGITS.test(text)) return 0n;
  return text.startsWith('-') ? INT64_MIN : INT64_MAX;
}

function withinBounds(value: string, gte: bigint | undefined, lte: bigint | undefined): boolean {
  if (gte === undefined && lte === undefined) return true;
  const parsed = atoi(value);
  if (parsed === undefined) return false;
  return (gte === undefined || parsed >= gte) && (lte === undefined || parsed <= lte);
}

const maxBound = (a: bigint | undefined, b: bigint | undefined) =>
  a === undefined ? b : b === undefined || a > b ? a : b;
const minBound = (a: bigint | undefined, b: bigint | undefined) =>
  a === undefined ? b : b === undefined || a < b ? a : b;

/** The identity of a requirement as written: a memo's key. */
function requirementKey(key: string, operator: string, values: readonly string[]): string {
  return `${key}\u0000${operator}\u0000${values.join('\u0000')}`;
}

/**
 * A memo of a pure function of a string: the Pods of one workload repeat the same requirements, and reading one (its
 * sets, its bounds) costs more than looking it up. Cleared whole when it holds `limit` entries, so input cannot grow it.
 */
function memo<T>(limit: number): (key: string, compute: () => T) => T {
  const entries = new Map<string, T>();
  return (key, compute) => {
    if (entries.has(key)) return entries.get(key)!;
    if (entries.size >= limit) entries.clear();
    const value = compute();
    entries.set(key, value);
    return value;
  };
}

const requirements = memo<KarpenterRequirement>(4096);

/** The operator a requirement reads as once its operands are folded in (Requirement.Operator). */
type KarpenterOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

/** A requirement's fields: its key, its values or their complement, and its inclusive bounds (none when absent). */
interface RequirementFields {
  readonly key: string;
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  readonly gte?: bigint | undefined;
  readonly lte?: bigint | undefined;
}

/** One key's requirement: allowed values, or all values but the listed ones (complement), within inclusive bounds. */
class KarpenterRequirement {
  readonly key: string;
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  readonly gte: bigint | undefined;
  readonly lte: bigint | undefined;

  private constructor({ key, complement, values, gte, lte }: RequirementFields) {
    this.key = key;
    this.complement = complement;
    this.values = values;
    this.gte = gte;
    this.lte = lte;
  }

  /**
   * NewRequirementWithFlexibility: the key normalised; In and NotIn keep their values, Exists is the empty
   * complement, DoesNotExist the empty set; Gt N becomes ">= N+1" (Gt of the largest int is DoesNotExist), Lt N
   * becomes "<= N-1", Gte and Lte (a NodePool's) are kept. An operator it does not know reads as Exists.
   */
  static of(key: string, operator: string, values: readonly string[] = []): KarpenterRequirement {
    return requirements(requirementKey(key, operator, values), () => KarpenterRequirement.build(key, operator, values));
  }

  private static build(key: string, operator: string, values: readonly string[]): KarpenterRequirement {
    const normalized = NORMALIZED_LABELS.get(key) ?? key;
    switch (operator) {
      case 'In':
        return new KarpenterRequirement({ key: normalized, complement: false, values: new Set(values) });
      case 'NotIn':
        return new KarpenterRequirement({ key: normalized, complement: true, values: new Set(values) });
      case 'DoesNotExist':
        return new KarpenterRequirement({ key: normalized, complement: false, values: new Set() });
      case 'Gt': {
        const value = operand(values[0]);
        if (value === INT64_MAX) return KarpenterRequirement.of(normalized, 'DoesNotExist');
        return new KarpenterRequirement({ key: normalized, complement: true, values: new Set(), gte: value + 1n });
      }
      case 'Lt': {
        const value = operand(values[0]);
        // Go's int wraps: Lt of the smallest int becomes "<= the largest".
        return new KarpenterRequirement({
          key: normalized,
          complement: true,
          values: new Set(),
          lte: value === INT64_MIN ? INT64_MAX : value - 1n,
        });
      }
      case 'Gte':
        return new KarpenterRequirement({
          key: normalized,
          complement: true,
          values: new Set(),
          gte: operand(values[0]),
        });
      case 'Lte':
        return new KarpenterRequirement({
          key: normalized,
          complement: true,
          values: new Set(),
          lte: operand(values[0]),
        });
      default:
        return new KarpenterRequirement({ key: normalized, complement: true, values: new Set() });
    }
  }

  /** The requirement both this and `other` impose (Requirement.Intersection). */
  intersection(other: KarpenterRequirement): KarpenterRequirement {
    const complement = this.complement && other.complement;
    let gte = maxBound(this.gte, other.gte);
    let lte = minBound(this.lte, other.lte);
    if (gte !== undefined && lte !== undefined && gte > lte) return KarpenterRequirement.of(this.key, 'DoesNotExist');
    let values: Set<string>;
    if (this.complement && other.complement) values = new Set([...this.values, ...other.values]);
    else if (this.complement) values = new Set([...other.values].filter((value) => !this.values.has(value)));
    else if (other.complement) values = new Set([...this.values].filter((value) => !other.values.has(value)));
    else values = new Set([...this.values].filter((value) => other.values.has(value)));
    for (const value of values) if (!withinBounds(value, gte, lte)) values.delete(value);
    if (!complement) {
      gte = undefined;
      lte = undefined;
    }
    return new KarpenterRequirement({ key: this.key, complement, values, gte, lte });
  }

  /** True when some value satisfies both requirements (Requirement.HasIntersection). */
  hasIntersection(other: KarpenterRequirement): boolean {
    const gte = maxBound(this.gte, other.gte);
    const lte = minBound(this.lte, other.lte);
    if (gte !== undefined && lte !== undefined && gte > lte) return false;
    if (this.complement && other.complement) return true;
    const [finite, against] = this.complement ? [other, this] : [this, other];
    for (const value of finite.values) {
      const allowed = against.complement ? !against.values.has(value) : against.values.has(value);
      if (allowed && withinBounds(value, gte, lte)) return true;
    }
    return false;
  }

  /** Requirement.Operator: a complement with values is NotIn, without is Exists (bounds included); else In or DoesNotExist. */
  operator(): KarpenterOperator {
    if (this.complement) return this.values.size > 0 ? 'NotIn' : 'Exists';
    return this.values.size > 0 ? 'In' : 'DoesNotExist';
  }

  /** As Karpenter's messages write it (Requirement.String): "key In [a b]", "key Exists >=4". */
  text(): string {
    const operator = this.operator();
    let text =
      operator === 'Exists' || operator === 'DoesNotExist'
        ? `${this.key} ${operator}`
        : `${this.key} ${operator} [${[...this.values].sort().join(' ')}]`;
    if (this.gte !== undefined) text += ` >=${this.gte}`;
    if (this.lte !== undefined) text += ` <=${this.lte}`;
    return text;
  }
}

/** Requirements by key, those on one key intersected (Requirements). Immutable once built. */
class KarpenterRequirements {
  private constructor(private readonly byKey: ReadonlyMap<string, KarpenterRequirement>) {}

  /** The requirements of the list, those on one key intersected in order (NewRequirements and Add). */
  static of(requirements: Iterable<KarpenterRequirement>): KarpenterRequirements {
    const byKey = new Map<string, KarpenterRequirement>();
    for (const requirement of requirements) {
      const existing = byKey.get(requirement.key);
      byKey.set(requirement.key, existing === undefined ? requirement : requirement.intersection(existing));
    }
    return new KarpenterRequirements(byKey);
  }

  /** Each label as an In requirement of its one value (NewLabelRequirements). */
  static ofLabels(labels: Readonly<Record<string, string>>): KarpenterRequirement[] {
    return Object.entries(labels).map(([key, value]) => KarpenterRequirement.of(key, 'In', [value]));
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** The requirement on `key`; an undefined key allows any value (Exists), as Requirements.Get says. */
  get(key: string): KarpenterRequirement {
    return this.byKey.get(key) ?? KarpenterRequirement.of(key, 'Exists');
  }

  keys(): IterableIterator<string> {
    return this.byKey.keys();
  }

  /**
   * True when the Pod's requirements (`incoming`) can be met by these, as Requirements.Compatible decides: compatible()
   * without its messages, walking the Pod's few keys (Karpenter's intersectKeys walks the smaller side too).
   */
  isCompatible(incoming: KarpenterRequirements, allowUndefined: ReadonlySet<string>): boolean {
    for (const [key, wanted] of incoming.byKey) {
      const existing = this.byKey.get(key);
      if (existing === undefined) {
        if (!allowUndefined.has(key) && !isExclusion(wanted)) return false;
      } else if (!existing.hasIntersection(wanted) && !(isExclusion(wanted) && isExclusion(existing))) return false;
    }
    return true;
  }

  /**
   * Why the Pod's requirements (`incoming`) cannot be met by these (a NodeClaim template's), as Requirements.Compatible
   * decides; empty when they can. A key of the Pod's these do not define fails unless `allowUndefined` has it (the
   * well-known labels) or the Pod's requirement on it is NotIn or DoesNotExist; keys both define must intersect.
   * Karpenter stops at the first undefined key; every failing key is listed here, so that the closest candidate is the
   * one failing on the fewest.
   */
  compatible(incoming: KarpenterRequirements, allowUndefined: ReadonlySet<string>): readonly string[] {
    const problems: string[] = [];
    for (const key of incoming.keys()) {
      if (allowUndefined.has(key) || this.has(key)) continue;
      const operator = incoming.get(key).operator();
      if (operator === 'NotIn' || operator === 'DoesNotExist') continue;
      problems.push(`label "${key}" does not have known values${this.typoHint(key, allowUndefined)}`);
    }
    return [...problems, ...this.intersects(incoming)];
  }

  /** The keys both define whose requirements share no value (Requirements.Intersects), as messages. */
  intersects(incoming: KarpenterRequirements): readonly string[] {
    const problems: string[] = [];
    for (const [key, existing] of this.byKey) {
      if (!incoming.has(key)) continue;
      const wanted = incoming.get(key);
      if (existing.hasIntersection(wanted)) continue;
      // Two exclusions never conflict: a node without the label satisfies both.
      if (isExclusion(wanted) && isExclusion(existing)) continue;
      problems.push(`${wanted.text()} not in ${existing.text()}`);
    }
    return problems;
  }

  /**
   * Karpenter's labelHint: a defined or well-known key the undefined one may be a typo of, in sorted order. Only for a
   * prefixed key: Karpenter also hints for a short one ("pool" as a typo of "karpenter.sh/nodepool"), which misleads.
   */
  private typoHint(key: string, allowUndefined: ReadonlySet<string>): string {
    if (!key.includes('/')) return '';
    const suffix = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
    for (const known of [...[...allowUndefined].sort(), ...[...this.byKey.keys()].sort()]) {
      if (known.includes(key) || known.endsWith(suffix)) return ` (typo of "${known}"?)`;
    }
    return '';
  }
}

function isExclusion(requirement: KarpenterRequirement): boolean {
  const operator = requirement.operator();
  return operator === 'NotIn' || operator === 'DoesNotExist';
}

export { KarpenterRequirement, KarpenterRequirements, atoi, memo, requirementKey };
