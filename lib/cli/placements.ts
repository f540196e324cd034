import type { ManagedStep } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { createPlacementStep, parseCapacityFlavour, parsePlacementPolicy, workloadKey, type PlacementPolicy } from '../placement/index.ts';
import { parseSingleDocument, readInput, type CliStreams } from './io.ts';

/** The `--placements FILE` and `--capacity-flavour` options shared by review and explain. */
export const PLACEMENT_OPTIONS = {
  placements: { type: 'string' },
  'capacity-flavour': { type: 'string', default: 'karpenter' },
} as const;

/**
 * Reads a placement file (YAML or JSON: a list of policies, or `{ policies: [...] }`) into the
 * managed step; no file means no managed step. Duplicate workloads are malformed input.
 */
export async function placementSteps(
  values: { placements?: string; 'capacity-flavour'?: string },
  streams: CliStreams,
): Promise<readonly ManagedStep[]> {
  if (values.placements === undefined) return [];
  const flavour = parseCapacityFlavour(values['capacity-flavour'] ?? 'karpenter');
  const document = parseSingleDocument(await readInput(values.placements, streams), values.placements);
  const list = Array.isArray(document) ? document : (document as { policies?: unknown } | null)?.policies;
  if (!Array.isArray(list)) throw new MalformedInputError(`${values.placements}: expected a list of placement policies or { policies: [...] }`);
  const policies: PlacementPolicy[] = list.map((item, index) => parsePlacementPolicy(item, `${values.placements}[${index}]`));
  const seen = new Set<string>();
  for (const policy of policies) {
    const key = workloadKey(policy.namespace, policy.kind, policy.name);
    if (seen.has(key)) throw new MalformedInputError(`${values.placements}: workload ${key} has more than one placement policy`);
    seen.add(key);
  }
  return [createPlacementStep({ flavour, policies })];
}
