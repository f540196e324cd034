/** The `--placements FILE` and `--capacity-flavour` options of review, explain, report, serve and test. */
import { Option } from 'commander';
import type { ManagedStep } from '../../engine/index.ts';
import { MalformedInputError } from '../../errors/index.ts';
import { readAll } from '../../values/index.ts';
import {
  CAPACITY_FLAVOURS,
  createPlacementStep,
  DEFAULT_CAPACITY_FLAVOUR,
  parseCapacityFlavour,
  parsePlacementPolicy,
  workloadKey,
  type CapacityFlavour,
  type PlacementPolicy,
} from '../../placement/index.ts';
import { parseSingleDocument, readInput, type CliStreams } from '../io.ts';

/** The parsed values of the placement options. */
export interface PlacementFlags {
  readonly placements?: string;
  readonly capacityFlavour?: string;
}

/** `--placements FILE` and `--capacity-flavour F`. */
export function placementOptions(): Option[] {
  return [
    new Option('--placements <file>', 'placement policies (YAML or JSON list) for the managed capacity step, run after the rules'),
    new Option('--capacity-flavour <flavour>', 'the capacity label managed placement writes').choices(CAPACITY_FLAVOURS).default(DEFAULT_CAPACITY_FLAVOUR),
  ];
}

/**
 * Reads a placement file (YAML or JSON: a list of policies, or `{ policies: [...] }`) with its capacity flavour;
 * undefined when no file was given. Duplicate workloads are malformed input.
 */
export async function readPlacementFile(
  flags: PlacementFlags,
  streams: CliStreams,
): Promise<{ readonly flavour: CapacityFlavour; readonly policies: readonly PlacementPolicy[] } | undefined> {
  const source = flags.placements;
  if (source === undefined) return undefined;
  const flavour = parseCapacityFlavour(flags.capacityFlavour ?? DEFAULT_CAPACITY_FLAVOUR);
  const document = parseSingleDocument(await readInput(source, streams), source);
  const list = Array.isArray(document) ? document : (document as { policies?: unknown } | null)?.policies;
  if (!Array.isArray(list)) throw new MalformedInputError(`${source}: expected a list of placement policies or { policies: [...] }`);
  // Every policy is checked, so one error lists the wrong fields of all of them.
  const policies: PlacementPolicy[] = Object.values(
    readAll(Object.fromEntries(list.map((item, index) => [index, () => parsePlacementPolicy(item, `${source}[${index}]`)])), MalformedInputError),
  );
  const seen = new Set<string>();
  for (const policy of policies) {
    const key = workloadKey(policy.namespace, policy.kind, policy.name);
    if (seen.has(key)) throw new MalformedInputError(`${source}: workload ${key} has more than one placement policy`);
    seen.add(key);
  }
  return { flavour, policies };
}

/** The managed step of a placement file; no file means no managed step. */
export async function placementSteps(flags: PlacementFlags, streams: CliStreams): Promise<readonly ManagedStep[]> {
  const file = await readPlacementFile(flags, streams);
  return file === undefined ? [] : [createPlacementStep(file)];
}
