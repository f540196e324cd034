/**
 * Pure: where a Pod can run. One model, judged as kube-scheduler's NodeAffinity, NodeUnschedulable and TaintToleration
 * filters judge a Node and as Karpenter's provisioner judges a NodePool; the boundary of capacity input (Nodes and
 * NodePools as kubectl prints them); the verdict every command, the sync and admission show.
 */
import { Capacity, type JudgeOptions } from './capacity.ts';

import { Placement } from './placement.ts';
import { readCapacityObjects, type CapacityObjects } from './read.ts';

import { FIT_CAVEAT, Verdict, type VerdictKind } from './verdict.ts';

export { Capacity, Placement, Verdict, FIT_CAVEAT, readCapacityObjects };
export type { JudgeOptions, CapacityObjects, VerdictKind };
