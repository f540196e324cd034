import { PRODUCT_ANNOTATION_PREFIX, type PlacementMode } from '../api/index.ts';

/** The node provisioner whose capacity label the deployment uses. */
export type CapacityFlavour = 'karpenter' | 'eks' | 'gke';

/** A capacity choice for one Pod, flavour-neutral (as recorded in the capacity annotation). */
export type CapacityChoice = 'spot' | 'on-demand';

/** An operator-set placement policy for one workload (namespace, kind, name). */
export interface PlacementPolicy {
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
  readonly mode: PlacementMode;
  /** Share of the workload's Pods placed on Spot under Diversity, 0..100; default 50. */
  readonly spotPercent?: number;
  /** Least number of the workload's Pods kept on on-demand under Diversity, whatever spotPercent says; default 0. */
  readonly minOnDemand?: number;
}

/** The capacity label of each flavour, and its value for Spot and for on-demand capacity. */
export const CAPACITY_LABELS: Readonly<
  Record<CapacityFlavour, { readonly key: string; readonly spot: string; readonly onDemand: string }>
> = {
  karpenter: { key: 'karpenter.sh/capacity-type', spot: 'spot', onDemand: 'on-demand' },
  eks: { key: 'eks.amazonaws.com/capacityType', spot: 'SPOT', onDemand: 'ON_DEMAND' },
  gke: { key: 'cloud.google.com/gke-provisioning', spot: 'spot', onDemand: 'standard' },
};

/** Annotation recording a Pod's Diversity capacity choice; written by the webhook, never read from an incoming Pod. */
export const CAPACITY_ANNOTATION = `${PRODUCT_ANNOTATION_PREFIX}capacity`;

/** The topology key Diversity spreads Pods across. */
export const INSTANCE_TYPE_KEY = 'node.kubernetes.io/instance-type';
