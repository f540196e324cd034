import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ENFORCEMENT_OPTIONS, enforcementOption } from './options/enforcement.ts';
import { MalformedInputError } from '../errors/index.ts';
import type { RuleSource, TlsFiles } from '../local-server/index.ts';
import { jsonLineLogger } from '../observability/index.ts';
import { writeLine, type CliStreams } from './io.ts';
import { PLACEMENT_OPTIONS, readPlacementFile } from './options/placement-file.ts';

const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

function portOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(port) || port > 65_535) throw new MalformedInputError(`--port is "${text}"; expected a port number from 0 to 65535`);
  return port;
}

function secondsOption(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN;
  if (!(seconds > 0) || seconds > 86_400) throw new MalformedInputError(`${flag} is "${text}"; expected a number of seconds above 0, at most 86400`);
  return seconds;
}

/** The rule source of the command: rule files, or the cluster of a kubeconfig synced as the sync Lambda does. */
async function ruleSource(
  paths: readonly string[],
  kubeconfig: { path: string; context?: string; intervalSeconds: number } | undefined,
  streams: CliStreams,
): Promise<RuleSource> {
  const { createClusterRuleSource, createFileRuleSource } = await import('../local-server/index.ts');
  if (kubeconfig === undefined) return createFileRuleSource(paths);
  const { createPodMutationSource } = await import('../cluster/index.ts');
  const config = kubeconfig.context === undefined
    ? { mode: 'kubeconfigFile' as const, path: kubeconfig.path }
    : { mode: 'kubeconfigFile' as const, path: kubeconfig.path, context: kubeconfig.context };
  return createClusterRuleSource({
    source: createPodMutationSource(config),
    intervalSeconds: kubeconfig.intervalSeconds,
    description: `cluster of kubeconfig ${kubeconfig.path}`,
    logger: jsonLineLogger(streams.stderr),
  });
}

async function readPem(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new MalformedInputError(`${flag} ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      cause: error,
    });
  }
}

async function tlsOption(cert: string | undefined, key: string | undefined): Promise<TlsFiles | undefined> {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) throw new MalformedInputError('--tls-cert and --tls-key must be given together');
  return { cert: await readPem(cert, '--tls-cert'), key: await readPem(key, '--tls-key') };
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
 * `podmutation serve (--rules PATH... [--watch] | --kubeconfig FILE [--context NAME] [--sync-interval S]) [--port N]
 * [--host H] [--token T] [--tls-cert F --tls-key F] [--refresh S] [--cluster-id ID] [--placements FILE
 * [--capacity-flavour F]]`: the local webhook server, with
 * rule files or a cluster (synced in-process by the sync function's code) as its rule source. Prints the webhook URL
 * on stdout (the one place the token is shown), admission log lines on stdout, rule publications, sync log lines and
 * invalid rules on stderr; runs until SIGINT or SIGTERM, then exits 0.
 */
export async function serveCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      rules: { type: 'string', multiple: true },
      port: { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      watch: { type: 'boolean', default: false },
      refresh: { type: 'string' },
      'cluster-id': { type: 'string' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'sync-interval': { type: 'string' },
      ...PLACEMENT_OPTIONS,
      ...ENFORCEMENT_OPTIONS,
    },
    allowPositionals: false,
  });
  const paths = values.rules ?? [];
  const kubeconfig = values.kubeconfig;
  if ((paths.length === 0) === (kubeconfig === undefined)) {
    throw new MalformedInputError('serve needs --rules PATH (rule files) or --kubeconfig FILE (the cluster as the rule source), not both');
  }
  if (kubeconfig === undefined && (values.context !== undefined || values['sync-interval'] !== undefined)) {
    throw new MalformedInputError('--context and --sync-interval go with --kubeconfig');
  }
  const syncIntervalSeconds = secondsOption(values['sync-interval'], '--sync-interval') ?? 30;
  const port = portOption(values.port);
  const refreshSeconds = secondsOption(values.refresh, '--refresh');
  const tls = await tlsOption(values['tls-cert'], values['tls-key']);
  const placements = await readPlacementFile(values, streams);
  const enforcement = enforcementOption(values.enforcement);
  // Loaded here, not at the top: the embedded DynamoDB and the AWS SDK add about 0.2 s to every other command.
  const [{ startLocalServer }, { checkedToken }] = await Promise.all([import('../local-server/index.ts'), import('../endpoint/index.ts')]);
  const token = values.token === undefined ? undefined : checkedToken(values.token, '--token');
  const cluster = kubeconfig === undefined
    ? undefined
    : { path: kubeconfig, intervalSeconds: syncIntervalSeconds, ...(values.context === undefined ? {} : { context: values.context }) };
  const server = await startLocalServer({
    rules: await ruleSource(paths, cluster, streams),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(port === undefined ? {} : { port }),
    ...(token === undefined ? {} : { token }),
    ...(tls === undefined ? {} : { tls }),
    ...(refreshSeconds === undefined ? {} : { refreshSeconds }),
    ...(values['cluster-id'] === undefined ? {} : { clusterId: values['cluster-id'] }),
    // The cluster is polled on its sync interval; files are watched only when asked.
    watch: values.watch || cluster !== undefined,
    ...(placements === undefined ? {} : { placements: placements.policies, capacityFlavour: placements.flavour }),
    enforcement,
    logger: jsonLineLogger(streams.stdout),
    report: (line) => writeLine(streams.stderr, line),
  });
  writeLine(streams.stdout, `webhook URL (clientConfig.url of a MutatingWebhookConfiguration): ${server.url}`);
  if (tls === undefined) {
    writeLine(streams.stderr, 'note: the Kubernetes API server only calls https:// webhooks; give --tls-cert and --tls-key to serve one');
  }
  await shutdownSignal();
  await server.close();
  return 0;
}
