/** The `podmutation` CLI: commander commands, one module per command, and the exit code of a run. */
import { CommanderError, type Command } from 'commander';
import {
  ClusterError,
  ConfigurationError,
  DuplicateRuleError,
  MalformedInputError,
  PodMutationError,
  StoreError,
} from '../errors/index.ts';
import { EXIT, commandDoc, commandPath, exitCodeOf, type CliContext } from './command.ts';
import { writeLine } from './io.ts';
import { createProgram } from './program.ts';
import { renderCliReference } from './reference.ts';

/** The exit code of an error an action threw: bad input or flags are usage errors; a store or cluster failure is 1, or the command's own. */
function errorExitCode(error: unknown, command: Command): number {
  if (
    error instanceof MalformedInputError ||
    error instanceof ConfigurationError ||
    error instanceof DuplicateRuleError
  )
    return EXIT.usage;
  if (error instanceof ClusterError || error instanceof StoreError)
    return commandDoc(command)?.unreadableExit ?? EXIT.findings;
  return EXIT.findings;
}

/** The message of an error an action threw, for the terminal: never a stack trace. */
function errorMessage(error: unknown): string {
  if (error instanceof PodMutationError) return error.message;
  // Anything else is a bug; its name and message help a report, its stack would only scare.
  const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
  return `unexpected ${name}: ${message} (a bug: please report it with the command line)`;
}

/**
 * Runs the podmutation CLI and returns its exit code: 0 ok, 1 findings (invalid rules, denied or pending Pods, failed
 * tests) or a failed operation, 2 usage or input errors.
 */
async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  const { streams } = context;
  const program = createProgram(context);
  let running = program;
  program.hook('preAction', (_, action) => {
    running = action;
  });
  try {
    // -v alone is the version, as kubectl, npm and node users type it; commander keeps one short flag for it (-V).
    await program.parseAsync(argv.length === 1 && argv[0] === '-v' ? ['--version'] : [...argv], { from: 'user' });
  } catch (error) {
    // Help and version end with commander's exit code 0; help for a missing command and every usage error do not.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    writeLine(streams.stderr, `${commandPath(running)}: ${errorMessage(error)}`);
    return errorExitCode(error, running);
  }
  return exitCodeOf(running) ?? EXIT.ok;
}

export { runCli, createProgram, renderCliReference };
