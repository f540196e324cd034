/** docs/configuration.md's table of environment variables is the one lib/config/variables.ts renders, and it names what the readers read. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../support/source-files.ts';

import { CONFIGURATION_DOC, currentVariables, documentedVariables } from '../../scripts/env-reference.ts';
import { VARIABLES } from '../../lib/config/variables.ts';

/** Every variable a reader of lib/ reads. */
function readVariables(): Set<string> {
  const read = new Set<string>();
  for (const path of sourceFiles('lib')) {
    const text = readFileSync(join(ROOT, path), 'utf8');
    for (const match of text.matchAll(/\b\w+Setting\(\s*env,\s*'([A-Z][A-Z0-9_]*)'/g)) read.add(match[1]!);
  }
  return read;
}

/** The variables serverless.yml sets in an `environment:` block: the provider's for both functions, or one function's. */
function deployedVariables(): { readonly name: string; readonly setFor: string }[] {
  const found: { name: string; setFor: string }[] = [];
  let scope = 'both';
  let indent: number | undefined;
  for (const line of readFileSync(join(ROOT, 'serverless.yml'), 'utf8').split('\n')) {
    const depth = line.length - line.trimStart().length;
    const functionKey = /^ {2}(admission|sync):\s*$/.exec(line);
    if (functionKey !== null) scope = functionKey[1]!;
    if (/^\s*environment:\s*$/.test(line)) indent = depth;
    else if (indent !== undefined && line.trim() !== '' && depth <= indent) indent = undefined;
    else if (indent !== undefined) {
      const key = /^\s*([A-Z][A-Z0-9_]*):/.exec(line);
      if (key !== null) found.push({ name: key[1]!, setFor: scope });
    }
  }
  return found;
}

describe('the environment variables', () => {
  it('are documented in docs/configuration.md exactly as lib/config/variables.ts renders them', () => {
    expect(documentedVariables(readFileSync(CONFIGURATION_DOC, 'utf8'))).toBe(currentVariables());
  });

  it('are each declared once', () => {
    const names = VARIABLES.map((variable) => variable.name);
    expect(names).toEqual([...new Set(names)]);
  });

  it('declare every variable a reader reads, and only those (besides Powertools’ own)', () => {
    const declared = VARIABLES.filter((variable) => variable.powertools !== true).map((variable) => variable.name);
    expect([...readVariables()].sort()).toEqual(declared.sort());
  });

  it('include every variable serverless.yml sets, read by the function it is set for', () => {
    const readBy = new Map(VARIABLES.map((variable) => [variable.name, variable.readBy]));
    const deployed = deployedVariables();
    expect(deployed.length).toBeGreaterThan(10);
    const wrong = deployed.filter(({ name, setFor }) => {
      const declared = readBy.get(name);
      return (
        declared === undefined ||
        (declared !== 'both' && declared !== setFor) ||
        (setFor === 'both' && declared !== 'both')
      );
    });
    expect(wrong).toEqual([]);
  });
});
