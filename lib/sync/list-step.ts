/**
 * The list-and-validate step of a sync: the cluster's PodMutations and PodPlacements listed and assessed into snapshot
 * content.
 */
import type { PodMutationList, PodMutationSource } from '../cluster/index.ts';
import { ClusterError } from '../errors/index.ts';
import type { SnapshotContent } from '../store/index.ts';
import type { ListedFields, PlacementCounts, SyncStep } from './sync-report.ts';
import { assessLists, snapshotContentOf, type AssessedPlacement, type AssessedResource } from './snapshot.ts';

/** A list read and assessed: what it holds, its counts and the content to publish. */
interface ListedRules {
  readonly listStartedMs: number;
  readonly resources: readonly AssessedResource[];
  /** The PodPlacements listed (none when the cluster has no PodPlacement CRD). */
  readonly placements: readonly AssessedPlacement[];
  readonly content: SnapshotContent;
  /** The list's fields of the report: list start, resourceVersion and counts. */
  readonly counts: ListedFields & {
    readonly resources: number;
    readonly valid: number;
    readonly invalid: number;
    readonly placements: PlacementCounts;
  };
}

/** Why the step stopped: the step, its error, and what it had seen. */
interface ListFailure {
  readonly failedStep: Extract<SyncStep, 'list' | 'validate'>;
  readonly error: unknown;
  readonly seen: Partial<ListedFields> & { readonly resources?: number };
}

/**
 * The cluster's PodPlacements, or undefined when the cluster has no PodPlacement CRD yet (the list answers 404): a
 * cluster upgraded before its CRD was applied keeps syncing its PodMutations. Any other failure rejects.
 */
async function listPlacements(
  source: Pick<PodMutationSource, 'listPodPlacements'>,
): Promise<PodMutationList | undefined> {
  try {
    return await source.listPodPlacements();
  } catch (error) {
    if (error instanceof ClusterError && error.context['reason'] === 'notFound') return undefined;
    throw error;
  }
}

/**
 * Lists and assesses the cluster's PodMutations and PodPlacements, starting the list now; a failure of either list
 * fails the step (but a PodPlacement CRD not installed, read as none), and says which step failed.
 */
async function listAndValidate(
  source: Pick<PodMutationSource, 'listPodMutations' | 'listPodPlacements'>,
  clock: () => number,
): Promise<ListedRules | ListFailure> {
  // The list starts inside the lease: a sync that waited for it lists what the cluster holds after the holder's publish.
  const listStartedMs = clock();
  const listStartedAt = new Date(listStartedMs).toISOString();
  let list: PodMutationList;
  let placementList: PodMutationList | undefined;
  try {
    [list, placementList] = await Promise.all([source.listPodMutations(), listPlacements(source)]);
  } catch (error) {
    return { failedStep: 'list', error, seen: { listStartedAt } };
  }
  const listed = { listStartedAt, resources: list.items.length, resourceVersion: list.resourceVersion };
  let assessed: ReturnType<typeof assessLists>;
  try {
    assessed = assessLists(list, placementList);
  } catch (error) {
    return { failedStep: 'validate', error, seen: listed };
  }
  const { resources, placements } = assessed;
  const content = snapshotContentOf(resources, list.resourceVersion, listStartedMs, placements);
  const placementsValid = content.placements?.length ?? 0;
  const counts = {
    ...listed,
    valid: content.rules.length,
    invalid: content.invalid.length,
    placements: {
      crdInstalled: placementList !== undefined,
      resources: placements.length,
      valid: placementsValid,
      invalid: placements.length - placementsValid,
    },
  };
  return { listStartedMs, resources, placements, content, counts };
}

export { listAndValidate };
export type { ListedRules };
