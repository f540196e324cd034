/**
 * The Accepted condition each PodMutation and PodPlacement should carry (and, while the migration report is off, a
 * PodMutation's Schedulable one), and which resources need a status write. Pure.
 */
import {
  describeIssues,
  type Enforcement,
  type NormalizedRule,
  type PlacementVerdict,
  type RuleVerdict,
} from '../api/index.ts';
import type { SyncedKind } from '../cluster/index.ts';
import { conditionsOf, conditionUpToDate, findCondition, withCondition, withoutCondition } from './conditions.ts';
import { SCHEDULABLE, type SchedulableFields } from './schedulable.ts';
import type { Assessed, AssessedPlacement, AssessedResource } from './snapshot.ts';
import { isJsonObject } from '../json/index.ts';

/** The Accepted condition as the CRD's status schema describes it (a metav1.Condition). */
interface AcceptedCondition {
  readonly type: 'Accepted';
  readonly status: 'True' | 'False';
  readonly reason: 'Valid' | 'Invalid';
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration?: number;
}

/** The `.status` the sync writes; other conditions already present are carried over unchanged. */
interface PodMutationStatus {
  readonly conditions: readonly unknown[];
  readonly observedGeneration?: number;
  readonly lastSyncTime: string;
  /** The valid rule's enforcement; null removes a stale one from a rule that is now invalid (JSON merge patch). */
  readonly enforcement?: Enforcement | null;
}

/** One status write: the resource (a PodMutation unless `kind` says otherwise) and the whole status to merge-patch onto it. */
interface StatusUpdate {
  readonly name: string;
  readonly kind?: SyncedKind;
  readonly status: PodMutationStatus;
}

const ACCEPTED = 'Accepted';
const VALID_MESSAGES: Readonly<Record<SyncedKind, string>> = {
  PodMutation: 'the rule passed validation and is published to admission',
  PodPlacement: 'the placement passed validation and is published to admission',
};
// The CRD allows 32768 characters; a quarter of that keeps the status small and still names many issues.
const MAX_MESSAGE_CHARS = 8_192;

/**
 * The condition fields that make up a verdict; a write is due when any of them differs. A valid resource's warnings
 * (what `validate` warns about: ruleWarnings, placementWarnings) follow its message, each as `warning: …`: the
 * resource is accepted and served as written.
 */
function verdictFields(
  resource: Assessed<RuleVerdict | PlacementVerdict>,
  kind: SyncedKind,
): Pick<AcceptedCondition, 'status' | 'reason' | 'message'> {
  const { verdict } = resource;
  if (!verdict.valid)
    return { status: 'False', reason: 'Invalid', message: joinedMessage(describeIssues(verdict.invalid, kind)) };
  const warnings = describeIssues({ name: resource.name, issues: resource.warnings ?? [] }, kind);
  const lines = warnings.map((line) => `warning: ${line}`);
  return { status: 'True', reason: 'Valid', message: joinedMessage(lines, VALID_MESSAGES[kind]) };
}

/** The messages joined (after `first`), cut to MAX_MESSAGE_CHARS with a note saying so. */
function joinedMessage(lines: readonly string[], first?: string): string {
  const message = (first === undefined ? lines : [first, ...lines]).join('; ');
  if (message.length <= MAX_MESSAGE_CHARS) return message;
  const note = ` ... (truncated; ${lines.length} issues in all)`;
  let cut = MAX_MESSAGE_CHARS - note.length;
  // Never end on the first half of a surrogate pair.
  const last = message.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return `${message.slice(0, cut)}${note}`;
}

/** The Schedulable condition an enabled valid rule should carry, from the status step rather than the report. */
type SchedulableOf = (rule: NormalizedRule) => SchedulableFields;

/**
 * The conditions with Schedulable set as `schedulableOf` says for an enabled valid rule and removed from any other, or
 * undefined when they already say it; always undefined without `schedulableOf` (the migration report owns it then).
 */
function schedulableChange(
  conditions: readonly unknown[],
  resource: AssessedResource,
  schedulableOf: SchedulableOf | undefined,
  now: string,
): readonly unknown[] | undefined {
  if (schedulableOf === undefined) return undefined;
  const { verdict, generation } = resource;
  if (!verdict.valid || !verdict.rule.enable) return withoutCondition(conditions, SCHEDULABLE);
  const wanted = schedulableOf(verdict.rule);
  if (conditionUpToDate(findCondition(conditions, SCHEDULABLE).existing, wanted, generation)) return undefined;
  return withCondition(conditions, SCHEDULABLE, wanted, { generation, now });
}

