import { PodMutationError } from '../errors/index.ts';
import { explainCommand } from './explain.ts';
import { writeLine, type CliStreams } from './io.ts';
import { reviewCommand } from './review.ts';
import { validateCommand } from './validate.ts';

type Command = (args: readonly string[], streams: CliStreams) => Promise<number>;

const COMMANDS: Readonly<Record<string, Command>> = {
  review: reviewCommand,
  validate: validateCommand,
  explain: explainCommand,
};

const USAGE = `usage: podmutation <command> [options]

commands:
  review   --rules PATH [--rules PATH ...] [FILE|-]   answer AdmissionReviews (JSON, YAML or NDJSON) as the webhook does
  validate PATH...                                   check PodMutation files; exit 1 if any rule is invalid
  explain  --rules PATH [--rules PATH ...] [POD|-]    show which rules match a Pod (or a List) and what they change`;

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
