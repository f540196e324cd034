/** docs/cli.md's CLI reference, rendered from the command definitions, so that the two cannot drift. */
import type { Command, Option } from 'commander';
import { commandDoc, commandPath, optionDefault } from './command.ts';

// Markdown table cells: a pipe would end the cell.
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function usage(command: Command): string {
  return `${commandPath(command)} ${command.usage()}`.trimEnd();
}

function optionMeaning(option: Option): string {
  const choices =
    option.argChoices === undefined ? '' : ` (one of ${option.argChoices.map((choice) => `\`${choice}\``).join(', ')})`;
  return `${option.description}${choices}`;
}

/** One command's section: usage, description, options, examples and exit codes. */
function section(command: Command): string[] {
  const doc = commandDoc(command)!;
  const options = command
    .createHelp()
    .visibleOptions(command)
    .filter((option) => option.long !== '--help');
  const lines = [`#### \`${usage(command)}\``, '', command.description(), ''];
  if (options.length > 0) {
    lines.push('| option | default | meaning |', '| --- | --- | --- |');
    for (const option of options)
      lines.push(
        `| \`${cell(option.flags)}\` | ${optionDefault(option) === '' ? '' : `\`${cell(optionDefault(option))}\``} | ${cell(optionMeaning(option))} |`,
      );
    lines.push('');
  }
  // From a clone, the bin runs through npx.
  lines.push(
    '```sh',
    ...doc.examples.map((example) => example.replace(/(^|\| )podmutation /g, '$1npx podmutation ')),
    '```',
    '',
  );
  return lines;
}

function exitCell(command: Command): string {
  const { exits } = commandDoc(command)!;
  return ([0, 1, 2] as const)
    .flatMap((code) => (exits[code] === undefined ? [] : [`${code} ${exits[code]}`]))
    .join('; ');
}

/** The documented commands that run something, depth first (`placement` itself only groups its subcommands). */
function documented(command: Command): Command[] {
  return command.commands.flatMap((child) => [
    ...(commandDoc(child) === undefined || child.commands.length > 0 ? [] : [child]),
    ...documented(child),
  ]);
}

/** The CLI reference in Markdown: a table of every command, then one section per command. */
export function renderCliReference(program: Command): string {
  const commands = documented(program);
  const lines = ['| command | what it does | exit codes |', '| --- | --- | --- |'];
  for (const command of commands) {
    lines.push(
      `| \`${cell(commandPath(command).replace(/^podmutation /, ''))}\` | ${cell(commandDoc(command)!.summary)} | ${cell(exitCell(command))} |`,
    );
  }
  lines.push('');
  for (const command of commands) lines.push(...section(command));
  return `${lines.join('\n').trimEnd()}\n`;
}