/**
 * The status write a resource of `kind` needs at `now` (ISO-8601), or undefined when its Accepted condition already
 * states its verdict for its current generation and `schedulable` (given the conditions with Accepted set) changes
 * nothing more. lastTransitionTime moves only when a condition's status flips.
 */
function statusUpdateFor(
  resource: Assessed<RuleVerdict | PlacementVerdict>,
  kind: SyncedKind,
  now: string,
  schedulable: (accepted: readonly unknown[]) => readonly unknown[] | undefined,
): StatusUpdate | undefined {
  const current = isJsonObject(resource.status) ? resource.status : {};
  const listed = conditionsOf(current);
  const { existing } = findCondition(listed, ACCEPTED);
  const wanted = verdictFields(resource, kind);
  const { generation, verdict } = resource;
  // An annotation edit does not move metadata.generation, so the enforcement is compared on its own.
  const enforcement = verdict.valid && 'rule' in verdict ? verdict.rule.enforcement : undefined;
  const currentEnforcement = current['enforcement'] ?? undefined;
  // Accepted first, so that a new rule's conditions read Accepted, then Schedulable.
  const accepted = withCondition(listed, ACCEPTED, wanted, { generation, now });
  const changed = schedulable(accepted);
  const upToDate =
    changed === undefined &&
    currentEnforcement === enforcement &&
    conditionUpToDate(existing, wanted, generation) &&
    (generation === undefined || current['observedGeneration'] === generation);
  if (upToDate) return undefined;
  return {
    name: resource.name,
    ...(kind === 'PodMutation' ? {} : { kind }),
    status: {
      conditions: changed ?? accepted,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastSyncTime: now,
      ...(enforcement !== undefined ? { enforcement } : currentEnforcement === undefined ? {} : { enforcement: null }),
    },
  };
}

/**
 * The status writes due for a list's resources at `now` (ISO-8601), in list order; with `schedulableOf`, each enabled
 * valid rule's Schedulable condition too (the sync passes it while the migration report is off).
 */
function planStatusUpdates(
  resources: readonly AssessedResource[],
  now: string,
  schedulableOf?: SchedulableOf,
): readonly StatusUpdate[] {
  return Object.freeze(
    resources.flatMap((resource) => {
      const schedulable = (accepted: readonly unknown[]) => schedulableChange(accepted, resource, schedulableOf, now);
      const update = statusUpdateFor(resource, 'PodMutation', now, schedulable);
      return update === undefined ? [] : [update];
    }),
  );
}

/** The status writes due for a list's PodPlacements at `now` (ISO-8601), in list order: their Accepted condition. */
function planPlacementStatusUpdates(placements: readonly AssessedPlacement[], now: string): readonly StatusUpdate[] {
  return Object.freeze(
    placements.flatMap((placement) => {
      const update = statusUpdateFor(placement, 'PodPlacement', now, () => undefined);
      return update === undefined ? [] : [update];
    }),
  );
}

/**
 * The resources of `kind` with the statuses `updates` write to that kind merged over theirs (top-level members
 * replaced, as a merge patch does).
 */
function withStatusUpdates<R extends Assessed<RuleVerdict | PlacementVerdict>>(
  resources: readonly R[],
  updates: readonly StatusUpdate[],
  kind: SyncedKind = 'PodMutation',
): readonly R[] {
  const ofKind = updates.filter((update) => (update.kind ?? 'PodMutation') === kind);
  const byName = new Map(ofKind.map((update) => [update.name, update.status]));
  return resources.map((resource) => {
    const update = byName.get(resource.name);
    if (update === undefined) return resource;
    const current = isJsonObject(resource.status) ? resource.status : {};
    const merged = Object.fromEntries(
      Object.entries({ ...current, ...update }).filter(([, value]) => value !== null && value !== undefined),
    );
    return { ...resource, status: merged };
  });
}

export { planPlacementStatusUpdates, planStatusUpdates, withStatusUpdates };
