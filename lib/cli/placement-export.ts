/**
 * `podmutation placement export`'s conversion: each placement policy of the table as the PodPlacement that places its
 * workload alike, named after the workload, each checked by the one validator of PodPlacements.
 */
import { createHash } from 'node:crypto';
import { Document } from 'yaml';
import {
  describeIssues,
  placementToResource,
  POD_PLACEMENT_KIND,
  validatePodPlacement,
  type NormalizedPlacement,
} from '../api/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { workloadKey, type PlacementPolicy } from '../placement/index.ts';

/** One policy exported: where it came from (`namespace/Kind/name`) and the PodPlacement resource that replaces it. */
interface ExportedPlacement {
  readonly workload: string;
  readonly resource: Record<string, unknown>;
}

// The longest metadata.name (a DNS-1123 subdomain), and the hex digits of the suffix that keeps a shortened name unique.
const MAX_NAME = 253;
const SUFFIX_DIGITS = 10;

/**
 * The readable name of a policy's PodPlacement: `namespace.kind.name`, the kind lowercased. A namespace and a kind hold
 * no dot, so two workloads give the same name only when their kinds differ in case alone.
 */
function readableName(policy: PlacementPolicy): string {
  return `${policy.namespace}.${policy.kind.toLowerCase()}.${policy.name}`;
}

/** The readable name shortened, with a digest of the workload that keeps it unique: for a name too long or shared. */
function digestName(policy: PlacementPolicy): string {
  const digest = createHash('sha256')
    .update(workloadKey(policy.namespace, policy.kind, policy.name))
    .digest('hex')
    .slice(0, SUFFIX_DIGITS);
  const kept = readableName(policy)
    .slice(0, MAX_NAME - SUFFIX_DIGITS - 1)
    .replace(/[.-]+$/, '');
  return `${kept}-${digest}`;
}

/**
 * The PodPlacement names of the policies, in their order: `namespace.kind.name` (a valid DNS-1123 subdomain, since
 * each part is), or, for a name over 253 characters or one two workloads share, it shortened with a digest of the
 * workload. The same table gives the same names.
 */
function placementNames(policies: readonly PlacementPolicy[]): string[] {
  const counts = new Map<string, number>();
  for (const policy of policies) counts.set(readableName(policy), (counts.get(readableName(policy)) ?? 0) + 1);
  return policies.map((policy) => {
    const name = readableName(policy);
    return name.length <= MAX_NAME && counts.get(name) === 1 ? name : digestName(policy);
  });
}

/**
 * Each policy as the PodPlacement that places exactly its workload as the policy does: enabled, priority 0, its
 * workload's namespace, kind and name as the selector, and the policy's mode and terms. Each is checked by
 * validatePodPlacement; one that fails is a MalformedInputError naming the policy.
 */
export function exportedPlacements(policies: readonly PlacementPolicy[]): ExportedPlacement[] {
  const names = placementNames(policies);
  return policies.map((policy, index) => {
    // The rest of a policy is its mode and that mode's terms, which a PodPlacement spells alike.
    const { namespace, kind, name, ...terms } = policy;
    const placement: NormalizedPlacement = {
      name: names[index]!,
      enable: true,
      priority: 0,
      workloadSelector: { namespaces: [namespace], kinds: [kind], names: [name] },
      ...terms,
    };
    const resource = placementToResource(placement);
    const workload = workloadKey(namespace, kind, name);
    const verdict = validatePodPlacement(resource);
    if (!verdict.valid)
      throw new MalformedInputError(
        `placement policy ${workload} cannot be exported: ${describeIssues(verdict.invalid, POD_PLACEMENT_KIND).join('; ')}`,
      );
    return { workload, resource };
  });
}

/** The exported PodPlacements as a multi-document YAML stream, each document under a comment naming its policy. */
export function placementsYaml(exported: readonly ExportedPlacement[]): string {
  return exported
    .map(({ workload, resource }) => {
      const document = new Document(resource);
      document.commentBefore = ` From the placement policy of ${workload}.`;
      return document.toString();
    })
    .join('---\n');
}
