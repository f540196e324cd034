/**
 * Pure: where a Pod can run. One model, judged as kube-scheduler's NodeAffinity, NodeUnschedulable and TaintToleration
 * filters judge a Node and as Karpenter's provisioner judges a NodePool; the boundary of capacity input (Nodes and
 * NodePools as kubectl prints them); the verdict every command, the sync and admission show.
 */
import { Capacity, type CapacityParts, type JudgeOptions } from './capacity.ts';
import type { NodePool, NodePoolRequirement } from './node-pools.ts';
import type { CapacityNode, NodeShape, ShapeMember } from './nodes.ts';
import { Placement, type Contradiction, type PlacementFields, type TermConflict } from './placement.ts';
import { readCapacityObjects, type CapacityObjects, type SkippedObject } from './read.ts';
import { toleratesTaint, type Taint, type TaintEffect } from './taints.ts';
import { FIT_CAVEAT, Verdict, type Candidate, type VerdictKind } from './verdict.ts';

export { Capacity, Placement, Verdict, FIT_CAVEAT, readCapacityObjects, toleratesTaint };
export type {
  CapacityParts,
  JudgeOptions,
  CapacityNode,
  NodeShape,
  ShapeMember,
  NodePool,
  NodePoolRequirement,
  PlacementFields,
  Contradiction,
  TermConflict,
  CapacityObjects,
  SkippedObject,
  Taint,
  TaintEffect,
  Candidate,
  VerdictKind,
};
