/**
 * `npm run docs:cli`: writes docs/cli.md's CLI reference (between the cli-reference markers) from the command
 * definitions; test/cli/reference.test.ts fails when docs/cli.md differs from what this would write.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { createProgram, renderCliReference } from '../lib/cli/index.ts';
import { markers, sectionOf, withSection } from './doc-sections.ts';

/** The file that holds the generated reference. */
export const CLI_DOC = fileURLToPath(new URL('../docs/cli.md', import.meta.url));
const MARKERS = markers('cli-reference', '`npm run docs:cli` from lib/cli');

/** The CLI reference as the command definitions render it. */
export function currentReference(): string {
  const streams = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  return renderCliReference(createProgram({ streams, env: {}, version: '0.0.0' }));
}

/** The reference between the markers of a document's text; undefined when the markers are missing. */
export function documentedReference(doc: string): string | undefined {
  return sectionOf(doc, MARKERS);
}

/** The document's text with the reference between the markers replaced. */
export function withReference(doc: string, reference: string): string {
  return withSection(doc, MARKERS, reference, 'docs/cli.md');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  writeFileSync(CLI_DOC, withReference(readFileSync(CLI_DOC, 'utf8'), currentReference()));
  console.log('docs/cli.md: CLI reference written');
}
