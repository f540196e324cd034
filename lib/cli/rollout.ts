import { randomBytes } from 'node:crypto';
import { Option, type Command } from 'commander';
import { ClusterError, MalformedInputError } from '../errors/index.ts';
import {
  parseLabelSelector,
  planRecords,
  planRollout,
  rfc3339,
  runRollout,
  selects,
  type RolloutPlan,
  type RolloutRecord,
} from '../rollout/index.ts';
import { isJsonObject, previewInput, stringMap } from '../json/index.ts';
import { isDns1123Label } from '../syntax/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { writeLine } from './io.ts';
import { fitCaveatLine } from './options/capacity.ts';
import { namespaceOptions } from './options/namespace.ts';
import { enforcementOption } from './options/enforcement.ts';
import { placementOptions, type PlacementFlags } from './options/placement-file.ts';
import { allowEmptyOption, rulesOption } from './options/rules.ts';
import { readReport, type ReportInputs } from './report.ts';
import { kubeconfigOf, kubeconfigOptions, type KubeconfigFile, type KubeconfigFlags } from './options/kubeconfig.ts';

interface RolloutFlags extends PlacementFlags, KubeconfigFlags {
  readonly rules?: string[];
  readonly allowEmpty?: boolean;
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly selector?: string;
  readonly maxConcurrent: string;
  readonly pause?: string;
  readonly timeout: string;
  readonly continueOnFailure?: boolean;
  readonly dryRun?: boolean;
  readonly allowUnschedulable?: boolean;
  readonly output: 'table' | 'json';
  readonly enforcement: string;
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A duration as Go's time.ParseDuration writes it, in whole units: `90s`, `5m`, `1h30m`, `500ms`. */
function parseDuration(flag: string, text: string): number {
  if (!/^(\d+(ms|s|m|h))+$/.test(text))
    throw new MalformedInputError(`${flag} ${previewInput(text)} is not a duration (such as 30s, 5m or 1h30m)`);
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) total += Number(amount) * UNITS[unit!]!;
  if (total === 0 && flag === '--timeout') throw new MalformedInputError('--timeout must be above 0');
  return total;
}

function checkedFlags(values: RolloutFlags, env: CliContext['env']) {
  const { namespace } = values;
  if (namespace !== undefined && !isDns1123Label(namespace))
    throw new MalformedInputError(`--namespace ${previewInput(namespace)} is not a namespace name`);
  if (!/^\d+$/.test(values.maxConcurrent) || Number(values.maxConcurrent) < 1)
    throw new MalformedInputError(`--max-concurrent ${previewInput(values.maxConcurrent)} is not a positive integer`);
  const cluster = kubeconfigOf(values, env);
  return {
    cluster,
    maxConcurrent: Number(values.maxConcurrent),
    timeoutMs: parseDuration('--timeout', values.timeout),
    pauseMs: values.pause === undefined ? 0 : parseDuration('--pause', values.pause),
    selector: values.selector === undefined ? undefined : parseLabelSelector(values.selector),
  };
}

/** One progress line for people: the wave, the workload, its state and why. */
function renderRecord(record: RolloutRecord): string {
  if (record.type === 'verdict') {
    return `rollout ${record.rollout}: ${record.pending} pending and ${record.denied} denied Pods after the last wave; ${record.failed} failed, ${record.skipped} skipped, ${record.unschedulable} unschedulable`;
  }
  const wave = record.wave === 0 ? '-' : `wave ${record.wave}`;
  const state = record.state === 'by-hand' ? 'recreate by hand' : record.state;
  return `${wave} ${record.kind} ${record.namespace}/${record.name}: ${state}${record.reason === '' ? '' : ` (${record.reason})`}`;
}

/** Keeps the planned workloads whose own labels the -l selector selects, as `kubectl rollout restart -l` does. */
async function selected(
  plan: RolloutPlan,
  selector: ReturnType<typeof checkedFlags>['selector'],
  cluster: KubeconfigFile,
  size: number,
): Promise<RolloutPlan> {
  if (selector === undefined) return plan;
  const { createRolloutTarget } = await import('../cluster/index.ts');
  const target = createRolloutTarget(cluster);
  const kept = [];
  for (const workload of plan.waves.flat()) {
    const object = await target.getWorkload(workload.kind, workload.namespace, workload.name);
    const metadata = isJsonObject(object) && isJsonObject(object.metadata) ? object.metadata : {};
    if (
      selects(
        selector,
        stringMap(metadata.labels, `${workload.kind} ${workload.namespace}/${workload.name}.metadata.labels`),
      )
    )
      kept.push(workload);
  }
  const waves = [];
  for (let start = 0; start < kept.length; start += size) waves.push(kept.slice(start, start + size));
  return { waves, leftAlone: plan.leftAlone };
}

/**
 * The report's pending workloads restarted in waves: the same inputs and verdicts as `report`; after the
 * last wave the report is read again. 0 when no Pod is pending or denied; 1 when some are, or a workload failed; 2 for
 * bad flags or a cluster that cannot be read.
 */
