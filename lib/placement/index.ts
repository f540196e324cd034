import {
  CAPACITY_FLAVOURS,
  DEFAULT_CAPACITY_FLAVOUR,
  parseCapacityFlavour,
  parsePlacementPolicies,
  parsePlacementPolicy,
  readCapacityFlavour,
  workloadKey,
} from './policy.ts';
import { diversityCounterKey } from './sequence.ts';
import { createPlacementStep, isPlaced, withRecordedCapacity, type PlacementStep } from './step.ts';
import { revalidatePlacements, type ChosenPlacement } from './selection.ts';
import { CAPACITY_ANNOTATION, type CapacityFlavour, type PlacementPolicy } from './types.ts';

export {
  createPlacementStep,
  isPlaced,
  revalidatePlacements,
  withRecordedCapacity,
  diversityCounterKey,
  parsePlacementPolicy,
  parsePlacementPolicies,
  parseCapacityFlavour,
  readCapacityFlavour,
  CAPACITY_FLAVOURS,
  DEFAULT_CAPACITY_FLAVOUR,
  workloadKey,
  CAPACITY_ANNOTATION,
};
export type { CapacityFlavour, PlacementPolicy, PlacementStep, ChosenPlacement };
