import { InvalidArgumentError, Option, type Command } from 'commander';
import { MalformedInputError } from '../errors/index.ts';
import type { RuleSource, TlsFiles } from '../local-server/index.ts';
import { jsonLineLogger } from '../observability/index.ts';
import { collect, defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { readFlagFile, writeLine, type CliStreams } from './io.ts';
import { kubeconfigOf, kubeconfigOptions, type KubeconfigFile, type KubeconfigFlags } from './options/kubeconfig.ts';
import { enforcementOf, enforcementOption } from './options/enforcement.ts';
import {
  capacityFlavourOf,
  placementOptions,
  readPlacementFile,
  type PlacementFlags,
} from './options/placement-file.ts';
import { allowEmptyOption, excludeOption, ruleLoadOptions, reportSkippedDocuments } from './options/rules.ts';
import type { LoadOptions } from '../rule-files/index.ts';
import type { JsonObject } from '../json/index.ts';

const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
const SERVE_NEEDS = 'serve needs --rules PATH (rule files) or the kubeconfig of a cluster as the rule source';

interface ServeFlags extends PlacementFlags, KubeconfigFlags {
  readonly rules?: string[];
  readonly allowEmpty?: boolean;
  readonly exclude?: string[];
  readonly port?: number;
  readonly host?: string;
  readonly token?: string;
  readonly tlsCert?: string;
  readonly tlsKey?: string;
  readonly watch?: boolean;
  readonly refresh?: number;
  readonly clusterId?: string;
  readonly syncInterval: number;
  readonly enforcement: string;
  readonly capacity?: string[];
}

function port(text: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(value) || value > 65_535)
    throw new InvalidArgumentError('Expected a port number from 0 to 65535.');
  return value;
}

function seconds(text: string): number {
  const value = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(value > 0) || value > 86_400)
    throw new InvalidArgumentError('Expected a number of seconds above 0, at most 86400.');
  return value;
}

/** The Nodes and NodePools of `--capacity` files (as `kubectl get nodes,nodepools -o yaml` prints them), published. */
async function publishedCapacity(paths: readonly string[]): Promise<JsonObject | undefined> {
  if (paths.length === 0) return undefined;
  const [{ parseYamlDocuments, readTextFile }, { Capacity, readCapacityObjects }] = await Promise.all([
    import('../rule-files/index.ts'),
    import('../capacity/index.ts'),
  ]);
  const read = await Promise.all(
    paths.map(async (path) => readCapacityObjects(parseYamlDocuments(await readTextFile(path), path), path)),
  );
  return Capacity.of({
    nodes: read.flatMap((objects) => objects.nodes),
    nodePools: read.flatMap((objects) => objects.nodePools),
  }).published();
}

/** Where the command's rules come from: rule files (with capacity files), or a kubeconfig's cluster. */
interface RuleSourceFlags {
  readonly paths: readonly string[];
  readonly loadOptions: LoadOptions;
  readonly cluster: { config: KubeconfigFile; intervalSeconds: number } | undefined;
  readonly capacityFiles: readonly string[];
}

/** The rule source of the command: rule files, or the cluster of a kubeconfig synced as the sync Lambda does. */
async function ruleSource(
  { paths, loadOptions, cluster, capacityFiles }: RuleSourceFlags,
  streams: CliStreams,
): Promise<RuleSource> {
  const { createClusterRuleSource, createFileRuleSource } = await import('../local-server/index.ts');
  if (cluster === undefined) {
    const capacity = await publishedCapacity(capacityFiles);
    return createFileRuleSource(paths, {
      load: loadOptions,
      onSkipped: (skipped) => reportSkippedDocuments(skipped, streams),
      ...(capacity === undefined ? {} : { capacity }),
    });
  }
  const { createCapacitySource, createPodMutationSource } = await import('../cluster/index.ts');
  const { config } = cluster;
  const files = [config.path, ...(config.mergedWith ?? [])].join(', ');
  return createClusterRuleSource({
    source: createPodMutationSource(config),
    intervalSeconds: cluster.intervalSeconds,
    description: `cluster of ${config.context === undefined ? '' : `context ${config.context} of `}kubeconfig ${files}`,
    logger: jsonLineLogger(streams.stderr),
    // The cluster's own Nodes and NodePools, published with its rules as the sync Lambda publishes them.
    capacity: createCapacitySource(config),
  });
}

