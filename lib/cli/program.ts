/** The `podmutation` program: every command registered on one commander program, with the project's error format. */
import { Command } from 'commander';
import { commandPath, optionDescription, type CliContext } from './command.ts';
import { registerExplain } from './explain.ts';
import { registerPlacement } from './placement.ts';
import { registerReport } from './report.ts';
import { registerReview } from './review.ts';
import { registerRollout } from './rollout.ts';
import { registerServe } from './serve.ts';
import { registerSync } from './sync.ts';
import { registerTest } from './test.ts';
import { registerValidate } from './validate.ts';
import { registerWebhookConfig } from './webhook-config.ts';

/** Every command of the tree, depth first, the program first. */
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
    outputError: (text, write) => write(`${path}: ${text.replace(/^error: /, '').trimEnd()}\nRun '${path} --help' for usage.\n`),
  });
}

/** The program with every command; parse with `parseAsync(argv, { from: 'user' })` after `exitOverride()`. */
export function createProgram(context: CliContext): Command {
  const program = new Command('podmutation')
    .description('Check, explain and test PodMutation rules offline; serve the webhook locally; sync and manage a deployment.')
    .version(context.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print help')
    .helpCommand('help [command]', 'print help for a command')
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
  for (const command of allCommands(program)) configureErrors(command, context);
  return program;
}
