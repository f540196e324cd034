/** `-o table|json|yaml`: one option and one printer for every command that prints a result. */
import { Option } from 'commander';
import { stringify } from 'yaml';
import type { Writable } from 'node:stream';

/** The output formats; `table` is the one for people, json and yaml print the command's documented shape. */
const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;

/** One of OUTPUT_FORMATS. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The `-o, --output FORMAT` option, table by default. */
export function outputOption(): Option {
  return new Option(
    '-o, --output <format>',
    'output format: table for people; json and yaml print the documented shape',
  )
    .choices(OUTPUT_FORMATS)
    .default('table');
}

/** Prints `data` in a machine format: JSON with a two-space indent, or YAML. */
export function printDocument(stream: Writable, format: Exclude<OutputFormat, 'table'>, data: unknown): void {
  stream.write(`${format === 'json' ? JSON.stringify(data, null, 2) : stringify(data).trimEnd()}\n`);
}

/** Prints `data` as JSON or YAML, or the command's own table. */
export function printResult(stream: Writable, format: OutputFormat, data: unknown, table: () => string): void {
  if (format === 'table') stream.write(`${table()}\n`);
  else printDocument(stream, format, data);
}
