/** The `--placements FILE` and `--capacity-flavour` options of review, explain, report, serve and test. */
import { Option } from 'commander';
import type { NormalizedPlacement } from '../../api/index.ts';
import { parseSingleDocument } from '../../rule-files/index.ts';
import {
  CAPACITY_FLAVOURS,
  createPlacementStep,
  DEFAULT_CAPACITY_FLAVOUR,
  parseCapacityFlavour,
  parsePlacementPolicies,
  type CapacityFlavour,
  type PlacementPolicy,
  type PlacementStep,
} from '../../placement/index.ts';
import { readInput, type CliStreams } from '../io.ts';

/** The parsed values of the placement options. */
export interface PlacementFlags {
  readonly placements?: string;
  readonly capacityFlavour?: string;
}

/** `--placements FILE` and `--capacity-flavour F`. */
export function placementOptions(): Option[] {
  return [
    new Option(
      '--placements <file>',
      'placement policies (YAML or JSON list) for the managed capacity step, run after the rules',
    ),
    new Option('--capacity-flavour <flavour>', 'the capacity label managed placement writes')
      .choices(CAPACITY_FLAVOURS)
      .default(DEFAULT_CAPACITY_FLAVOUR),
  ];
}

/** The capacity flavour of `--capacity-flavour`, which the managed step writes for policies and PodPlacements alike. */
export function capacityFlavourOf(flags: PlacementFlags): CapacityFlavour {
  return parseCapacityFlavour(flags.capacityFlavour ?? DEFAULT_CAPACITY_FLAVOUR);
}

/**
 * Reads a placement file (YAML or JSON: a list of policies, or `{ policies: [...] }`) with its capacity flavour;
 * undefined when no file was given.
 */
export async function readPlacementFile(
  flags: PlacementFlags,
  streams: CliStreams,
): Promise<{ readonly flavour: CapacityFlavour; readonly policies: readonly PlacementPolicy[] } | undefined> {
  const source = flags.placements;
  if (source === undefined) return undefined;
  return {
    flavour: capacityFlavourOf(flags),
    policies: parsePlacementPolicies(parseSingleDocument(await readInput(source, streams), source), source),
  };
}

/**
 * The managed placement step of the placement file's policies (which win, as the table's do) and the PodPlacements of
 * the rules paths; undefined, as admission runs none, when there is no policy and no enabled PodPlacement.
 */
export async function placementStep(
  flags: PlacementFlags,
  streams: CliStreams,
  placements: readonly NormalizedPlacement[],
): Promise<PlacementStep | undefined> {
  const file = await readPlacementFile(flags, streams);
  const step = createPlacementStep({
    flavour: capacityFlavourOf(flags),
    policies: file?.policies ?? [],
    placements,
  });
  return step.empty ? undefined : step;
}

/** placementStep as the engine's list of managed steps. */
export async function placementSteps(
  flags: PlacementFlags,
  streams: CliStreams,
  placements: readonly NormalizedPlacement[],
): Promise<readonly PlacementStep[]> {
  const step = await placementStep(flags, streams, placements);
  return step === undefined ? [] : [step];
}
