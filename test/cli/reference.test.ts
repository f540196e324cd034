/** README.md's CLI reference is the one the command definitions render: it cannot drift from them. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { currentReference, readmeReference } from '../../scripts/cli-reference.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe("README.md's CLI reference", () => {
  it('is exactly what `npm run docs:cli` renders from the definitions', () => {
    // On failure: run `npm run docs:cli` and commit README.md.
    expect(readmeReference(README)).toBe(currentReference());
  });

  it('lists every command with its exit codes, and a section per command', () => {
    const reference = currentReference();

    for (const command of [
      'review',
      'explain',
      'validate',
      'test',
      'report',
      'rollout',
      'serve',
      'sync',
      'webhook-config',
      'placement set',
      'placement get',
      'placement list',
      'placement delete',
    ]) {
      expect(reference).toMatch(new RegExp(`^\\| \`${command}\` \\| .+ \\| 0 .+; 2 .+ \\|$`, 'm'));
      expect(reference).toContain(`#### \`podmutation ${command} `);
    }
  });
});
