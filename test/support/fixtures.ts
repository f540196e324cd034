import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Path of a fixture file under test/fixtures. */
export function fixturePath(relative: string): string {
  return `${FIXTURES}${relative}`;
}

/** Text of a fixture file. */
export function fixtureText(relative: string): string {
  return readFileSync(fixturePath(relative), 'utf8');
}

/** Path of the repository's examples folder. */
export const EXAMPLES = fileURLToPath(new URL('../../examples/rules/', import.meta.url));
