/**
 * Nodes as kube-scheduler's filters see them, grouped into shapes: the Nodes that share labels (but for their own
 * hostname), taints and cordon fit exactly the same Pods, so a cluster of thousands of Nodes is judged shape by shape.
 */
import { expressionMatches, fieldMatches, requirementParses, type NodeView, type Term } from '../scheduling/index.ts';
import { HOSTNAME_LABEL, UNSCHEDULABLE_TAINT_KEY } from './labels.ts';
import { requirementText, type Placement } from './placement.ts';
import { hasUntoleratedTaint, taintText, tolerated, untoleratedTaints, type Taint } from './taints.ts';

/** A Node as the filters read it. */
interface CapacityNode {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  /** spec.unschedulable: cordoned. */
  readonly unschedulable: boolean;
}

/** One Node of a shape: its name, and its hostname label when it has one. */
interface ShapeMember {
  readonly name: string;
  readonly hostname: string | undefined;
}

/** The Nodes that share labels (all but the hostname label), taints and cordon: they fit the same Pods. */
interface NodeShape {
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly unschedulable: boolean;
  /** The Nodes of the shape, in the order they were read; never empty. */
  readonly members: readonly ShapeMember[];
}

/** The identity of a shape: its labels and taints in a canonical order, and its cordon. */
function shapeKey(labels: Readonly<Record<string, string>>, taints: readonly Taint[], unschedulable: boolean): string {
  const sortedLabels = Object.keys(labels)
    .sort()
    .map((key) => [key, labels[key]]);
  const sortedTaints = taints.map((taint) => [taint.key, taint.value, taint.effect]).sort();
  return JSON.stringify([sortedLabels, sortedTaints, unschedulable]);
}

/** Groups Nodes into their distinct shapes, in the order each shape is first met. */
function shapesOf(nodes: readonly CapacityNode[]): readonly NodeShape[] {
  const shapes = new Map<string, { shape: NodeShape; members: ShapeMember[] }>();
  for (const node of nodes) {
    const { [HOSTNAME_LABEL]: hostname, ...labels } = node.labels;
    const key = shapeKey(labels, node.taints, node.unschedulable);
    let entry = shapes.get(key);
    if (entry === undefined) {
      const members: ShapeMember[] = [];
      entry = { shape: { labels, taints: node.taints, unschedulable: node.unschedulable, members }, members };
      shapes.set(key, entry);
    }
    entry.members.push({ name: node.name, hostname });
  }
  return [...shapes.values()].map((entry) => entry.shape);
}

/** The Node a member of a shape is, as the filters read it. */
function memberView(shape: NodeShape, member: ShapeMember): NodeView {
  return {
    name: member.name,
    labels: member.hostname === undefined ? shape.labels : { ...shape.labels, [HOSTNAME_LABEL]: member.hostname },
  };
}

const views = new WeakMap<NodeShape, NodeView>();

// The view of a shape for a placement that reads no Node's identity: any member's would give the same answer.
function shapeView(shape: NodeShape): NodeView {
  let view = views.get(shape);
  if (view === undefined) {
    view = { name: '', labels: shape.labels };
    views.set(shape, view);
  }
  return view;
}

/**
 * True when the Pod may run on the Node as kube-scheduler's filters decide it: NodeAffinity (the nodeSelector's
 * pairs, then the required terms ORed, pkg/scheduler/framework/plugins/nodeaffinity), TaintToleration (every
 * NoSchedule and NoExecute taint tolerated) and NodeUnschedulable (a cordoned Node only for a Pod that tolerates
 * node.kubernetes.io/unschedulable:NoSchedule).
 */
function fitsView(placement: Placement, shape: NodeShape, view: NodeView): boolean {
  if (!placement.selects(view)) return false;
  if (hasUntoleratedTaint(shape.taints, placement.tolerations)) return false;
  return !shape.unschedulable || toleratesCordon(placement);
}

function toleratesCordon(placement: Placement): boolean {
  return tolerated(placement.tolerations, { key: UNSCHEDULABLE_TAINT_KEY, value: '', effect: 'NoSchedule' });
}

/** How many Nodes of the shape the Pod fits. */
function fittingMembers(placement: Placement, shape: NodeShape): number {
  if (!placement.readsNodeIdentity) return fitsView(placement, shape, shapeView(shape)) ? shape.members.length : 0;
  let count = 0;
  for (const member of shape.members) if (fitsView(placement, shape, memberView(shape, member))) count += 1;
  return count;
}

function has(view: NodeView, key: string): string {
  const value = key === 'metadata.name' ? view.name : view.labels[key];
  return value === undefined ? `no label ${key}` : `${key}=${value}`;
}

// The requirements of a term the Node fails, as messages; an empty term fails as a whole.
function termMisfits(term: Term, view: NodeView): string[] {
  if (term.expressions.length === 0 && term.fields.length === 0) return ['the empty term selects no Node'];
  const misses: string[] = [];
  for (const requirement of term.expressions) {
    if (!requirementParses(requirement))
      misses.push(`${requirementText(requirement)} (Kubernetes cannot parse it: the term selects no Node)`);
    else if (!expressionMatches(requirement, view.labels[requirement.key]))
      misses.push(`${requirementText(requirement)} (the Node has ${has(view, requirement.key)})`);
  }
  for (const requirement of term.fields)
    if (!fieldMatches(requirement, view.name))
      misses.push(`${requirementText(requirement)} (the Node is ${view.name})`);
  return misses;
}

/** Why the Pod does not fit the Node, one reason per failing pair, requirement, taint or cordon; empty when it fits. */
function nodeMisfits(placement: Placement, shape: NodeShape, view: NodeView): readonly string[] {
  const reasons: string[] = [];
  for (const [key, value] of Object.entries(placement.nodeSelector))
    if (view.labels[key] !== value) reasons.push(`nodeSelector ${key}=${value} (the Node has ${has(view, key)})`);
  if (placement.required !== undefined) {
    const perTerm = placement.required.map((term) => termMisfits(term, view));
    if (!perTerm.some((misses) => misses.length === 0)) {
      // The term the Node misses least stands for the required affinity.
      const closest = perTerm.reduce((best, misses) => (misses.length < best.length ? misses : best));
      const term = perTerm.indexOf(closest);
      const label = placement.required.length === 1 ? 'node affinity' : `node affinity term ${term + 1}`;
      for (const miss of closest) reasons.push(`${label}: ${miss}`);
    }
  }
  for (const taint of untoleratedTaints(shape.taints, placement.tolerations))
    reasons.push(`taint ${taintText(taint)} not tolerated`);
  if (shape.unschedulable && !toleratesCordon(placement))
    reasons.push(`cordoned (spec.unschedulable), and ${UNSCHEDULABLE_TAINT_KEY}:NoSchedule not tolerated`);
  return reasons;
}

/** Why the Pod fits none of the shape's Nodes: the member that misses on the fewest reasons, and its reasons. */
function shapeMisfits(
  placement: Placement,
  shape: NodeShape,
): { readonly node: string; readonly reasons: readonly string[] } {
  if (!placement.readsNodeIdentity)
    return { node: shape.members[0]!.name, reasons: nodeMisfits(placement, shape, shapeView(shape)) };
  let best: { node: string; reasons: readonly string[] } | undefined;
  for (const member of shape.members) {
    const reasons = nodeMisfits(placement, shape, memberView(shape, member));
    if (best === undefined || reasons.length < best.reasons.length) best = { node: member.name, reasons };
  }
  return best!;
}

export { shapesOf, fittingMembers, shapeMisfits };
export type { CapacityNode, NodeShape, ShapeMember };
