/**
 * Pure: workload objects read from untrusted JSON, the Pod a controller would create from a workload's current
 * template, and the owner chain from a running Pod to that workload.
 */
import {
  classifyObject,
  isWorkloadKind,
  readPodIdentity,
  readWorkloadObject,
  type ObjectClass,
  type ObjectReference,
  type PodIdentity,
  type PodTemplate,
  type WorkloadKind,
  type WorkloadObject,
} from './objects.ts';
import { createOwnerIndex, type OwnerIndex, type PodOrigin } from './owners.ts';
import { canonicalJson, podFromWorkload, templateHash, type PodFromWorkloadOptions } from './pod.ts';

export { classifyObject, isWorkloadKind, readWorkloadObject, readPodIdentity, podFromWorkload, templateHash, canonicalJson, createOwnerIndex };
export type {
  ObjectClass,
  ObjectReference,
  PodIdentity,
  PodTemplate,
  WorkloadKind,
  WorkloadObject,
  PodFromWorkloadOptions,
  OwnerIndex,
  PodOrigin,
};
