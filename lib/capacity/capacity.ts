/** The capacity of a cluster, the distinct shapes of its Nodes and its NodePools, and the one judgment of a Pod against it. */
import {
  compileNodePool,
  karpenterPod,
  nodePoolFits,
  nodePoolMisfits,
  type CompiledNodePool,
  type KarpenterPod,
  type NodePool,
} from './node-pools.ts';
import { fittingMembers, shapeMisfits, shapesOf, type CapacityNode, type NodeShape } from './nodes.ts';
import type { Placement } from './placement.ts';
import { publishCapacity, readPublishedCapacity } from './published.ts';
import { type JsonObject } from '../json/index.ts';
import { compareCodeUnits } from '../text/index.ts';
import { Verdict, type Candidate, type VerdictKind } from './verdict.ts';

/**
 * What a capacity is made of. Nodes or NodePools of one name given twice count once, the last one given.
 * @internal Exported for tests: the test support builds Capacity from typed parts; callers read Nodes and NodePools through readCapacityObjects.
 */
interface CapacityParts {
  readonly nodes?: readonly CapacityNode[];
  readonly nodePools?: readonly NodePool[];
}

/** How a judgment reports. */
interface JudgeOptions {
  /** How many candidates a "fits nowhere" verdict names, closest first; default 3. */
  readonly closest?: number;
}

const DEFAULT_CLOSEST = 3;

function lastByName<T extends { readonly name: string }>(items: readonly T[]): T[] {
  return [...new Map(items.map((item) => [item.name, item])).values()];
}

// Karpenter tries NodePools by weight, highest first, then by name (pkg/utils/nodepool, OrderByWeight).
function byWeight(left: CompiledNodePool, right: CompiledNodePool): number {
  return (right.pool.weight ?? 0) - (left.pool.weight ?? 0) || compareCodeUnits(left.pool.name, right.pool.name);
}

/** A cluster's capacity, or the absence of one (unknown). Immutable; judge() as often as needed. */
class Capacity {
  private constructor(
    /** The distinct Node shapes, each with its Nodes. */
    readonly shapes: readonly NodeShape[],
    private readonly pools: readonly CompiledNodePool[],
    /** False for Capacity.unknown(): no capacity was given, so only a contradiction can be found. */
    readonly known: boolean,
  ) {}

  /** No capacity given: a judgment finds contradictions only, and is otherwise unknown. */
  static unknown(): Capacity {
    return new Capacity([], [], false);
  }

  /** The capacity of these Nodes and NodePools; shapes and NodePool templates are computed here, once. */
  static of(parts: CapacityParts): Capacity {
    const pools = lastByName(parts.nodePools ?? [])
      .map(compileNodePool)
      .sort(byWeight);
    return new Capacity(shapesOf(lastByName(parts.nodes ?? [])), pools, true);
  }

  /**
   * The capacity as the snapshot stores it (its Node shapes and NodePools, plain JSON); undefined for unknown(), which
   * is stored as no capacity at all.
   */
  published(): JsonObject | undefined {
    return this.known ? publishCapacity(this.shapes, this.nodePools) : undefined;
  }

  /** The capacity a snapshot stores (published()), read through the capacity boundary; throws MalformedInputError. */
  static fromPublished(value: unknown, path: string): Capacity {
    const { shapes, nodePools } = readPublishedCapacity(value, path);
    return new Capacity(shapes, lastByName(nodePools).map(compileNodePool).sort(byWeight), true);
  }

  /** The NodePools, highest weight first. */
  get nodePools(): readonly NodePool[] {
    return this.pools.map((compiled) => compiled.pool);
  }

  /** How many Nodes the shapes hold. */
  get nodeCount(): number {
    return this.shapes.reduce((total, shape) => total + shape.members.length, 0);
  }

  /**
   * Where the Pod can run: the Nodes kube-scheduler's filters would let it onto and the NodePools Karpenter would
   * provision for it, or why it fits nowhere (its own contradiction first, with or without capacity; otherwise the
   * closest candidates and their reasons). A capacity of unknown() judges contradictions only.
   */
  judge(placement: Placement, options: JudgeOptions = {}): Verdict {
    const contradiction = placement.contradiction();
    if (contradiction !== undefined) return new Verdict({ kind: 'nowhere', contradiction });
    if (!this.known) return new Verdict({ kind: 'unknown' });

    let nodes = 0;
    for (const shape of this.shapes) nodes += fittingMembers(placement, shape);
    const pod = karpenterPod(placement);
    const fitting = this.pools.filter((compiled) => nodePoolFits(compiled, pod, placement));
    if (nodes > 0 || fitting.length > 0) {
      return new Verdict({
        kind: 'fits',
        nodes,
        nodePools: fitting.map((compiled) => compiled.pool.name),
        notes: fitting.flatMap((compiled) =>
          compiled.atLimits === undefined ? [] : [`NodePool ${compiled.pool.name} ${compiled.atLimits}`],
        ),
      });
    }
    if (this.shapes.length === 0 && this.pools.length === 0)
      return new Verdict({ kind: 'nowhere', emptyCapacity: true });
    return new Verdict({
      kind: 'nowhere',
      closest: this.closest(placement, pod, options.closest ?? DEFAULT_CLOSEST),
    });
  }

  /**
   * The kind judge() would give, found as cheaply as it can be: the first fitting Node shape or NodePool ends it, and
   * nothing is counted or put into words. For the admission hot path, which needs the verdict's words only when a Pod
   * fits nowhere.
   */
  kindOf(placement: Placement): VerdictKind {
    if (placement.contradiction() !== undefined) return 'nowhere';
    if (!this.known) return 'unknown';
    for (const shape of this.shapes) if (fittingMembers(placement, shape) > 0) return 'fits';
    if (this.pools.length === 0) return 'nowhere';
    const pod = karpenterPod(placement);
    for (const compiled of this.pools) if (nodePoolFits(compiled, pod, placement)) return 'fits';
    return 'nowhere';
  }

  // The candidates failing on the fewest reasons: NodePools first on a tie (they can make new Nodes), then Node shapes.
  // Only a Pod that fits nowhere gets here, so no reason is put into words for a Pod that fits.
  private closest(placement: Placement, pod: KarpenterPod, limit: number): readonly Candidate[] {
    const candidates: Candidate[] = [
      ...this.pools.map((compiled) => ({
        kind: 'NodePool' as const,
        name: compiled.pool.name,
        nodes: 0,
        reasons: nodePoolMisfits(compiled, pod, placement),
      })),
      ...this.shapes.map((shape) => {
        const { node, reasons } = shapeMisfits(placement, shape);
        return { kind: 'Node' as const, name: node, nodes: shape.members.length, reasons };
      }),
    ];
    // Array.prototype.sort is stable: equal counts keep the order above.
    return candidates.sort((left, right) => left.reasons.length - right.reasons.length).slice(0, limit);
  }
}

export { Capacity };
export type { CapacityParts, JudgeOptions };
