/**
 * Cluster access for the sync: list podmutations and podplacements (agent.cloudpilot.ai) and patch their status through
 * @kubernetes/client-node, with kubeconfig or EKS IAM authentication; and, for the report, list Pods and their
 * possible controllers page by page, and the Nodes and NodePools where a Pod can run; for rollout, restart workloads and evict Pods. Only the sync bundle imports this folder.
 */
import { createCapacitySource } from './capacity-source.ts';
import { readClusterConfig, type ClusterConfig } from './config.ts';
import { contextNamespace } from './connection.ts';

import type { PodMutationList } from './list.ts';
import { createRolloutTarget, type RolloutTarget, type RolloutWorkloadKind } from './rollout-target.ts';
import { createPodMutationSource, type PodMutationSource, type SyncedKind } from './source.ts';
import {
  clusterScopedGrant,
  createWorkloadObjectSource,
  WORKLOAD_OBJECT_KINDS,
  type WorkloadObjectSource,
} from './workload-objects.ts';

export {
  clusterScopedGrant,
  contextNamespace,
  createCapacitySource,
  createPodMutationSource,
  createRolloutTarget,
  createWorkloadObjectSource,
  WORKLOAD_OBJECT_KINDS,
  readClusterConfig,
};
export type {
  RolloutTarget,
  RolloutWorkloadKind,
  PodMutationSource,
  SyncedKind,
  WorkloadObjectSource,
  PodMutationList,
  ClusterConfig,
};
