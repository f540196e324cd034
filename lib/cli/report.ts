import { Option, type Command } from 'commander';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { InvalidRule } from '../api/index.ts';
import { Capacity } from '../capacity/index.ts';
import { compileRuleSet } from '../engine/index.ts';
import { ClusterError, MalformedInputError } from '../errors/index.ts';
import {
  createReport,
  renderReportTable,
  restartCommands,
  type MigrationReport,
  type ReportBuilder,
} from '../report/index.ts';
import type { LoadedPlacements, LoadedRules } from '../rule-files/index.ts';
import { KEYLESS_STAMPS } from '../stamp/index.ts';
import { isJsonObject, previewInput, typeMismatch } from '../json/index.ts';
import { isDns1123Label } from '../syntax/index.ts';
import { classifyObject } from '../workloads/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { capacityOption, fitCaveatLine, readCapacityFiles, type CapacityFlags } from './options/capacity.ts';
import { inputObjects } from './input-objects.ts';
import { writeLine, type CliStreams } from './io.ts';
import { kubeconfigOf, kubeconfigOptions, type KubeconfigFile, type KubeconfigFlags } from './options/kubeconfig.ts';
import { namespaceOptions } from './options/namespace.ts';
import { enforcementOf, enforcementOption } from './options/enforcement.ts';
import { placementOptions, placementSteps, type PlacementFlags } from './options/placement-file.ts';
import {
  allowEmptyOption,
  excludeOption,
  ruleLoadOptions,
  loadRulesReportingInvalid,
  reportInvalidPlacements,
  reportInvalidRules,
  rulesOption,
} from './options/rules.ts';
import { outputOption, printResult, type OutputFormat } from './output.ts';

interface ReportFlags extends PlacementFlags, KubeconfigFlags, CapacityFlags {
  readonly objects?: string;
  readonly rules?: string[];
  readonly allowEmpty?: boolean;
  readonly exclude?: string[];
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly output: OutputFormat;
  readonly restartCommands?: boolean;
  readonly allowUnschedulable?: boolean;
  readonly enforcement: string;
}

/** One object of the input and where it sits, for the field paths of errors. */
interface Located {
  readonly value: unknown;
  readonly path: string;
}

/**
 * The objects of a `--objects` input as they arrive (input-objects.ts: JSON streamed, a List item by item; YAML read
 * whole), each with its path: a List's items as `items[3]`.
 */
async function* locatedObjects(file: string, streams: CliStreams, source: string): AsyncGenerator<Located> {
  let read = false;
  for await (const object of inputObjects(file, streams, source)) {
    read = true;
    const where = object.document === 1 ? source : `${source}: document ${object.document}`;
    if (object.type === 'item') yield { value: object.value, path: `${where}: items[${object.item}]` };
    else if (object.type === 'envelope') {
      const { kind } = object.value;
      if (typeof kind === 'string' && !kind.endsWith('List'))
        throw new MalformedInputError(`${where}: kind ${kind} has items; only the items of a List are read`);
    } else {
      const { value } = object;
      if (isJsonObject(value) && typeof value.kind === 'string' && value.kind.endsWith('List'))
        throw typeMismatch(`${where}: items`, 'a list', value.items);
      yield { value, path: `${source}: document ${object.document}` };
    }
  }
  // An empty file is a failed `kubectl get … > FILE` rather than a cluster without Pods (that is a List of no items).
  if (!read) throw new MalformedInputError(`${source}: input is empty`);
}

/** Standard input written to a file of its own, for an input read twice; `remove` deletes it. */
async function spooledInput(
  streams: CliStreams,
): Promise<{ readonly file: string; readonly remove: () => Promise<void> }> {
  const folder = await mkdtemp(join(tmpdir(), 'podmutation-objects-'));
  const file = join(folder, 'objects');
  await pipeline(streams.stdin, createWriteStream(file));
  return { file, remove: () => rm(folder, { recursive: true, force: true }) };
}

/**
 * Folds the objects of an input in two reads, so that it is never held whole: every owner first, then every Pod (a
 * Pod's owners must be known when it is judged). Standard input is written to a temporary file to be read twice.
 */
