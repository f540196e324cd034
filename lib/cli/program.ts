/** The `podmutation` program: every command registered on one commander program, with the project's error format. */
import { Command } from 'commander';
import { MalformedInputError } from '../errors/index.ts';
import { commandPath, defineCommand, EXIT, onRun, optionDescription, type CliContext } from './command.ts';
import { writeLine } from './io.ts';
import { registerExplain } from './explain.ts';
import { registerPlacement } from './placement.ts';
import { registerReport } from './report.ts';
import { registerReview } from './review.ts';
import { registerRollout } from './rollout.ts';
import { registerServe } from './serve.ts';
import { registerSync } from './sync.ts';
import { registerTest } from './test-command.ts';
import { registerValidate } from './validate.ts';
import { registerWebhookConfig } from './webhook-config.ts';

/**
 * Every command of the tree, depth first, the program first.
 * @internal Exported for tests: the tests walk every command (help, exit codes, the packed install).
 */
export function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

/**
 * commander's own errors in the project's format, `podmutation review: unknown option '--rule'`, with its suggestion of
 * the closest valid name and a pointer to the command's help.
 */
function configureErrors(command: Command, context: CliContext): void {
  const path = commandPath(command);
  command.configureOutput({
    writeOut: (text) => context.streams.stdout.write(text),
    writeErr: (text) => context.streams.stderr.write(text),
    outputError: (text, write) =>
      write(`${path}: ${text.replace(/^error: /, '').trimEnd()}\nRun '${path} --help' for usage.\n`),
  });
}

/** `podmutation help [command...]`: the help of the program, a command or a subcommand. */
function registerHelp(program: Command): void {
  const command = defineCommand(program, 'help', {
    summary: 'print help for a command or a subcommand',
    examples: ['podmutation help report', 'podmutation help placement set'],
    exits: { 0: 'help printed', 2: 'no such command' },
  });
  command.argument('[command...]', 'the command, and the subcommand of a group (placement set)');
  onRun<Record<string, never>, [string[]]>(command, async (_flags, [names]) => {
    let target = program;
    for (const name of names) {
      const next = target.commands.find((candidate) => candidate.name() === name);
      if (next === undefined)
        throw new MalformedInputError(
          `no command '${commandPath(target)} ${name}'; run '${commandPath(target)} --help' for its commands`,
        );
      target = next;
    }
    // outputHelp, not helpInformation: the examples and exit codes are help text added after it.
    target.outputHelp();
    return Promise.resolve(EXIT.ok);
  });
}

/** `podmutation version`: what --version (and -v) print. */
function registerVersion(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'version', {
    summary: 'print the version (as --version and -v do)',
    examples: ['podmutation version'],
    exits: { 0: 'printed', 2: 'usage error' },
  });
  onRun(command, () => {
    writeLine(context.streams.stdout, context.version);
    return Promise.resolve(EXIT.ok);
  });
}

/** The program with every command; parse with `parseAsync(argv, { from: 'user' })` after `exitOverride()`. */
export function createProgram(context: CliContext): Command {
  const program = new Command('podmutation')
    .description(
      'Check, explain and test PodMutation rules offline; serve the webhook locally; sync and manage a deployment.',
    )
    .version(context.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print help')
    // Our own help command, which also takes a subcommand's path (`help placement set`); commander's takes one name.
    .helpCommand(false)
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureHelp({ optionDescription });
  registerReview(program, context);
  registerExplain(program, context);
  registerValidate(program, context);
  registerTest(program, context);
  registerReport(program, context);
  registerRollout(program, context);
  registerServe(program, context);
  registerSync(program, context);
  registerWebhookConfig(program, context);
  registerPlacement(program, context);
  registerHelp(program);
  registerVersion(program, context);
  for (const command of allCommands(program)) configureErrors(command, context);
  return program;
}
