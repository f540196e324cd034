/**
 * `npm run docs:env`: writes docs/configuration.md's table of environment variables (between the env-vars markers) from
 * lib/config/variables.ts; test/config/variables.test.ts fails when docs/configuration.md differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderVariableTable } from '../lib/config/index.ts';
import { markers, sectionOf, withSection } from './doc-sections.ts';

/** The file that holds the generated table. */
export const CONFIGURATION_DOC = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const MARKERS = markers('env-vars', '`npm run docs:env` from lib/config/variables.ts');

/** The table between the markers of a document's text; undefined when the markers are missing. */
export function documentedVariables(doc: string): string | undefined {
  return sectionOf(doc, MARKERS);
}

/** The table as lib/config/variables.ts renders it, with the blank line a Markdown table needs before it. */
export function currentVariables(): string {
  return `\n${renderVariableTable()}\n`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
  writeFileSync(CONFIGURATION_DOC, withSection(doc, MARKERS, currentVariables(), 'docs/configuration.md'));
  console.log('docs/configuration.md: environment variables written');
}