async function foldObjects(builder: ReportBuilder, source: string, streams: CliStreams): Promise<void> {
  const spooled = source === '-' ? await spooledInput(streams) : undefined;
  const file = spooled?.file ?? source;
  try {
    for await (const { value, path } of locatedObjects(file, streams, source)) builder.addOwner(value, path);
    for await (const { value, path } of locatedObjects(file, streams, source))
      if (classifyObject(value, path) === 'Pod') builder.addPod(value, path);
  } finally {
    await spooled?.remove();
  }
}

/** Rules and PodPlacements as a report runs them, and the invalid ones it skipped. */
interface ReportRules {
  readonly rules: LoadedRules['rules'];
  readonly invalid: LoadedRules['invalid'];
  readonly placements: Pick<LoadedPlacements, 'placements' | 'invalid'>;
}

// Said for people where the sync only logs it (lib/sync warnPlacementsUninstalled): the report reads on without them.
const PLACEMENTS_UNINSTALLED =
  'note: the cluster has no PodPlacement CRD (listing podplacements.agent.cloudpilot.ai answered 404): no PodPlacement places its Pods';

/**
 * A refused list of the cluster's PodMutations or PodPlacements, naming the grant that gives it, as a refused list of
 * the workloads does (lib/cluster's message names the sync's grants first).
 */
function namingTheGrant(error: unknown, grantOf: (plural: string) => string): unknown {
  if (!(error instanceof ClusterError) || error.context['reason'] !== 'forbidden') return error;
  const [plural = ''] = String(error.context['resource']).split('.');
  return new ClusterError(`${error.message}; ${grantOf(plural)}`, { cause: error, context: error.context });
}

/**
 * The cluster's PodMutations and PodPlacements, listed and validated by the sync's own step (lib/sync listAndValidate:
 * the same lists, budget and verdicts as the snapshot admission reads); the invalid ones reported on stderr, and a
 * cluster without the PodPlacement CRD, read as none, noted unless `again` (rollout's second read).
 */
async function clusterRules(config: KubeconfigFile, streams: CliStreams, again: boolean): Promise<ReportRules> {
  // Loaded on use: the Kubernetes client is not needed offline.
  const [{ clusterScopedGrant, createPodMutationSource }, { listAndValidate }] = await Promise.all([
    import('../cluster/index.ts'),
    import('../sync/index.ts'),
  ]);
  const listed = await listAndValidate(createPodMutationSource(config), Date.now);
  if (!('content' in listed)) throw namingTheGrant(listed.error, clusterScopedGrant);
  const { content, placements, counts } = listed;
  const invalidPlacements = placements.flatMap(({ verdict }) => (verdict.valid ? [] : [verdict.invalid]));
  reportInvalidRules(content.invalid, streams);
  reportInvalidPlacements(invalidPlacements, streams);
  if (!counts.placements.crdInstalled && !again) writeLine(streams.stderr, PLACEMENTS_UNINSTALLED);
  return {
    rules: content.rules,
    invalid: content.invalid,
    placements: { placements: content.placements ?? [], invalid: invalidPlacements },
  };
}

/** Folds the cluster's objects page by page, as the sync's progress report does (lib/sync foldClusterObjects). */
async function foldCluster(
  builder: ReportBuilder,
  config: KubeconfigFile,
  namespace: string | undefined,
  streams: CliStreams,
): Promise<void> {
  const [{ createWorkloadObjectSource }, { foldClusterObjects }] = await Promise.all([
    import('../cluster/index.ts'),
    import('../sync/index.ts'),
  ]);
  await foldClusterObjects(builder, createWorkloadObjectSource(config), namespace, (message) =>
    writeLine(streams.stderr, `warning: ${message}`),
  );
}

const REPORT_NEEDS = 'report needs --objects FILE (a kubectl get -o json List) or the kubeconfig of a cluster';

