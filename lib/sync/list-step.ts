/** The list-and-validate step of a sync: the cluster's PodMutations listed and assessed into snapshot content. */
import type { PodMutationList, PodMutationSource } from '../cluster/index.ts';
import type { SnapshotContent } from '../store/index.ts';
import type { ListedFields, SyncStep } from './report.ts';
import { assessList, snapshotContentOf, type AssessedResource } from './snapshot.ts';

/** A list read and assessed: what it holds, its counts and the content to publish. */
interface ListedRules {
  readonly listStartedMs: number;
  readonly resources: readonly AssessedResource[];
  readonly content: SnapshotContent;
  /** The list's fields of the report: list start, resourceVersion and counts. */
  readonly counts: ListedFields & { readonly resources: number; readonly valid: number; readonly invalid: number };
}

/** Why the step stopped: the step, its error, and what it had seen. */
interface ListFailure {
  readonly failedStep: Extract<SyncStep, 'list' | 'validate'>;
  readonly error: unknown;
  readonly seen: Partial<ListedFields> & { readonly resources?: number };
}

/** Lists and assesses the cluster's PodMutations, starting the list now; a failure says which step failed. */
async function listAndValidate(
  source: Pick<PodMutationSource, 'listPodMutations'>,
  clock: () => number,
): Promise<ListedRules | ListFailure> {
  // The list starts inside the lease: a sync that waited for it lists what the cluster holds after the holder's publish.
  const listStartedMs = clock();
  const listStartedAt = new Date(listStartedMs).toISOString();
  let list: PodMutationList;
  try {
    list = await source.listPodMutations();
  } catch (error) {
    return { failedStep: 'list', error, seen: { listStartedAt } };
  }
  const listed = { listStartedAt, resources: list.items.length, resourceVersion: list.resourceVersion };
  let resources: readonly AssessedResource[];
  try {
    resources = assessList(list);
  } catch (error) {
    return { failedStep: 'validate', error, seen: listed };
  }
  const content = snapshotContentOf(resources, list.resourceVersion, listStartedMs);
  const counts = { ...listed, valid: content.rules.length, invalid: content.invalid.length };
  return { listStartedMs, resources, content, counts };
}

export { listAndValidate };
export type { ListedRules };
