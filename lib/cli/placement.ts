import { Option, type Command } from 'commander';
import { StoreError } from '../errors/index.ts';
import { columns } from '../text/index.ts';
import { parsePlacementPolicy, workloadKey, type PlacementPolicy } from '../placement/index.ts';
import type { PlacementStore } from '../store/index.ts';
import { defineCommand, EXIT, onRun, required, type CliContext, type CommandDoc } from './command.ts';
import { writeLine } from './io.ts';
import { exportedPlacements, placementsYaml } from './placement-export.ts';
import {
  resolveStoreTarget,
  storeTargetOptions,
  targetClient,
  TARGET_DEFINITION,
  type StoreFlags,
  type StoreTarget,
} from './options/store-target.ts';
import { outputOption, printResult, type OutputFormat } from './output.ts';

type Workload = Pick<PlacementPolicy, 'namespace' | 'kind' | 'name'>;

interface WorkloadFlags extends StoreFlags {
  readonly namespace: string;
  readonly kind: string;
  readonly name: string;
}

interface SetFlags extends WorkloadFlags {
  readonly mode: string;
  readonly spotPercent?: string;
  readonly minOnDemand?: string;
}

/** A flag's digits as a number; anything else as the text given, so that the validator reports it as given. */
function wholeNumberFlag(value: string): number | string {
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** The policy the set flags describe, through the one validator of policies. */
function policyOf(flags: SetFlags): PlacementPolicy {
  const { spotPercent, minOnDemand } = flags;
  return parsePlacementPolicy(
    {
      namespace: flags.namespace,
      kind: flags.kind,
      name: flags.name,
      mode: flags.mode,
      ...(spotPercent === undefined ? {} : { spotPercent: wholeNumberFlag(spotPercent) }),
      ...(minOnDemand === undefined ? {} : { minOnDemand: wholeNumberFlag(minOnDemand) }),
    },
    'placement policy',
  );
}

/** The workload the get and delete flags name, checked as parsePlacementPolicy checks it (any valid mode will do). */
function workloadOf(flags: WorkloadFlags): Workload {
  const { namespace, kind, name } = parsePlacementPolicy(
    { namespace: flags.namespace, kind: flags.kind, name: flags.name, mode: 'NonSpot' },
    'workload',
  );
  return { namespace, kind, name };
}

/**
 * Runs one action against the placement store of the flags' TARGET. Every flag is checked before the store is
 * touched; a store failure is reported and exits 1.
 */
async function withStore(
  flags: StoreFlags,
  { streams }: CliContext,
  action: string,
  run: (store: PlacementStore, target: StoreTarget) => Promise<number>,
): Promise<number> {
  const target = await resolveStoreTarget(flags);
  const { openRulesTable } = await import('../store/index.ts');
  let client: Awaited<ReturnType<typeof targetClient>> | undefined;
  try {
    client = await targetClient(target);
    return await run(
      openRulesTable({ client, tableName: target.tableName, clusterId: target.clusterId }).placements,
      target,
    );
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    writeLine(streams.stderr, `podmutation placement ${action}: ${error.message}`);
    return EXIT.findings;
  } finally {
    client?.destroy();
  }
}

function missing(context: CliContext, action: string, target: StoreTarget, workload: string): number {
  writeLine(
    context.streams.stderr,
    `podmutation placement ${action}: no placement policy for workload ${workload} in cluster "${target.clusterId}" of table "${target.tableName}"`,
  );
  return EXIT.findings;
}

/** Policies as people read them: one row each. */
function policyTable(policies: readonly PlacementPolicy[]): string {
  if (policies.length === 0) return 'no placement policies';
  return columns(
    ['NAMESPACE', 'KIND', 'NAME', 'MODE', 'SPOT%', 'MIN-ON-DEMAND'],
    policies.map((policy) => [
      policy.namespace,
      policy.kind,
      policy.name,
      policy.mode,
      policy.spotPercent === undefined ? '-' : policy.spotPercent,
      policy.mode === 'Diversity' ? (policy.minOnDemand ?? 0) : '-',
    ]),
  ).join('\n');
}

function workloadOptions(command: Command): Command {
  return command
    .addOption(required(new Option('--namespace <namespace>', "the workload's namespace")))
    .addOption(
      required(
        new Option(
          '--kind <kind>',
          'the workload kind, as admission resolves it (Deployment, StatefulSet, CronJob, …)',
        ),
      ),
    )
    .addOption(required(new Option('--name <name>', "the workload's name")));
}

function withTarget(command: Command): Command {
  for (const option of storeTargetOptions()) command.addOption(option);
  return command;
}

const EXITS: CommandDoc['exits'] = {
  0: 'done',
  1: 'no such policy, or the store failed',
  2: 'usage error, an invalid policy, or a stack that cannot be read',
};

/** `podmutation placement set|get|list|delete`: the operator's placement policies in the rules table TARGET names. */
export function registerPlacement(program: Command, context: CliContext): void {
  const placement = defineCommand(program, 'placement', {
    summary: "manage the operator's placement policies in the rules table",
    description:
      "Manage the operator's placement policies (managed capacity: Spot, NonSpot, Diversity) in the rules table TARGET names. " +
      TARGET_DEFINITION,
    examples: ['podmutation placement list --stage prod', 'podmutation placement set --help'],
    exits: { 0: 'help printed', 2: 'no or an unknown subcommand' },
  });
  registerSet(placement, context);
  registerGet(placement, context);
  registerList(placement, context);
  registerDelete(placement, context);
  registerExport(placement, context);
}

/** `podmutation placement set`. */
function registerSet(placement: Command, context: CliContext): void {
  const set = defineCommand(placement, 'set', {
    summary: "set a workload's placement policy",
    description: "Sets a workload's placement policy; prints one JSON line {changed, version, policy}.",
    examples: [
      'podmutation placement set --namespace shop --kind Deployment --name web --mode Spot --stage prod --region eu-west-1',
    ],
    exits: EXITS,
  });
  workloadOptions(set)
    .addOption(required(new Option('--mode <mode>', 'Spot, NonSpot or Diversity')))
    .addOption(
      new Option('--spot-percent <percent>', 'with --mode Diversity: the share of Pods on Spot, 0 to 100').default(
        undefined,
        '50',
      ),
    )
    .addOption(
      new Option(
        '--min-on-demand <pods>',
        'with --mode Diversity: the least number of Pods kept on on-demand, whatever --spot-percent says',
      ).default(undefined, '0'),
    );
  onRun<SetFlags>(withTarget(set), (flags) => {
    const policy = policyOf(flags);
    return withStore(flags, context, 'set', async (store) => {
      const write = await store.setPlacement(policy);
      writeLine(context.streams.stdout, JSON.stringify({ ...write, policy }));
      return EXIT.ok;
    });
  });
}

/** `podmutation placement get`. */
function registerGet(placement: Command, context: CliContext): void {
  const get = defineCommand(placement, 'get', {
    summary: "print a workload's placement policy",
    examples: ['podmutation placement get --namespace shop --kind Deployment --name web --stage prod -o yaml'],
    exits: EXITS,
  });
  workloadOptions(get).addOption(outputOption());
  onRun<WorkloadFlags & { output: OutputFormat }>(withTarget(get), (flags) => {
    const { namespace, kind, name } = workloadOf(flags);
    return withStore(flags, context, 'get', async (store, target) => {
      const policy = await store.getPlacement(namespace, kind, name);
      if (policy === undefined) return missing(context, 'get', target, workloadKey(namespace, kind, name));
      printResult(context.streams.stdout, flags.output, policy, () => policyTable([policy]));
      return EXIT.ok;
    });
  });
}

/** `podmutation placement list`. */
function registerList(placement: Command, context: CliContext): void {
  const list = defineCommand(placement, 'list', {
    summary: 'print every placement policy of the cluster',
    description:
      'Prints every placement policy of the cluster. `-o yaml` prints {policies: [...]}, which is itself a --placements file for review, explain, report and serve.',
    examples: [
      'podmutation placement list --stage prod',
      'podmutation placement list --stage prod -o yaml > placements.yaml',
    ],
    exits: EXITS,
  });
  list.addOption(outputOption());
  onRun<StoreFlags & { output: OutputFormat }>(withTarget(list), (flags) =>
    withStore(flags, context, 'list', async (store) => {
      const policies = await store.listPlacements();
      printResult(context.streams.stdout, flags.output, { policies }, () => policyTable(policies));
      return EXIT.ok;
    }),
  );
}

/** `podmutation placement delete`. */
function registerDelete(placement: Command, context: CliContext): void {
  const remove = defineCommand(placement, 'delete', {
    summary: "delete a workload's placement policy",
    description: "Deletes a workload's placement policy; prints one JSON line {changed, version, workload}.",
    examples: ['podmutation placement delete --namespace shop --kind Deployment --name web --stage prod'],
    exits: EXITS,
  });
  workloadOptions(remove);
  onRun<WorkloadFlags>(withTarget(remove), (flags) => {
    const { namespace, kind, name } = workloadOf(flags);
    return withStore(flags, context, 'delete', async (store, target) => {
      const workload = workloadKey(namespace, kind, name);
      const write = await store.deletePlacement(namespace, kind, name);
      if (!write.changed) return missing(context, 'delete', target, workload);
      writeLine(context.streams.stdout, JSON.stringify({ ...write, workload }));
      return EXIT.ok;
    });
  });
}

/** `podmutation placement export`. */
function registerExport(placement: Command, context: CliContext): void {
  const command = defineCommand(placement, 'export', {
    summary: 'print every placement policy of the cluster as a PodPlacement',
    description:
      'Prints every placement policy of the cluster as the PodPlacement that places its workload alike, to review and ' +
      'commit: one per policy, named namespace.kind.name (the kind lowercased; shortened with a digest of the workload ' +
      'when over 253 characters or shared), enabled, priority 0, selecting the namespace, kind and name of the workload, ' +
      "with the policy's mode, spotPercent and minOnDemand. `-o yaml` (the default) prints a multi-document YAML stream, `-o json` a " +
      'List. A policy wins over every PodPlacement: once the PodPlacements are applied, delete the policies ' +
      '(placement delete) for them to take effect.',
    examples: [
      'podmutation placement export --stage prod > podplacements.yaml',
      'podmutation placement export --stage prod -o json | kubectl apply -f -',
    ],
    exits: EXITS,
  });
  command.addOption(
    new Option('-o, --output <format>', 'yaml: a multi-document YAML stream; json: a List')
      .choices(['yaml', 'json'])
      .default('yaml'),
  );
  onRun<StoreFlags & { output: 'yaml' | 'json' }>(withTarget(command), (flags) =>
    withStore(flags, context, 'export', async (store) => {
      const exported = exportedPlacements(await store.listPlacements());
      if (flags.output === 'json') {
        const items = exported.map(({ resource }) => resource);
        writeLine(context.streams.stdout, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2));
      } else if (exported.length > 0) context.streams.stdout.write(placementsYaml(exported));
      if (exported.length === 0) writeLine(context.streams.stderr, 'no placement policies to export');
      return EXIT.ok;
    }),
  );
}