/** The checked flags: where the objects come from, and how the report is printed. */
function checkedFlags(values: ReportFlags, env: CliContext['env']) {
  const { objects, namespace } = values;
  if (objects === '') throw new MalformedInputError('--objects needs a FILE');
  if (values.context !== undefined && objects !== undefined)
    throw new MalformedInputError('--context goes with the cluster, not --objects');
  if (objects !== undefined && (values.rules ?? []).length === 0) {
    throw new MalformedInputError(
      "report --objects needs --rules PATH: a file of objects holds no PodMutations (only the cluster's are read without it)",
    );
  }
  if ((values.capacity ?? []).length > 0 && objects === undefined)
    throw new MalformedInputError(
      '--capacity goes with --objects: from a cluster, its own Nodes and NodePools are read (list nodes, nodepools.karpenter.sh)',
    );
  if (values.allowUnschedulable === true && values.restartCommands !== true)
    throw new MalformedInputError(
      '--allow-unschedulable goes with --restart-commands: it keeps the commands of workloads whose Pods would fit nowhere',
    );
  if (values.restartCommands === true && values.output !== 'table') {
    throw new MalformedInputError(
      `--restart-commands prints shell commands instead of the report; leave out -o ${values.output}`,
    );
  }
  if (namespace !== undefined && !isDns1123Label(namespace))
    throw new MalformedInputError(`--namespace ${previewInput(namespace)} is not a namespace name`);
  // Without --objects the objects are the cluster's, found as kubectl finds it (--kubeconfig, $KUBECONFIG, ~/.kube/config).
  const cluster: KubeconfigFile | undefined =
    objects === undefined ? kubeconfigOf(values, env, REPORT_NEEDS) : undefined;
  return { cluster, objects, namespace };
}

/** Where a report's objects and rules come from, and what runs besides the rules: report's and rollout's inputs. */
export interface ReportInputs extends PlacementFlags {
  /** The cluster, for its objects (when no `objects` file is given) and its PodMutations and PodPlacements (when no `rules`). */
  readonly cluster?: KubeconfigFile;
  readonly objects?: string;
  readonly rules?: readonly string[];
  /** Accept rules paths that hold no PodMutation and no PodPlacement (--allow-empty). */
  readonly allowEmpty?: boolean;
  readonly exclude?: string[];
  /** Only this namespace; without it and `allNamespaces`, the cluster's objects are those of the kubeconfig context's namespace. */
  readonly namespace?: string;
  readonly allNamespaces?: boolean;
  readonly enforcement: string;
  /** Files of Nodes and NodePools to judge the Pods against, with `objects` (--capacity); the cluster's own otherwise. */
  readonly capacity?: readonly string[];
}

/** The capacity a report judges against, and the line that says for people where it came from. */
interface ReportCapacity {
  readonly capacity: Capacity;
  readonly line: string;
  /** Why the cluster's capacity could not be read; undefined when it was, or when none was to be read. */
  readonly unread?: string;
}

// What a report without a capacity still finds, said wherever that happens.
const CONTRADICTIONS_ONLY =
  'where Pods fit is judged on their own contradictions only (nodeSelector against required terms)';

const count = (value: number, noun: string) => `${value} ${noun}${value === 1 ? '' : 's'}`;

function capacityRead(capacity: Capacity, from: string): ReportCapacity {
  const pools = capacity.nodePools.length;
  return { capacity, line: `capacity: ${count(capacity.nodeCount, 'Node')} and ${count(pools, 'NodePool')} ${from}` };
}

/**
 * The cluster's Nodes and NodePools. A read the cluster refuses (no RBAC to list nodes) or answers with an object that
 * is not well formed, or one that lists no Node and no NodePool (running Pods run on Nodes, so that is a wrong read,
 * not an empty cluster), is a warning on stderr: the report goes on, judging contradictions only, and says so.
 */
