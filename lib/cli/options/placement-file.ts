/** The `--placements FILE` and `--capacity-flavour` options of review, explain, report, serve and test. */
import { Option } from 'commander';
import type { ManagedStep } from '../../engine/index.ts';
import { parseSingleDocument } from '../../rule-files/index.ts';
import {
  CAPACITY_FLAVOURS,
  createPlacementStep,
  DEFAULT_CAPACITY_FLAVOUR,
  parseCapacityFlavour,
  parsePlacementPolicies,
  type CapacityFlavour,
  type PlacementPolicy,
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
  const flavour = parseCapacityFlavour(flags.capacityFlavour ?? DEFAULT_CAPACITY_FLAVOUR);
  return {
    flavour,
    policies: parsePlacementPolicies(parseSingleDocument(await readInput(source, streams), source), source),
  };
}

/** The managed step of a placement file; no file means no managed step. */
export async function placementSteps(flags: PlacementFlags, streams: CliStreams): Promise<readonly ManagedStep[]> {
  const file = await readPlacementFile(flags, streams);
  return file === undefined ? [] : [createPlacementStep(file)];
}
