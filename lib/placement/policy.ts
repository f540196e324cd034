import { choiceSetting, type Environment } from '../config/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { IssueList, previewInput, readAll } from '../json/index.ts';
import { isDns1123Label, isDns1123Subdomain } from '../syntax/index.ts';
import {
  DEFAULT_MIN_ON_DEMAND,
  DEFAULT_SPOT_PERCENT,
  LIMITS,
  PLACEMENT_MODES as MODES,
  type PlacementMode,
} from '../api/index.ts';
import { CAPACITY_LABELS, type CapacityFlavour, type PlacementPolicy } from './types.ts';

const KNOWN_FIELDS = ['namespace', 'kind', 'name', 'mode', 'spotPercent', 'minOnDemand'];
const MAX_MIN_ON_DEMAND = LIMITS.minOnDemand;
// A policy has six fields; more issues than this are unknown fields of a document that is not a policy at all.
const MAX_ISSUES = 16;

/**
 * Validates a placement policy from untyped input (a file, a CLI flag set, a store item). Throws one
 * MalformedInputError naming the workload and every wrong field; returns the policy with defaults applied.
 */
export function parsePlacementPolicy(input: unknown, source = 'placement policy'): PlacementPolicy {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new MalformedInputError(`${source} must be an object`);
  const value = input as Record<string, unknown>;
  const { namespace, kind, name, mode, spotPercent, minOnDemand } = value;
  const where = `${source} ${String(namespace)}/${String(kind)}/${String(name)}`;
  const issues = new IssueList(MAX_ISSUES);
  const fail = (field: string, reason: string): void => issues.add(field, reason);
  for (const field of Object.keys(value))
    if (!KNOWN_FIELDS.includes(field)) fail(field, `unknown field; expected one of ${KNOWN_FIELDS.join(', ')}`);
  if (typeof namespace !== 'string' || !isDns1123Label(namespace))
    fail('namespace', 'must be a namespace name (DNS-1123 label)');
  if (typeof kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(kind))
    fail('kind', 'must be a workload kind such as Deployment, StatefulSet, CronJob');
  if (typeof name !== 'string' || !isDns1123Subdomain(name))
    fail('name', 'must be a workload name (DNS-1123 subdomain)');
  if (typeof mode !== 'string' || !MODES.includes(mode as PlacementMode))
    fail('mode', `must be one of ${MODES.join(', ')} (got ${previewInput(mode)})`);
  if (spotPercent !== undefined) {
    if (mode !== 'Diversity') fail('spotPercent', 'is only used with mode Diversity');
    if (typeof spotPercent !== 'number' || !Number.isInteger(spotPercent) || spotPercent < 0 || spotPercent > 100) {
      fail('spotPercent', `must be an integer from 0 to 100 (got ${previewInput(spotPercent)})`);
    }
  }
  if (minOnDemand !== undefined) {
    if (mode !== 'Diversity') fail('minOnDemand', 'is only used with mode Diversity');
    if (
      typeof minOnDemand !== 'number' ||
      !Number.isInteger(minOnDemand) ||
      minOnDemand < 0 ||
      minOnDemand > MAX_MIN_ON_DEMAND
    ) {
      fail('minOnDemand', `must be an integer from 0 to ${MAX_MIN_ON_DEMAND} (got ${previewInput(minOnDemand)})`);
    }
  }
  const [first] = issues.issues;
  if (first !== undefined) {
    const listed = issues
      .reported()
      .map((issue) => (issue.field === '' ? issue.reason : `${issue.field}: ${issue.reason}`));
    // Each gathered issue reads on its own (workload and field), as readAll lists them when a file has several.
    const gathered = issues
      .reported()
      .map((issue, index) => ({ field: issue.field, reason: `${where}: ${listed[index]!}` }));
    throw new MalformedInputError(`${where}: ${listed.join('; ')}`, {
      context: { field: first.field, issues: gathered },
    });
  }
  const policy = { namespace, kind, name, mode } as PlacementPolicy;
  return mode === 'Diversity'
    ? {
        ...policy,
        spotPercent: (spotPercent as number | undefined) ?? DEFAULT_SPOT_PERCENT,
        // Left out at its default, so that a policy means one stored form (and content hash) whether 0 was written or not.
        ...(minOnDemand === undefined || minOnDemand === DEFAULT_MIN_ON_DEMAND
          ? {}
          : { minOnDemand: minOnDemand as number }),
      }
    : policy;
}

/** True for a capacity flavour name (karpenter, eks, gke). */
function isCapacityFlavour(value: string): value is CapacityFlavour {
  return Object.hasOwn(CAPACITY_LABELS, value);
}

/** The capacity flavour names, for messages. */
const CAPACITY_FLAVOUR_NAMES: string = Object.keys(CAPACITY_LABELS).join(', ');
/** The capacity flavours, as a list for a setting's choices; karpenter is the default (CAPACITY_FLAVOUR). */
export const CAPACITY_FLAVOURS = Object.keys(CAPACITY_LABELS) as readonly CapacityFlavour[];
export const DEFAULT_CAPACITY_FLAVOUR: CapacityFlavour = 'karpenter';

/** CAPACITY_FLAVOUR, which the admission function and the sync read alike; throws ConfigurationError naming it. */
export function readCapacityFlavour(env: Environment): CapacityFlavour {
  return choiceSetting(env, 'CAPACITY_FLAVOUR', CAPACITY_FLAVOURS, DEFAULT_CAPACITY_FLAVOUR);
}

/** Checks a capacity flavour name, failing with the accepted names. */
export function parseCapacityFlavour(value: string): CapacityFlavour {
  if (isCapacityFlavour(value)) return value;
  throw new MalformedInputError(
    `capacity flavour must be one of ${CAPACITY_FLAVOUR_NAMES} (got ${previewInput(value)})`,
  );
}

/** The lookup key of a workload. */
export function workloadKey(namespace: string, kind: string, name: string): string {
  return `${namespace}/${kind}/${name}`;
}

/**
 * The policies of a placement file's document (YAML or JSON: a list of policies, or `{ policies: [...] }`), every
 * policy checked so that one error lists the wrong fields of all of them; two policies for one workload are malformed.
 */
export function parsePlacementPolicies(document: unknown, source: string): readonly PlacementPolicy[] {
  const list = Array.isArray(document) ? document : (document as { policies?: unknown } | null)?.policies;
  if (!Array.isArray(list))
    throw new MalformedInputError(`${source}: expected a list of placement policies or { policies: [...] }`);
  const policies: PlacementPolicy[] = Object.values(
    readAll(
      Object.fromEntries(list.map((item, index) => [index, () => parsePlacementPolicy(item, `${source}[${index}]`)])),
      MalformedInputError,
    ),
  );
  const seen = new Set<string>();
  for (const policy of policies) {
    const key = workloadKey(policy.namespace, policy.kind, policy.name);
    if (seen.has(key)) throw new MalformedInputError(`${source}: workload ${key} has more than one placement policy`);
    seen.add(key);
  }
  return policies;
}
