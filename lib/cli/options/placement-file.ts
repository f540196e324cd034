import type { ManagedStep } from '../../engine/index.ts';
import { MalformedInputError } from '../../errors/index.ts';
import { readAll } from '../../values/index.ts';
import { createPlacementStep, parseCapacityFlavour, parsePlacementPolicy, workloadKey, type CapacityFlavour, type PlacementPolicy } from '../../placement/index.ts';
import { parseSingleDocument, readInput, type CliStreams } from '../io.ts';

/** The `--placements FILE` and `--capacity-flavour` options shared by review and explain. */
export const PLACEMENT_OPTIONS = {
  placements: { type: 'string' },
  'capacity-flavour': { type: 'string', default: 'karpenter' },
} as const;

/**
 * Reads a placement file (YAML or JSON: a list of policies, or `{ policies: [...] }`) with its capacity flavour;
 * undefined when no file was given. Duplicate workloads are malformed input.
 */
export async function readPlacementFile(
  values: { placements?: string; 'capacity-flavour'?: string },
  streams: CliStreams,
): Promise<{ readonly flavour: CapacityFlavour; readonly policies: readonly PlacementPolicy[] } | undefined> {
  if (values.placements === undefined) return undefined;
  const flavour = parseCapacityFlavour(values['capacity-flavour'] ?? 'karpenter');
  const document = parseSingleDocument(await readInput(values.placements, streams), values.placements);
  const list = Array.isArray(document) ? document : (document as { policies?: unknown } | null)?.policies;
  if (!Array.isArray(list)) throw new MalformedInputError(`${values.placements}: expected a list of placement policies or { policies: [...] }`);
  // Every policy is checked, so one error lists the wrong fields of all of them.
  const source = values.placements;
  const policies: PlacementPolicy[] = Object.values(
    readAll(Object.fromEntries(list.map((item, index) => [index, () => parsePlacementPolicy(item, `${source}[${index}]`)])), MalformedInputError),
  );
  const seen = new Set<string>();
  for (const policy of policies) {
    const key = workloadKey(policy.namespace, policy.kind, policy.name);
    if (seen.has(key)) throw new MalformedInputError(`${values.placements}: workload ${key} has more than one placement policy`);
    seen.add(key);
  }
  return { flavour, policies };
}

/** The managed step of a placement file for review and explain; no file means no managed step. */
export async function placementSteps(
  values: { placements?: string; 'capacity-flavour'?: string },
  streams: CliStreams,
): Promise<readonly ManagedStep[]> {
  const file = await readPlacementFile(values, streams);
  return file === undefined ? [] : [createPlacementStep(file)];
}
