/**
 * How every podmutation command is defined: commander declares the arguments and options, so help,
 * version, choices, conflicts and usage errors all come from one definition; this module adds what commander does not
 * hold (examples, exit codes) and the one meaning of each exit code.
 */
import { Command, type Option, type OptionValues } from 'commander';
import { MalformedInputError } from '../errors/index.ts';
import type { CliStreams } from './io.ts';

/** The exit codes, the same in every command. */
export const EXIT = {
  /** Done, nothing to report. */
  ok: 0,
  /** Findings (invalid rules, denied or pending Pods, failed tests) or an operation that failed (store, cluster). */
  findings: 1,
  /** A usage error or input that cannot be read (bad flags, an unreadable or malformed file). */
  usage: 2,
} as const;

/** What each exit code means for one command; 0 and 2 always exist, 1 only where the command has findings. */
interface ExitCodes {
  readonly 0: string;
  readonly 1?: string;
  readonly 2: string;
}

/** The documentation of a command beyond its options: --help prints it, docs/cli.md's CLI reference renders it. */
export interface CommandDoc {
  /** One line, for the list of commands. */
  readonly summary: string;
  /** What the command does, in a few sentences (default: the summary). */
  readonly description?: string;
  /** Command lines, as typed in a shell. */
  readonly examples: readonly string[];
  readonly exits: ExitCodes;
  /**
   * The exit code of a cluster or store that could not be read, where it is not 1: a command whose 1 means "not yet"
   * (report's pending Pods) makes it 2, so that a wait loop on 1 stops on an outage or an expired credential.
   */
  readonly unreadableExit?: typeof EXIT.usage;
}

/** What a command runs with: the streams, the environment (NO_COLOR, for one), and the version `--version` prints. */
export interface CliContext {
  readonly streams: CliStreams;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
}

const DOCS = new WeakMap<Command, CommandDoc>();
const REQUIRED = new WeakSet<Option>();
const EXIT_CODES = new WeakMap<Command, number>();

/** The command's path from the program: `podmutation placement set`. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current !== null; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

function helpFooter(command: Command, doc: CommandDoc): string {
  const lines = ['', 'Examples:', ...doc.examples.map((example) => `  $ ${example}`), '', 'Exit codes:'];
  for (const code of [0, 1, 2] as const) {
    const meaning = doc.exits[code];
    if (meaning !== undefined) lines.push(`  ${code}  ${meaning}`);
  }
  lines.push('', `Documentation: docs/cli.md (${commandPath(command)})`);
  return lines.join('\n');
}

/** An option's default as --help and docs/cli.md show it: its description, else the value; "" for none or false. */
export function optionDefault(option: Option): string {
  if (option.defaultValueDescription !== undefined) return option.defaultValueDescription;
  const value: unknown = option.defaultValue;
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

/** An option's help text: its description, its choices and its default, also where the default is only described. */
export function optionDescription(option: Option): string {
  const extra = [
    ...(option.argChoices === undefined ? [] : [`one of ${option.argChoices.join(', ')}`]),
    ...(optionDefault(option) === '' ? [] : [`default: ${optionDefault(option)}`]),
  ];
  return extra.length === 0 ? option.description : `${option.description} (${extra.join('; ')})`;
}

/** Adds a subcommand to `parent` with its documentation: summary, description, examples and exit codes in its --help. */
export function defineCommand(parent: Command, nameAndArgs: string, doc: CommandDoc): Command {
  const command = parent.command(nameAndArgs);
  DOCS.set(command, doc);
  command
    .summary(doc.summary)
    .description(doc.description ?? `${doc.summary[0]!.toUpperCase()}${doc.summary.slice(1)}.`);
  command.addHelpText('after', () => helpFooter(command, doc));
  return command;
}

/** The documentation a command was defined with; undefined for a command that only groups others. */
export function commandDoc(command: Command): CommandDoc | undefined {
  return DOCS.get(command);
}

/**
 * Marks an option required. Checked when the action runs, after commander has refused unknown options, so that a
 * typo (`--rule`) is answered with the closest valid name rather than with the required option it hid.
 */
export function required(option: Option): Option {
  REQUIRED.add(option);
  option.description = `${option.description} (required)`;
  return option;
}

function checkRequired(command: Command): void {
  const missing = command.options.filter(
    (option) => REQUIRED.has(option) && command.getOptionValue(option.attributeName()) === undefined,
  );
  if (missing.length > 0) {
    throw new MalformedInputError(
      `required option${missing.length === 1 ? '' : 's'} ${missing.map((option) => `'${option.flags}'`).join(', ')} not specified`,
    );
  }
}

/**
 * Sets the command's action: `run` gets the parsed options and arguments and returns the exit code, which the program
 * reads back with `exitCodeOf` after parsing.
 */
export function onRun<Options extends OptionValues, Args extends readonly unknown[] = readonly string[]>(
  command: Command,
  run: (options: Options, args: Args) => Promise<number>,
): Command {
  return command.action(async (...received: unknown[]) => {
    // commander passes the declared arguments, then the options, then the command itself.
    const self = received.at(-1) as Command;
    checkRequired(self);
    EXIT_CODES.set(self, await run(self.opts<Options>(), self.processedArgs as unknown as Args));
  });
}

/** The exit code the action of `command` returned, if it ran. */
export function exitCodeOf(command: Command): number | undefined {
  return EXIT_CODES.get(command);
}

/** Collects a repeatable option (`--rules A --rules B`) into a list. */
export function collect(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