async function tlsOption(cert: string | undefined, key: string | undefined): Promise<TlsFiles | undefined> {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined)
    throw new MalformedInputError('--tls-cert and --tls-key must be given together');
  return { cert: await readFlagFile(cert, '--tls-cert'), key: await readFlagFile(key, '--tls-key') };
}

/** Resolves with the first SIGINT or SIGTERM, then stops listening for them. */
function shutdownSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      for (const name of SHUTDOWN_SIGNALS) process.off(name, onSignal);
      resolve(signal);
    };
    for (const name of SHUTDOWN_SIGNALS) process.on(name, onSignal);
  });
}

/**
 * The local webhook server, with rule files or a cluster (synced in-process by the sync function's code) as its rule
 * source. Prints the webhook URL on stdout (the one place the token is shown), admission log lines on stdout, rule
 * publications, sync log lines and invalid rules on stderr; runs until SIGINT or SIGTERM, then exits 0.
 */
async function serve(flags: ServeFlags, { streams, env }: CliContext): Promise<number> {
  const paths = flags.rules ?? [];
  if (paths.length > 0 && flags.context !== undefined)
    throw new MalformedInputError('--context goes with the cluster as the rule source, not --rules');
  if (paths.length === 0 && (flags.capacity ?? []).length > 0)
    throw new MalformedInputError(
      '--capacity goes with --rules (rule files), not the cluster as the rule source, whose own Nodes and NodePools are read with its rules',
    );
  const tls = await tlsOption(flags.tlsCert, flags.tlsKey);
  const placements = await readPlacementFile(flags, streams);
  const enforcement = enforcementOf(flags.enforcement);
  // Loaded here, not at the top: the embedded DynamoDB and the AWS SDK add about 0.2 s to every other command.
  const [{ startLocalServer }, { checkedToken }] = await Promise.all([
    import('../local-server/index.ts'),
    import('../endpoint/index.ts'),
  ]);
  const token = flags.token === undefined ? undefined : checkedToken(flags.token, '--token');
  // Without --rules the rule source is the cluster, found as kubectl finds it (--kubeconfig, $KUBECONFIG, ~/.kube/config).
  const cluster =
    paths.length > 0
      ? undefined
      : { config: kubeconfigOf(flags, env, SERVE_NEEDS), intervalSeconds: flags.syncInterval };
  const server = await startLocalServer({
    rules: await ruleSource(
      { paths, loadOptions: ruleLoadOptions(flags), cluster, capacityFiles: flags.capacity ?? [] },
      streams,
    ),
    ...(flags.host === undefined ? {} : { host: flags.host }),
    ...(flags.port === undefined ? {} : { port: flags.port }),
    ...(token === undefined ? {} : { token }),
    ...(tls === undefined ? {} : { tls }),
    ...(flags.refresh === undefined ? {} : { refreshSeconds: flags.refresh }),
    ...(flags.clusterId === undefined ? {} : { clusterId: flags.clusterId }),
    // The cluster is polled on its sync interval; files are watched only when asked.
    watch: flags.watch === true || cluster !== undefined,
    // The flavour applies to the rule paths' PodPlacements too, with or without a placements file.
    ...(placements === undefined ? {} : { placements: placements.policies }),
    capacityFlavour: capacityFlavourOf(flags),
    enforcement,
    logger: jsonLineLogger(streams.stdout),
    report: (line) => writeLine(streams.stderr, line),
  });
  writeLine(streams.stdout, `webhook URL (clientConfig.url of a MutatingWebhookConfiguration): ${server.url}`);
  if (tls === undefined) {
    writeLine(
      streams.stderr,
      'note: the Kubernetes API server only calls https:// webhooks; give --tls-cert and --tls-key to serve one',
    );
  }
  await shutdownSignal();
  await server.close();
  return EXIT.ok;
}