async function rollout(values: RolloutFlags, { streams, env }: CliContext): Promise<number> {
  const flags = checkedFlags(values, env);
  const inputs: ReportInputs = { ...values, cluster: flags.cluster };
  const print = (record: RolloutRecord): void =>
    writeLine(streams.stdout, values.output === 'json' ? JSON.stringify(record) : renderRecord(record));
  const id = `${rfc3339(Date.now()).replace(/[-:]/g, '')}-${randomBytes(3).toString('hex')}`;
  // A cluster that cannot be read exits 2 (the command's unreadableExit), not 1: a wait loop reads 1 as "not yet".
  const read = await readReport(inputs, streams);
  const before = read.result;
  // Without the cluster's Nodes and NodePools no restart can be known not to strand its Pods: nothing is restarted.
  if (read.capacityUnread !== undefined && values.allowUnschedulable !== true && values.dryRun !== true)
    throw new ClusterError(
      `rollout cannot tell whether the recreated Pods would fit: ${read.capacityUnread}; nothing was restarted. Grant list on nodes and nodepools.karpenter.sh (infra/rbac-rollout.yaml), or pass --allow-unschedulable to restart without the check`,
    );
  const plan = await selected(
    planRollout(before, flags.maxConcurrent, { allowUnschedulable: values.allowUnschedulable === true }),
    flags.selector,
    flags.cluster,
    flags.maxConcurrent,
  );
  for (const record of planRecords(plan, id, rfc3339(Date.now()))) print(record);
  // Left alone, an unschedulable workload stays pending: never a success, whatever the report read again says.
  const unschedulable = plan.leftAlone.filter((alone) => alone.state === 'unschedulable').length;
  // Said once under the verdicts shown, for people; the JSON records are read by programs.
  if (unschedulable > 0 && values.output === 'table') writeLine(streams.stdout, fitCaveatLine());
  if (values.dryRun === true)
    return before.totals.pending > 0 || before.totals.denied > 0 || unschedulable > 0 ? EXIT.findings : EXIT.ok;

  const { createRolloutTarget } = await import('../cluster/index.ts');
  const outcome = await runRollout(
    plan,
    createRolloutTarget(flags.cluster),
    { id, timeoutMs: flags.timeoutMs, pauseMs: flags.pauseMs, continueOnFailure: values.continueOnFailure === true },
    print,
  );
  const after = (await readReport(inputs, streams, { again: true })).result;
  const { pending, denied } = after.totals;
  const exit = pending > 0 || denied > 0 || outcome.failed > 0 || unschedulable > 0 ? EXIT.findings : EXIT.ok;
  print({
    type: 'verdict',
    rollout: id,
    at: rfc3339(Date.now()),
    pending,
    denied,
    failed: outcome.failed,
    skipped: outcome.skipped,
    unschedulable,
    exit,
  });
  return exit;
}

/** `podmutation rollout`. */
export function registerRollout(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'rollout', {
    summary: "restart the report's pending workloads in waves, and read the report again at the end",
    description:
      'Reads the report as `podmutation report` reads it from the cluster and restarts its pending workloads, --max-concurrent at a ' +
      'time: Deployments, StatefulSets and DaemonSets through the pod template annotation `kubectl rollout restart` sets, ' +
      'Argo Rollouts through spec.restartAt (as `kubectl argo rollouts restart`); an OnDelete or partitioned StatefulSet by ' +
      'evicting its pending Pods one at a time, each only if it is still the Pod the report read; a StatefulSet whose ' +
      'deleted Pods would come back at another revision (a staged template) is held. A wave starts no more workloads than ' +
      'the PodDisruptionBudgets covering them allow. A workload whose recreated Pods would fit no Node and no NodePool of ' +
      'the cluster is listed as unschedulable and left alone, unless --allow-unschedulable. ' +
      'Bare Pods, Jobs and CronJobs are listed to recreate by hand. Current ' +
      'workloads are skipped, so a second run resumes an interrupted one (docs/operations.md, "Running a migration").',
    examples: [
      'podmutation rollout -A --dry-run',
      'podmutation rollout --context staging -A --max-concurrent 3 --pause 30s --timeout 10m',
      'podmutation rollout --kubeconfig ~/.kube/config --rules rules/ -n production -o json',
    ],
    exits: {
      0: 'no Pod pending or denied after the last wave',
      1: 'some Pod still pending or denied, or a workload failed, was skipped, not started or unschedulable (with --dry-run: some Pod is pending or denied, or some workload unschedulable)',
      2: 'usage error, unreadable rules or cluster configuration, or a cluster that cannot be read',
    },
    unreadableExit: EXIT.usage,
  });
  const [kubeconfig, kubeContext] = kubeconfigOptions();
  command
    .addOption(kubeconfig)
    .addOption(kubeContext)
    .addOption(
      rulesOption({
        optional: true,
        description:
          "PodMutation and PodPlacement files or folders; repeatable (default: the cluster's PodMutations and PodPlacements)",
      }),
    )
    .addOption(allowEmptyOption())
    .addOption(
      new Option(
        '-l, --selector <selector>',
        "only workloads whose own labels match, as kubectl's -l (k=v, k!=v, k in (a,b), k, !k)",
      ),
    )
    .addOption(new Option('--max-concurrent <n>', 'workloads restarted at a time (one wave)').default('1'))
    .addOption(new Option('--pause <duration>', 'pause between waves (such as 30s)'))
    .addOption(
      new Option('--timeout <duration>', 'how long one workload may take, its disruption-budget wait included').default(
        '5m',
      ),
    )
    .option('--continue-on-failure', 'start the next wave after a failed workload')
    .option('--dry-run', 'print the plan (waves, workloads, why each is pending) and change nothing')
    .option(
      '--allow-unschedulable',
      'restart also the workloads whose recreated Pods would fit no Node and no NodePool (left alone as unschedulable otherwise)',
    )
    .addOption(
      new Option('-o, --output <format>', 'table: one line per step; json: one record (docs/operations.md) per line')
        .choices(['table', 'json'])
        .default('table'),
    )
    .addOption(enforcementOption());
  for (const option of [...namespaceOptions('cluster only'), ...placementOptions()]) command.addOption(option);
  onRun<RolloutFlags>(command, (flags) => rollout(flags, context));
}
