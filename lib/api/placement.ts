/**
 * The validator of the PodPlacement contract: the same envelope and workloadSelector as a PodMutation (read by the same
 * code, with the same messages), then the placement itself (mode, spotPercent, minOnDemand).
 */
import { isJsonObject, IssueList, type Issue } from '../json/index.ts';
import { kindWarnings } from './kinds.ts';
import { PodPlacementSpecSchema, type PodPlacementSpec } from './schema.ts';
import { validateStructure } from './structure.ts';
import {
  DEFAULT_MIN_ON_DEMAND,
  DEFAULT_SPOT_PERCENT,
  POD_MUTATION_API_VERSION,
  POD_PLACEMENT_KIND,
} from './constants.ts';
import { enableWarning, readAnnotations, readEnvelope } from './validate.ts';
import type { NormalizedPlacement, PlacementVerdict } from './types.ts';

/** Issues kept per placement, as per rule. */
const MAX_ISSUES = 32;

function invalid(name: string, generation: number | undefined, issues: IssueList): PlacementVerdict {
  const reported = issues.reported();
  return {
    valid: false,
    invalid: generation === undefined ? { name, issues: reported } : { name, generation, issues: reported },
  };
}

/**
 * Validates one PodPlacement resource and normalizes it (defaults applied, unknown fields rejected). Pure; every issue
 * names its field path. It takes no annotation under the product's prefix: a misspelt one is an issue, not ignored.
 */
export function validatePodPlacement(resource: unknown): PlacementVerdict {
  const issues = new IssueList(MAX_ISSUES);
  const envelope = readEnvelope(resource, POD_PLACEMENT_KIND, issues);
  const { name, generation, metadata } = envelope;
  if (envelope.resource === undefined) return invalid(name, generation, issues);
  if (metadata !== undefined) readAnnotations(metadata, issues, []);
  const { spec } = envelope.resource;
  if (!isJsonObject(spec)) {
    issues.add('spec', 'must be an object');
    return invalid(name, generation, issues);
  }
  const normalized = validateStructure(PodPlacementSpecSchema, spec, 'spec', issues) as PodPlacementSpec;
  if (issues.count > 0) return invalid(name, generation, issues);
  const diversity =
    normalized.mode === 'Diversity'
      ? {
          spotPercent: normalized.spotPercent ?? DEFAULT_SPOT_PERCENT,
          minOnDemand: normalized.minOnDemand ?? DEFAULT_MIN_ON_DEMAND,
        }
      : {};
  return {
    valid: true,
    placement: {
      name,
      ...(generation === undefined ? {} : { generation }),
      enable: normalized.enable === true,
      priority: normalized.priority ?? 0,
      workloadSelector: normalized.workloadSelector,
      mode: normalized.mode,
      ...diversity,
    },
  };
}

/** What a valid PodPlacement says that it likely does not mean: enable left out, a kind that is a near miss. */
export function placementWarnings(placement: NormalizedPlacement, resource?: unknown): Issue[] {
  const disabled = enableWarning(resource, 'placement', 'places no Pod');
  return [...disabled, ...kindWarnings(placement.workloadSelector.kinds)];
}

/** The PodPlacement resource a normalized placement stands for (the inverse of normalization). Pure. */
export function placementToResource(placement: NormalizedPlacement): Record<string, unknown> {
  const { name, generation, enable, priority, workloadSelector, mode, spotPercent, minOnDemand } = placement;
  return {
    apiVersion: POD_MUTATION_API_VERSION,
    kind: POD_PLACEMENT_KIND,
    metadata: { name, ...(generation === undefined ? {} : { generation }) },
    spec: {
      enable,
      priority,
      workloadSelector,
      mode,
      ...(spotPercent === undefined ? {} : { spotPercent }),
      ...(minOnDemand === undefined ? {} : { minOnDemand }),
    },
  };
}
