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

/**
 * Prints `{ [key]: [item, …] }` as printDocument would, item by item as each is known, so that the list is never held
 * whole: `end` closes it.
 */
export function documentListPrinter(
  stream: Writable,
  format: Exclude<OutputFormat, 'table'>,
  key: string,
): { readonly print: (item: unknown) => void; readonly end: () => void } {
  let printed = 0;
  return {
    print(item) {
      if (format === 'json') {
        const text = JSON.stringify(item, null, 2).replace(/^/gm, '    ');
        stream.write(printed === 0 ? `{\n  ${JSON.stringify(key)}: [\n${text}` : `,\n${text}`);
      } else {
        // The item as the whole document's YAML holds it: its text under the key's line, which only the first keeps.
        const text = stringify({ [key]: [item] });
        stream.write(printed === 0 ? text : text.slice(text.indexOf('\n') + 1));
      }
      printed += 1;
    },
    end() {
      if (printed === 0) printDocument(stream, format, { [key]: [] });
      else if (format === 'json') stream.write('\n  ]\n}\n');
    },
  };
}

/** Prints `data` as JSON or YAML, or the command's own table. */
export function printResult(stream: Writable, format: OutputFormat, data: unknown, table: () => string): void {
  if (format === 'table') stream.write(`${table()}\n`);
  else printDocument(stream, format, data);
}
