/** docs/cli.md's CLI reference is the one the command definitions render: it cannot drift from them. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_DOC, currentReference, documentedReference } from '../../scripts/cli-reference.ts';

const CLI_MD = readFileSync(CLI_DOC, 'utf8');

describe("docs/cli.md's CLI reference", () => {
  it('is exactly what `npm run docs:cli` renders from the definitions', () => {
    // On failure: run `npm run docs:cli` and commit docs/cli.md.
    expect(documentedReference(CLI_MD)).toBe(currentReference());
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
