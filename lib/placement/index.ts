import {
  CAPACITY_FLAVOUR_NAMES,
  CAPACITY_FLAVOURS,
  DEFAULT_CAPACITY_FLAVOUR,
  parseCapacityFlavour,
  parsePlacementPolicies,
  parsePlacementPolicy,
  workloadKey,
} from './policy.ts';
import { createPlacementStep, withRecordedCapacity } from './step.ts';
import {
  CAPACITY_ANNOTATION,
  CAPACITY_LABELS,
  DEFAULT_SPOT_PERCENT,
  INSTANCE_TYPE_KEY,
  type CapacityChoice,
  type CapacityFlavour,
  type PlacementMode,
  type PlacementPolicy,
} from './types.ts';

export {
  createPlacementStep,
  withRecordedCapacity,
  parsePlacementPolicy,
  parsePlacementPolicies,
  parseCapacityFlavour,
  CAPACITY_FLAVOUR_NAMES,
  CAPACITY_FLAVOURS,
  DEFAULT_CAPACITY_FLAVOUR,
  workloadKey,
  CAPACITY_ANNOTATION,
  CAPACITY_LABELS,
  DEFAULT_SPOT_PERCENT,
  INSTANCE_TYPE_KEY,
};
export type { CapacityChoice, CapacityFlavour, PlacementMode, PlacementPolicy };
