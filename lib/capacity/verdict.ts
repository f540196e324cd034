/** Where a Pod fits, or why it fits nowhere: the one verdict every command, the sync and admission show. */
import type { Contradiction } from './placement.ts';

/**
 * What a verdict does not judge, for every place that shows one: a Pod that "fits" a Node may still wait for room
 * there, and one that fits a NodePool for Karpenter to find an instance type with room for its requests.
 */
const FIT_CAVEAT =
  'judged on node labels, taints and cordons only (kube-scheduler NodeAffinity, NodeUnschedulable and TaintToleration; ' +
  "Karpenter's NodePool requirements and taints): free resources, host ports, volumes and inter-Pod (anti-)affinity " +
  'are not checked';

/** A Node shape or a NodePool the Pod does not fit, with why. */
interface Candidate {
  readonly kind: 'Node' | 'NodePool';
  /** The NodePool's name, or the name of the first Node of the shape. */
  readonly name: string;
  /** For a Node: how many Nodes share its shape (1 or more); 0 for a NodePool. */
  readonly nodes: number;
  /** One reason per failing pair, requirement, taint or cordon. */
  readonly reasons: readonly string[];
}

/** fits: some Node or NodePool takes the Pod; nowhere: none does (or it contradicts itself); unknown: no capacity given. */
type VerdictKind = 'fits' | 'nowhere' | 'unknown';

/** The parts of a verdict. */
interface VerdictParts {
  readonly kind: VerdictKind;
  readonly nodes?: number;
  readonly nodePools?: readonly string[];
  readonly notes?: readonly string[];
  readonly contradiction?: Contradiction;
  readonly closest?: readonly Candidate[];
  /** True when the capacity judged held no Node and no NodePool. */
  readonly emptyCapacity?: boolean;
}

const count = (value: number, noun: string) => `${value} ${noun}${value === 1 ? '' : 's'}`;

function candidateName(candidate: Candidate): string {
  if (candidate.kind === 'NodePool') return `NodePool ${candidate.name}`;
  return candidate.nodes === 1
    ? `Node ${candidate.name}`
    : `Node ${candidate.name} (and ${count(candidate.nodes - 1, 'more Node')} like it)`;
}

/** A verdict: immutable, shown with text() or lines(), compared with isNewlyUnschedulable(). */
class Verdict {
  readonly kind: VerdictKind;
  /** How many Nodes the Pod fits. */
  readonly nodes: number;
  /** The NodePools the Pod fits, highest weight first. */
  readonly nodePools: readonly string[];
  /** What does not change the verdict but is worth saying, such as a fitting NodePool at its limits. */
  readonly notes: readonly string[];
  /** Set when the Pod fits nowhere whatever the capacity. */
  readonly contradiction: Contradiction | undefined;
  /** When the Pod fits nowhere: the candidates failing on the fewest reasons, closest first. */
  readonly closest: readonly Candidate[];
  private readonly emptyCapacity: boolean;

  constructor(parts: VerdictParts) {
    this.kind = parts.kind;
    this.nodes = parts.nodes ?? 0;
    this.nodePools = parts.nodePools ?? [];
    this.notes = parts.notes ?? [];
    this.contradiction = parts.contradiction;
    this.closest = parts.closest ?? [];
    this.emptyCapacity = parts.emptyCapacity ?? false;
  }

  /** True when some Node or NodePool takes the Pod. */
  get fits(): boolean {
    return this.kind === 'fits';
  }

  /** What the verdict leaves out (FIT_CAVEAT): say it wherever a verdict is shown. */
  get caveat(): string {
    return FIT_CAVEAT;
  }

  /** True when this verdict (after the rules) fits nowhere and `before` (the Pod as it came) did not. */
  isNewlyUnschedulable(before: Verdict): boolean {
    return this.kind === 'nowhere' && before.kind !== 'nowhere';
  }

  /** The verdict as one line: "fits NodePool general; 3 Nodes", "fits nowhere: …", "not judged: no capacity given". */
  text(): string {
    switch (this.kind) {
      case 'unknown':
        return 'not judged: no capacity given';
      case 'fits':
        return `fits ${this.where()}${this.notes.length === 0 ? '' : ` (${this.notes.join('; ')})`}`;
      case 'nowhere':
        return `fits nowhere: ${this.why()}`;
    }
  }

  /** The verdict as lines: the first as text() says it without the reasons, then each closest candidate and its reasons. */
  lines(): readonly string[] {
    if (this.kind !== 'nowhere') return [this.text()];
    if (this.contradiction !== undefined) return [`fits nowhere: ${this.why()}`];
    if (this.emptyCapacity) return ['fits nowhere: the capacity holds no Node and no NodePool'];
    return [
      'fits nowhere: no Node and no NodePool takes it',
      ...this.closest.flatMap((candidate) => [
        `  closest: ${candidateName(candidate)}`,
        ...candidate.reasons.map((reason) => `    - ${reason}`),
      ]),
    ];
  }

  private where(): string {
    const parts: string[] = [];
    if (this.nodePools.length > 0)
      parts.push(`${this.nodePools.length === 1 ? 'NodePool' : 'NodePools'} ${this.nodePools.join(', ')}`);
    parts.push(count(this.nodes, 'Node'));
    return parts.join('; ');
  }

  private why(): string {
    if (this.contradiction !== undefined) {
      const { terms } = this.contradiction;
      const each = terms.map((conflict) =>
        terms.length === 1 ? conflict.reason : `term ${conflict.term + 1}: ${conflict.reason}`,
      );
      return `its nodeSelector and required node affinity cannot hold on any node: ${each.join('; ')}`;
    }
    if (this.emptyCapacity) return 'the capacity holds no Node and no NodePool';
    const closest = this.closest.map((candidate) => `${candidateName(candidate)}: ${candidate.reasons.join(', ')}`);
    return `no Node and no NodePool takes it; closest: ${closest.join('; ')}`;
  }
}

export { Verdict, FIT_CAVEAT };
export type { Candidate, VerdictKind };