/** `podmutation serve`. */
export function registerServe(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'serve', {
    summary: 'run the webhook locally, with rule files or a cluster as the rule source',
    description:
      'Turns each HTTP request into an API Gateway HTTP API (payload 2.0) event and calls the handler the Lambda runs, over ' +
      'the same snapshot cache and store code (an embedded DynamoDB). With --rules the files are the rule source (--watch ' +
      'republishes on change); without them the cluster of the kubeconfig (--kubeconfig, else $KUBECONFIG, else ~/.kube/config, as kubectl) is, synced in-process every --sync-interval seconds. Prints the ' +
      'webhook URL (with a generated token unless --token is given) and runs until SIGINT or SIGTERM.',
    examples: [
      'podmutation serve --rules examples/rules --watch',
      'podmutation serve --kubeconfig ~/.kube/config --tls-cert cert.pem --tls-key key.pem --host 0.0.0.0',
    ],
    exits: {
      0: 'stopped by SIGINT or SIGTERM',
      1: 'with the cluster as the rule source: the first sync failed (the cluster could not be read, or the store written)',
      2: 'usage error, unreadable rules, TLS files or placements, or an address it cannot listen on',
    },
  });
  const source = 'Rule source (one of):';
  const [kubeconfig, kubeContext] = kubeconfigOptions(
    'the cluster whose PodMutations are the rule source without --rules, synced as the sync Lambda does',
  );
  command
    .addOption(
      new Option('--rules <path>', 'PodMutation and PodPlacement files or folders as the rule source; repeatable')
        .argParser(collect)
        .helpGroup(source),
    )
    .addOption(new Option('--watch', 'with --rules: republish when the files change').helpGroup(source))
    .addOption(
      new Option(
        '--capacity <file>',
        'with --rules: Nodes and NodePools (kubectl get nodes,nodepools -o yaml) to judge each changed Pod against; repeatable',
      )
        .argParser(collect)
        .conflicts(['kubeconfig'])
        .helpGroup(source),
    )
    .addOption(allowEmptyOption().helpGroup(source))
    .addOption(excludeOption().helpGroup(source))
    .addOption(kubeconfig.conflicts(['rules', 'watch']).helpGroup(source))
    .addOption(kubeContext.helpGroup(source))
    .addOption(
      new Option('--sync-interval <seconds>', 'with the cluster as the rule source: seconds between syncs')
        .argParser(seconds)
        .default(30)
        .helpGroup(source),
    )
    .addOption(
      new Option('--port <port>', 'the port to listen on').argParser(port).default(undefined, '8080, or 8443 with TLS'),
    )
    .addOption(new Option('--host <host>', 'the address to listen on').default(undefined, '127.0.0.1'))
    .addOption(
      new Option('--token <token>', 'the path token of the webhook URL (32-256 base64url characters)').default(
        undefined,
        'generated',
      ),
    )
    .addOption(new Option('--tls-cert <file>', 'PEM certificate: serve https:// (with --tls-key)'))
    .addOption(new Option('--tls-key <file>', 'PEM private key (with --tls-cert)'))
    .addOption(
      new Option('--refresh <seconds>', 'seconds between re-reads of the published rules')
        .argParser(seconds)
        .default(undefined, '30'),
    )
    .addOption(
      new Option('--cluster-id <id>', 'the cluster id the rules are published under').default(undefined, 'default'),
    )
    .addOption(enforcementOption());
  for (const option of placementOptions()) command.addOption(option);
  onRun<ServeFlags>(command, (flags) => serve(flags, context));
}
