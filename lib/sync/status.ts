/** The Accepted condition each PodMutation should carry, and which resources need a status write. Pure. */
import { describeIssues, type Enforcement, type RuleVerdict } from '../api/index.ts';
import type { AssessedResource } from './snapshot.ts';
import { isJsonObject, type Issue } from '../values/index.ts';

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

/** One status write: the resource and the whole status to merge-patch onto it. */
interface StatusUpdate {
  readonly name: string;
  readonly status: PodMutationStatus;
}

const ACCEPTED = 'Accepted';
const VALID_MESSAGE = 'the rule passed validation and is published to admission';
// The CRD allows 32768 characters; a quarter of that keeps the status small and still names many issues.
const MAX_MESSAGE_CHARS = 8_192;

/**
 * The condition fields that make up a verdict; a write is due when any of them differs. A valid rule's warnings (what
 * `validate` warns about, ruleWarnings) follow its message, each as `warning: …`: the rule is accepted and served as
 * written.
 */
function verdictFields(
  verdict: RuleVerdict,
  warnings: readonly Issue[],
): Pick<AcceptedCondition, 'status' | 'reason' | 'message'> {
  if (!verdict.valid)
    return { status: 'False', reason: 'Invalid', message: joinedMessage(describeIssues(verdict.invalid)) };
  const lines = describeIssues({ name: verdict.rule.name, issues: warnings }).map((line) => `warning: ${line}`);
  return { status: 'True', reason: 'Valid', message: joinedMessage(lines, VALID_MESSAGE) };
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

/**
 * The status write a resource needs at `now` (ISO-8601), or undefined when its Accepted condition already states
 * its verdict for its current generation. lastTransitionTime moves only when the condition's status flips.
 */
function statusUpdateFor(resource: AssessedResource, now: string): StatusUpdate | undefined {
  const current = isJsonObject(resource.status) ? resource.status : {};
  const conditions = Array.isArray(current['conditions']) ? (current['conditions'] as readonly unknown[]) : [];
  const index = conditions.findIndex((condition) => isJsonObject(condition) && condition['type'] === ACCEPTED);
  const existing = index === -1 ? undefined : (conditions[index] as Readonly<Record<string, unknown>>);
  const wanted = verdictFields(resource.verdict, resource.warnings ?? []);
  const { generation } = resource;
  // An annotation edit does not move metadata.generation, so the enforcement is compared on its own.
  const enforcement = resource.verdict.valid ? resource.verdict.rule.enforcement : undefined;
  const currentEnforcement = current['enforcement'] ?? undefined;
  const upToDate =
    currentEnforcement === enforcement &&
    existing !== undefined &&
    existing['status'] === wanted.status &&
    existing['reason'] === wanted.reason &&
    existing['message'] === wanted.message &&
    (generation === undefined ||
      (current['observedGeneration'] === generation && existing['observedGeneration'] === generation));
  if (upToDate) return undefined;

  const keptTransition = existing?.['status'] === wanted.status ? existing['lastTransitionTime'] : undefined;
  const condition: AcceptedCondition = {
    type: ACCEPTED,
    ...wanted,
    lastTransitionTime: typeof keptTransition === 'string' ? keptTransition : now,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
  // A merge patch replaces the whole array, so the patch repeats every other condition as it was.
  const nextConditions =
    index === -1 ? [...conditions, condition] : conditions.map((entry, at) => (at === index ? condition : entry));
  return {
    name: resource.name,
    status: {
      conditions: nextConditions,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastSyncTime: now,
      ...(enforcement !== undefined ? { enforcement } : currentEnforcement === undefined ? {} : { enforcement: null }),
    },
  };
}

/** The status writes due for a list's resources at `now` (ISO-8601), in list order. */
function planStatusUpdates(resources: readonly AssessedResource[], now: string): readonly StatusUpdate[] {
  return Object.freeze(
    resources.flatMap((resource) => {
      const update = statusUpdateFor(resource, now);
      return update === undefined ? [] : [update];
    }),
  );
}

export { planStatusUpdates };
