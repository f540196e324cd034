/**
 * The Schedulable condition of each rule the migration report judged: False when some Pod it matches in the cluster,
 * recreated with it, would fit nowhere while it fit before (the report's unschedulable count, judged against the
 * capacity the sync publishes); True when none would; Unknown when that cannot be told. Pure.
 */
import { additionsStrand, type NormalizedRule } from '../api/index.ts';
import { FIT_CAVEAT, type Capacity } from '../capacity/index.ts';
import type { MigrationReport } from '../report/index.ts';
import type { ConditionFields } from './conditions.ts';

/** The condition's type on a PodMutation's status. */
const SCHEDULABLE = 'Schedulable';

/** Why the condition has its status; each has one message form below. */
type SchedulableReason =
  'PodsFit' | 'PodsWouldFitNowhere' | 'CapacityUnknown' | 'Audited' | 'AdditionsFitNowhere' | 'PodsNotJudged';

/** The Schedulable condition a rule should carry. */
interface SchedulableFields extends ConditionFields {
  readonly reason: SchedulableReason;
}

// Room for the example's reason (bounded by the report at 240 characters) and the caveat, far below the CRD's 32768.
const FITS_MESSAGE = `no Pod the rule matches that fits somewhere now would fit nowhere once recreated with it; ${FIT_CAVEAT}`;
const CAPACITY_UNKNOWN_MESSAGE =
  "the sync could not read the cluster's Nodes and NodePools (CapacityUnpublished; its log says why), so only Pods " +
  'whose own constraints the rule would contradict were looked for, and there were none';
const AUDITED_MESSAGE =
  'the rule is audited: it changes no Pod, so it strands none; its Pods are judged once it is enforced';

const NOT_JUDGED_MESSAGE =
  "what the rule adds fits some Node or NodePool by node labels; the Pods it matches are judged only while the sync's " +
  'migration report is on (REPORT_INTERVAL_MINUTES, and the grant of infra/rbac-sync-report.yaml)';
const UNPUBLISHED_MESSAGE =
  "the sync could not read the cluster's Nodes and NodePools (CapacityUnpublished; its log says why), so what the " +
  'rule adds was not judged';

const pods = (count: number) => `${count} Pod${count === 1 ? '' : 's'}`;

/** The first workload whose changed Pods fit nowhere among those the rule applies to, as `Kind namespace/name: reason`. */
function exampleOf(report: MigrationReport, rule: string): string | undefined {
  const workload = report.workloads.find((row) => row.fit?.kind === 'nowhere' && row.rules.includes(rule));
  return workload === undefined
    ? undefined
    : `${workload.kind} ${workload.namespace}/${workload.name}: ${workload.fit!.reason}`;
}

/** How the report was judged, and which rules admission holds back from a Pod they would strand. */
interface SchedulableContext {
  /**
   * False when the report was judged without a capacity (Capacity.unknown()): then only a contradiction within a Pod's
   * constraints is found, and a rule that makes none is Unknown, not True.
   */
  readonly capacityKnown: boolean;
  /** The rules annotated if-unschedulable: skip. */
  readonly skipRules: ReadonlySet<string>;
}

/** The message of a rule that strands Pods: how many, what becomes of them, one example. */
function strandedMessage(report: MigrationReport, rule: MigrationReport['rules'][number], skip: boolean): string {
  const example = exampleOf(report, rule.name);
  const outcome = skip
    ? ' with it, so admission holds it back from them (if-unschedulable: skip) and they stay where they run'
    : ' once recreated with it';
  return (
    `${pods(rule.unschedulable)} the rule matches would go from fitting somewhere to fitting nowhere${outcome}` +
    `${example === undefined ? '' : `, e.g. ${example}`}; ${FIT_CAVEAT}`
  );
}

/** Each rule of the report with the Schedulable condition it should carry. */
function schedulableConditions(
  report: MigrationReport,
  context: SchedulableContext,
): ReadonlyMap<string, SchedulableFields> {
  return new Map(
    report.rules.map((rule): [string, SchedulableFields] => {
      if (rule.enforcement === 'audit')
        return [rule.name, { status: 'Unknown', reason: 'Audited', message: AUDITED_MESSAGE }];
      if (rule.unschedulable > 0) {
        const message = strandedMessage(report, rule, context.skipRules.has(rule.name));
        return [rule.name, { status: 'False', reason: 'PodsWouldFitNowhere', message }];
      }
      return [
        rule.name,
        context.capacityKnown
          ? { status: 'True', reason: 'PodsFit', message: FITS_MESSAGE }
          : { status: 'Unknown', reason: 'CapacityUnknown', message: CAPACITY_UNKNOWN_MESSAGE },
      ];
    }),
  );
}

/**
 * The Schedulable condition of an enabled rule while the migration report is off, judged on what the rule adds alone
 * (lib/api additionsStrand): False when its additions fit no Node and no NodePool, so that every Pod it changes would fit
 * nowhere; otherwise Unknown, since its Pods are not listed and a rule can strand them by what it removes or by their
 * own constraints. `capacity` is undefined when the sync published none.
 */
function additionsCondition(rule: NormalizedRule, capacity: Capacity | undefined): SchedulableFields {
  if (rule.enforcement === 'audit') return { status: 'Unknown', reason: 'Audited', message: AUDITED_MESSAGE };
  if (capacity === undefined) return { status: 'Unknown', reason: 'CapacityUnknown', message: UNPUBLISHED_MESSAGE };
  const reason = additionsStrand(rule, capacity);
  return reason === undefined
    ? { status: 'Unknown', reason: 'PodsNotJudged', message: NOT_JUDGED_MESSAGE }
    : { status: 'False', reason: 'AdditionsFitNowhere', message: `${reason}; ${FIT_CAVEAT}` };
}

export { SCHEDULABLE, additionsCondition, schedulableConditions };
export type { SchedulableContext, SchedulableFields };
