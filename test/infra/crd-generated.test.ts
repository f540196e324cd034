/** Infra/crd.yaml is generated from the one declaration of the contract, and every named check exists. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHECKS, KEY_CHECKS } from '../../lib/api/checks.ts';
import { podMutationCrdYaml, podPlacementCrdYaml } from '../../lib/api/crd.ts';

import { PodMutationSpecSchema, PodPlacementSpecSchema } from '../../lib/api/schema.ts';

function namedChecks(node: unknown, key: 'x-check' | 'x-key-check'): string[] {
  if (Array.isArray(node)) return node.flatMap((item) => namedChecks(item, key));
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([name, value]) => (name === key ? [value as string] : namedChecks(value, key)));
}

describe.each([
  ['crd.yaml', podMutationCrdYaml],
  ['podplacement-crd.yaml', podPlacementCrdYaml],
] as const)('infra/%s', (file, generate) => {
  const committed = () => readFileSync(fileURLToPath(new URL(`../../infra/${file}`, import.meta.url)), 'utf8');

  it('is exactly what npm run crd writes from lib/api/schema.ts (run it after changing the declaration)', () => {
    expect(committed()).toBe(generate());
  });

  it("carries none of the validator's own extensions", () => {
    expect(committed().match(/^\s+x-(?!kubernetes-)[a-z-]+:/gm) ?? []).toEqual([]);
  });
});

describe('the named checks of the declaration', () => {
  it('all exist in lib/api/checks.ts, and every check there is named by the declaration', () => {
    const named = new Set(namedChecks([PodMutationSpecSchema, PodPlacementSpecSchema], 'x-check'));
    expect([...named].sort()).toEqual(Object.keys(CHECKS).sort());
    const keyNamed = new Set(namedChecks(PodMutationSpecSchema, 'x-key-check'));
    expect([...keyNamed].sort()).toEqual(Object.keys(KEY_CHECKS).sort());
  });
});
