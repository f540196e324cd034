import { parseArgs } from 'node:util';
import { describeIssues, type NormalizedRule } from '../api/index.ts';
import type { ClusterConfig } from '../cluster/index.ts';
import { compileRuleSet } from '../engine/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { createReport, renderReportTable, restartCommands, type ReportBuilder } from '../report/index.ts';
import { parseYamlDocuments } from '../rule-files/index.ts';
import { checkNesting, isDns1123Label, isJsonObject, previewInput, typeMismatch } from '../values/index.ts';
import { classifyObject } from '../workloads/index.ts';
import { readInput, writeLine, type CliStreams } from './io.ts';
import { ENFORCEMENT_OPTIONS, enforcementOption } from './options/enforcement.ts';
import { PLACEMENT_OPTIONS, placementSteps } from './options/placement-file.ts';
import { loadRulesReportingInvalid } from './review.ts';

const OUTPUTS = ['table', 'json'] as const;

/** One object of the input and where it sits, for the field paths of errors. */
interface Located {
  readonly value: unknown;
  readonly path: string;
}

/**
 * The objects of a `--objects` file: one JSON document (parsed as JSON, which is much faster than YAML for a
 * cluster's worth of Pods) or YAML documents; a List contributes its items, as `items[3]`.
 */
function objectsOf(text: string, source: string): Located[] {
  let documents: unknown[];
  try {
    documents = [JSON.parse(text)];
  } catch {
    documents = parseYamlDocuments(text, source);
  }
  // An empty file is a failed `kubectl get … > FILE` rather than a cluster without Pods (that is a List of no items).
  if (documents.length === 0) throw new MalformedInputError(`${source}: input is empty`);
  const several = documents.length > 1;
  return documents.flatMap((document, index) => {
    const where = several ? `${source}: document ${index + 1}` : source;
    checkNesting(document, where);
    if (isJsonObject(document) && typeof document.kind === 'string' && document.kind.endsWith('List')) {
      if (!Array.isArray(document.items)) throw typeMismatch(`${where}: items`, 'a list', document.items);
      return document.items.map((value: unknown, item) => ({ value, path: `${where}: items[${item}]` }));
    }
    return [{ value: document, path: `${source}: document ${index + 1}` }];
  });
}

/** Folds the objects of a file: every owner first, then every Pod. */
function foldObjects(builder: ReportBuilder, objects: readonly Located[]): void {
  const pods = objects.filter(({ value, path }) => classifyObject(value, path) === 'Pod');
  for (const { value, path } of objects) builder.addOwner(value, path);
  for (const { value, path } of pods) builder.addPod(value, path);
}

type KubeconfigFile = Extract<ClusterConfig, { readonly mode: 'kubeconfigFile' }>;

/** The cluster's PodMutations, validated as the sync validates them (the same list, budget and verdicts); invalid ones reported on stderr. */
async function clusterRules(config: KubeconfigFile, streams: CliStreams): Promise<readonly NormalizedRule[]> {
  // Loaded on use: the Kubernetes client is not needed offline.
  const [{ createPodMutationSource }, { buildSnapshotContent }] = await Promise.all([import('../cluster/index.ts'), import('../sync/index.ts')]);
  const content = buildSnapshotContent(await createPodMutationSource(config).listPodMutations(), Date.now());
  for (const invalid of content.invalid) {
    for (const line of describeIssues(invalid)) writeLine(streams.stderr, `invalid rule skipped: ${line}`);
  }
  return content.rules;
}

/** Folds the cluster's objects page by page, as the sync's progress report does (lib/sync foldClusterObjects). */
async function foldCluster(builder: ReportBuilder, config: KubeconfigFile, namespace: string | undefined): Promise<void> {
  const [{ createWorkloadObjectSource }, { foldClusterObjects }] = await Promise.all([import('../cluster/index.ts'), import('../sync/index.ts')]);
  await foldClusterObjects(builder, createWorkloadObjectSource(config), namespace);
}

/** The checked flags: where the objects come from, and how the report is printed. */
function checkedFlags(values: {
  kubeconfig?: string;
  context?: string;
  objects?: string;
  rules?: string[];
  namespace?: string;
  output?: string;
  'restart-commands'?: boolean;
}) {
  const { kubeconfig, objects, namespace } = values;
  if ((kubeconfig === undefined) === (objects === undefined)) {
    throw new MalformedInputError('report needs --kubeconfig FILE (the cluster) or --objects FILE (a kubectl get -o json List), not both');
  }
  if (kubeconfig === '' || objects === '') throw new MalformedInputError(`--${kubeconfig === '' ? 'kubeconfig' : 'objects'} needs a FILE`);
  if (values.context !== undefined && kubeconfig === undefined) throw new MalformedInputError('--context goes with --kubeconfig');
  if (objects !== undefined && (values.rules ?? []).length === 0) {
    throw new MalformedInputError('report --objects needs --rules PATH: a file of objects holds no PodMutations (only --kubeconfig reads the cluster\'s)');
  }
  const output = values.output ?? 'table';
  if (!(OUTPUTS as readonly string[]).includes(output)) throw new MalformedInputError(`-o must be ${OUTPUTS.join(' or ')} (got ${previewInput(output)})`);
  if (values['restart-commands'] === true && output === 'json') {
    throw new MalformedInputError('--restart-commands prints shell commands instead of the report; leave out -o json');
  }
  if (namespace !== undefined && !isDns1123Label(namespace)) throw new MalformedInputError(`--namespace ${previewInput(namespace)} is not a namespace name`);
  const cluster: KubeconfigFile | undefined = kubeconfig === undefined
    ? undefined
    : { mode: 'kubeconfigFile', path: kubeconfig, ...(values.context === undefined ? {} : { context: values.context }) };
  return { cluster, objects, namespace, output, restart: values['restart-commands'] === true };
}

/**
 * `podmutation report (--kubeconfig FILE [--context NAME] | --objects FILE) [--rules PATH ...] [--placements FILE]
 * [--namespace NS] [-o table|json] [--restart-commands] [--enforcement enforce|audit]`: for each running Pod, whether a
 * rollout would change its scheduling (unaffected, current, pending, denied), by rule and by workload. Rules are the
 * files of --rules, else the cluster's PodMutations validated as the sync validates them. Exit 0, 2 for usage or input
 * errors.
 */
export async function reportCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      objects: { type: 'string' },
      rules: { type: 'string', multiple: true },
      namespace: { type: 'string', short: 'n' },
      output: { type: 'string', short: 'o', default: 'table' },
      'restart-commands': { type: 'boolean', default: false },
      ...PLACEMENT_OPTIONS,
      ...ENFORCEMENT_OPTIONS,
    },
    allowPositionals: false,
  });
  const flags = checkedFlags(values);
  const enforcement = enforcementOption(values.enforcement);
  const managedSteps = await placementSteps(values, streams);
  const paths = values.rules ?? [];
  const rules = paths.length > 0 ? (await loadRulesReportingInvalid(paths, streams)).rules : await clusterRules(flags.cluster!, streams);
  const builder = createReport(compileRuleSet(rules), { managedSteps, enforcement, ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }) });
  if (flags.objects !== undefined) foldObjects(builder, objectsOf(await readInput(flags.objects, streams), flags.objects));
  else await foldCluster(builder, flags.cluster!, flags.namespace);
  const report = builder.result();
  if (flags.restart) for (const line of restartCommands(report)) writeLine(streams.stdout, line);
  else writeLine(streams.stdout, flags.output === 'json' ? JSON.stringify(report, null, 2) : renderReportTable(report));
  return 0;
}
