/**
 * Pure: workload objects read from untrusted JSON, the Pod a controller would create from a workload's current
 * template (a StatefulSet's: the revision a deleted Pod comes back at), the owner chain from a running Pod to that
 * workload, and the Pods an input stands for (Pods, AdmissionReviews, workload manifests).
 */
import { classifyObject, readPodIdentity, readWorkloadObject, type PodIdentity } from './objects.ts';
import { createOwnerIndex, type Deletion, type OwnerIndex, type PodOrigin } from './owners.ts';
import { podFromWorkload, podOrdinal } from './pod.ts';
import { podInputOf, podInputs, type PodInput, type ResourceIdentity } from './inputs.ts';
import { readControllerRevision, recreationOf } from './revisions.ts';

export {
  classifyObject,
  readWorkloadObject,
  readPodIdentity,
  podFromWorkload,
  podOrdinal,
  createOwnerIndex,
  podInputOf,
  podInputs,
  readControllerRevision,
  recreationOf,
};
export type { Deletion, PodIdentity, OwnerIndex, PodOrigin, PodInput, ResourceIdentity };