async function clusterCapacity(config: KubeconfigFile, streams: CliStreams): Promise<ReportCapacity> {
  const unread = (why: string): ReportCapacity => {
    writeLine(streams.stderr, `warning: ${why}; ${CONTRADICTIONS_ONLY}`);
    return { capacity: Capacity.unknown(), line: `capacity: not read (${why}); ${CONTRADICTIONS_ONLY}`, unread: why };
  };
  const { createCapacitySource } = await import('../cluster/index.ts');
  try {
    const objects = await createCapacitySource(config).read();
    if (objects.nodes.length === 0 && objects.nodePools.length === 0)
      return unread('the cluster lists no Node and no NodePool');
    return capacityRead(Capacity.of(objects), 'read from the cluster');
  } catch (error) {
    // Refused or unreadable capacity is worth a report without it; an unreachable cluster fails the report anyway.
    const refused =
      error instanceof ClusterError && ['forbidden', 'malformed'].includes(String(error.context['reason']));
    if (!(refused || error instanceof MalformedInputError)) throw error;
    return unread(`reading the Nodes and NodePools failed: ${error.message}`);
  }
}

/** The capacity of the inputs: the --capacity files, else the cluster's when the objects are the cluster's, else none. */
async function reportCapacity(inputs: ReportInputs, streams: CliStreams): Promise<ReportCapacity> {
  const paths = inputs.capacity ?? [];
  if (paths.length > 0) return capacityRead(await readCapacityFiles(paths, streams), `from ${paths.join(', ')}`);
  if (inputs.objects === undefined && inputs.cluster !== undefined) return clusterCapacity(inputs.cluster, streams);
  return { capacity: Capacity.unknown(), line: `capacity: none given (--capacity FILE); ${CONTRADICTIONS_ONLY}` };
}

/** The namespace to read, as kubectl chooses it: -n, else every one with -A or a file, else the kubeconfig context's. */
async function namespaceOf(inputs: ReportInputs): Promise<string | undefined> {
  if (
    inputs.namespace !== undefined ||
    inputs.allNamespaces === true ||
    inputs.objects !== undefined ||
    inputs.cluster === undefined
  )
    return inputs.namespace;
  const { contextNamespace } = await import('../cluster/index.ts');
  return contextNamespace(inputs.cluster);
}

/**
 * The report of the inputs: the rules and PodPlacements (files, else the cluster's, listed and validated as the sync
 * lists and validates them; invalid ones reported on stderr) run over every running Pod as admission runs them. Shared
 * by `report` and `rollout`, so that both read the same verdicts; `again` is rollout's second read, which notes nothing
 * the first has noted.
 */
export async function readReport(
  inputs: ReportInputs,
  streams: CliStreams,
  { again = false }: { readonly again?: boolean } = {},
): Promise<{
  readonly result: MigrationReport;
  /** The invalid rules and PodPlacements, skipped. */
  readonly invalid: readonly InvalidRule[];
  /** Where the capacity the Pods were judged against came from, as one line for people. */
  readonly capacityLine: string;
  /** Why the cluster's capacity could not be read, when it could not. */
  readonly capacityUnread?: string;
}> {
  const enforcement = enforcementOf(inputs.enforcement);
  const paths = inputs.rules ?? [];
  const loaded: ReportRules =
    paths.length > 0
      ? await loadRulesReportingInvalid(paths, streams, ruleLoadOptions(inputs))
      : await clusterRules(inputs.cluster!, streams, again);
  const managedSteps = await placementSteps(inputs, streams, loaded.placements.placements);
  // Stamps are checked by their sum: the report needs no access to the stack's key.
  const namespace = await namespaceOf(inputs);
  const { capacity, line, unread } = await reportCapacity(inputs, streams);
  const builder = createReport(compileRuleSet(loaded.rules), {
    managedSteps,
    enforcement,
    stamps: KEYLESS_STAMPS,
    capacity,
    ...(namespace === undefined ? {} : { namespace }),
  });
  if (inputs.objects !== undefined) await foldObjects(builder, inputs.objects, streams);
  else await foldCluster(builder, inputs.cluster!, namespace, streams);
  return {
    result: builder.result(),
    invalid: [...loaded.invalid, ...loaded.placements.invalid],
    capacityLine: line,
    ...(unread === undefined ? {} : { capacityUnread: unread }),
  };
}

/**
 * For each running Pod, whether a rollout would change its scheduling (unaffected, current, pending, denied), by rule
 * and by workload. Rules are the files of --rules, else the cluster's PodMutations and PodPlacements validated as the sync
 * validates them.
 */
