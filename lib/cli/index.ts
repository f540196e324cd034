import { PodMutationError } from '../errors/index.ts';
import { explainCommand } from './explain.ts';
import { writeLine, type CliStreams } from './io.ts';
import { reviewCommand } from './review.ts';
import { serveCommand } from './serve.ts';
import { syncCommand } from './sync.ts';
import { validateCommand } from './validate.ts';

type Command = (args: readonly string[], streams: CliStreams) => Promise<number>;

const COMMANDS: Readonly<Record<string, Command>> = {
  review: reviewCommand,
  validate: validateCommand,
  explain: explainCommand,
  serve: serveCommand,
  sync: syncCommand,
  // Loaded on use: the AWS SDK they need would slow every other command's start.
  'webhook-config': async (args, streams) => (await import('./webhook-config.ts')).webhookConfigCommand(args, streams),
  placement: async (args, streams) => (await import('./placement.ts')).placementCommand(args, streams),
  report: async (args, streams) => (await import('./report.ts')).reportCommand(args, streams),
};

const USAGE = `usage: podmutation <command> [options]

commands:
  review   --rules PATH [--rules PATH ...] [--enforcement enforce|audit] [--wrap [--namespace NS]] [FILE|-]
                                                          answer AdmissionReviews (JSON, YAML or NDJSON) as the webhook does
  validate PATH...                                   check PodMutation files; exit 1 if any rule is invalid
  explain  --rules PATH [--rules PATH ...] [--enforcement enforce|audit] [INPUT|-]
                                                          which rules match each Pod of a Pod, AdmissionReview or workload manifest (or a List or YAML stream of them)
  serve    (--rules PATH [--rules PATH ...] [--watch] | --kubeconfig FILE [--context NAME] [--sync-interval S])
           [--port N] [--host H] [--token T] [--tls-cert F --tls-key F] [--refresh S] [--cluster-id ID]
           [--placements FILE [--capacity-flavour karpenter|eks|gke]] [--enforcement enforce|audit]
                                                          run the webhook locally (default http://127.0.0.1:8080)
  sync     --once --kubeconfig FILE [--context NAME] [--lease-wait S] TARGET
                                                          sync the cluster's PodMutations into the table once; exit 1 if it failed or was skipped
  webhook-config --url BASE (--token T | --token-secret ARN) [--failure-policy Ignore|Fail] [--timeout S] [--name N]
                                                          print the MutatingWebhookConfiguration for the deployed endpoint
  placement set --namespace NS --kind KIND --name NAME --mode Spot|NonSpot|Diversity [--spot-percent P]
           | get|delete --namespace NS --kind KIND --name NAME | list
           TARGET                                         manage the operator's placement policies in the table (list prints YAML)
  report   (--kubeconfig FILE [--context NAME] | --objects FILE) [--rules PATH ...] [--placements FILE]
           [--namespace NS] [-o table|json] [--restart-commands] [--enforcement enforce|audit]
                                                          what a rollout would change: each running Pod unaffected, current, pending or denied

TARGET, the table sync and placement write to (there is no default in AWS):
  --stage S [--service NAME] [--region R]   the deployed stack NAME-S (NAME default podmutation): its table and cluster id
  --table T --cluster-id ID [--region R]    a table and cluster id given directly
  --dynamodb-endpoint URL [--table T] [--cluster-id ID]
                                            a local DynamoDB (defaults podmutation-rules and default; the table is created)`;

/**
 * Runs the podmutation CLI and returns its exit code: 0 success, 1 invalid rules (validate),
 * 2 malformed input or usage.
 */
async function runCli(argv: readonly string[], streams: CliStreams): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    writeLine(name === undefined ? streams.stderr : streams.stdout, USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    writeLine(streams.stderr, `podmutation: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    return await command(args, streams);
  } catch (error) {
    if (error instanceof PodMutationError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      writeLine(streams.stderr, `podmutation ${name}: ${(error as Error).message}`);
      return 2;
    }
    throw error;
  }
}

export { runCli };
export type { CliStreams };
