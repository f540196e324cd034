/**
 * Cluster access for the sync: list podmutations and podplacements (agent.cloudpilot.ai) and patch their status through
 * @kubernetes/client-node, with kubeconfig or EKS IAM authentication; and, for the report, list Pods and their
 * possible controllers page by page, and the Nodes and NodePools where a Pod can run; for rollout, restart workloads and evict Pods. Only the sync bundle imports this folder.
 */
import { createCapacitySource, type CapacitySource, type CapacitySourceOptions } from './capacity-source.ts';
import { readClusterConfig, type ClusterConfig } from './config.ts';
import { contextNamespace } from './connection.ts';
import {
  createEksTokenProvider,
  presignEksToken,
  type AwsCredentials,
  type AwsCredentialsProvider,
  type Clock,
  type EksTokenProvider,
  type EksTokenProviderOptions,
  type EksTokenRequest,
} from './eks-token.ts';
import type { ClusterFailureReason } from './failure.ts';
import type { PodMutationList } from './list.ts';
import {
  createRolloutTarget,
  type EvictionResult,
  type RolloutTarget,
  type RolloutTargetOptions,
  type RolloutWorkloadKind,
} from './rollout-target.ts';
import {
  createPodMutationSource,
  type PodMutationSource,
  type PodMutationSourceOptions,
  type SyncedKind,
} from './source.ts';
import {
  clusterScopedGrant,
  createWorkloadObjectSource,
  WORKLOAD_OBJECT_KINDS,
  type WorkloadObjectKind,
  type WorkloadObjectSource,
  type WorkloadObjectSourceOptions,
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
  presignEksToken,
  createEksTokenProvider,
};
export type {
  CapacitySource,
  CapacitySourceOptions,
  EvictionResult,
  RolloutTarget,
  RolloutTargetOptions,
  RolloutWorkloadKind,
  PodMutationSource,
  PodMutationSourceOptions,
  SyncedKind,
  WorkloadObjectKind,
  WorkloadObjectSource,
  WorkloadObjectSourceOptions,
  PodMutationList,
  ClusterConfig,
  ClusterFailureReason,
  AwsCredentials,
  AwsCredentialsProvider,
  Clock,
  EksTokenProvider,
  EksTokenProviderOptions,
  EksTokenRequest,
};