async function report(values: ReportFlags, { streams, env }: CliContext): Promise<number> {
  const flags = checkedFlags(values, env);
  const { result, invalid, capacityLine } = await readReport(
    {
      ...values,
      ...(flags.cluster === undefined ? {} : { cluster: flags.cluster }),
      ...(flags.objects === undefined ? {} : { objects: flags.objects }),
    },
    streams,
  );
  if (values.restartCommands === true) {
    const options = { allowUnschedulable: values.allowUnschedulable === true };
    for (const line of restartCommands(result, options)) writeLine(streams.stdout, line);
  } else printResult(streams.stdout, values.output, result, () => reportTable(result, capacityLine));
  const { pending, denied } = result.totals;
  return pending > 0 || denied > 0 || invalid.length > 0 ? EXIT.findings : EXIT.ok;
}

/** The report's tables, then where its capacity came from and, once, what a fit verdict leaves out. */
function reportTable(result: MigrationReport, capacityLine: string): string {
  return [renderReportTable(result), '', capacityLine, fitCaveatLine()].join('\n');
}

/** `--capacity FILE` as report takes it: with --objects only, a cluster's own Nodes and NodePools being read. */
function reportCapacityOption(): Option {
  const option = capacityOption('the recreated Pods');
  option.description = `${option.description}; with --objects only (from a cluster, its own are read)`;
  return option;
}

/** `podmutation report`. */
export function registerReport(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'report', {
    summary: 'what a rollout would change: each running Pod unaffected, current, pending or denied',
    description:
      "For each running Pod, the Pod its controller would create now from the workload's current template, run through the " +
      'engine as admission runs it and compared with the running Pod; per rule and per workload (docs/operations.md, ' +
      '"Running a migration"). Without --rules the rules are the cluster\'s PodMutations and PodPlacements, listed and ' +
      'validated as the sync lists and validates them (a cluster without the PodPlacement CRD has none). ' +
      "Each workload says where its recreated Pods would fit: on the cluster's own Nodes and Karpenter NodePools, or with " +
      '--objects those of --capacity FILE.',
    examples: [
      'podmutation report --objects cluster.json --rules examples/rules',
      'podmutation report --objects cluster.json --rules examples/rules --capacity capacity.yaml',
      'podmutation report -A -o json',
      'podmutation report --kubeconfig ~/.kube/config --context staging -A --restart-commands > rollout.sh',
    ],
    exits: {
      0: 'no Pod pending or denied: every workload is current',
      1: 'some Pod pending or denied, or some rule or PodPlacement invalid (skipped): a rollout or a fix is still needed',
      2: 'usage error, unreadable rules, objects or cluster configuration, or a cluster that could not be read',
    },
    unreadableExit: EXIT.usage,
  });
  const source = 'Objects (one of):';
  const [kubeconfig, kubeContext] = kubeconfigOptions('the cluster to read Pods and their owners from, page by page');
  command
    .addOption(kubeconfig.helpGroup(source))
    .addOption(kubeContext.helpGroup(source))
    .addOption(
      new Option(
        '--objects <file>',
        'read them from a file (- for standard input): kubectl get pods,replicasets,deployments,… -A -o json (needs --rules); JSON is read as it arrives, never held whole',
      )
        .conflicts('kubeconfig')
        .helpGroup(source),
    )
    .addOption(
      rulesOption({
        optional: true,
        description:
          "PodMutation and PodPlacement files or folders; repeatable (default: the cluster's PodMutations and PodPlacements)",
      }),
    )
    .addOption(allowEmptyOption())
    .addOption(excludeOption())
    .addOption(outputOption())
    .option(
      '--restart-commands',
      'print the kubectl commands that roll out the pending workloads instead of the report',
    )
    .option(
      '--allow-unschedulable',
      'with --restart-commands: restart also the workloads whose recreated Pods would fit nowhere (left out as comments otherwise)',
    )
    .addOption(reportCapacityOption())
    .addOption(enforcementOption());
  for (const option of [...namespaceOptions('with --objects'), ...placementOptions()]) command.addOption(option);
  onRun<ReportFlags>(command, (flags) => report(flags, context));
}
