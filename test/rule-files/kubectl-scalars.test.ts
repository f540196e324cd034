/**
 * YAML read as kubectl reads it: each plain scalar of test/fixtures/yaml/kubectl-scalars.json, the table
 * sigs.k8s.io/yaml itself produced (test/yaml-scalars/), becomes the same JSON as a value and as a mapping key, or
 * is refused where kubectl refuses it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseYamlDocuments } from '../../lib/rule-files/index.ts';
import { parseJsonExact } from '../../lib/json/index.ts';
import { runPodmutation } from '../support/cli.ts';
import { fixtureText } from '../support/fixtures.ts';

interface Row {
  readonly scalar: string;
  readonly value?: unknown;
  readonly valueError?: string;
  readonly key?: string;
  readonly keyError?: string;
}

// Exact integers: the table holds int64 and uint64 limits, which a double would round.
const ROWS = parseJsonExact(fixtureText('yaml/kubectl-scalars.json')) as Row[];

/** Whether a scalar is a decimal integer outside both int64 and uint64. */
function beyond64Bits(scalar: string): boolean {
  return /^-?[0-9]+$/.test(scalar) && (BigInt(scalar) < -(2n ** 63n) || BigInt(scalar) >= 2n ** 64n);
}

/** The one document of `text` as JSON text, or the error podmutation reports for it. */
function readAsJson(text: string): { json: string } | { error: string } {
  try {
    return { json: JSON.stringify(parseYamlDocuments(text, 'scalar.yaml')[0]) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe("YAML scalars as kubectl's reader makes them", () => {
  it.each(ROWS.filter((row) => !beyond64Bits(row.scalar)).map((row) => [JSON.stringify(row.scalar), row] as const))(
    '%s as a value',
    (_name, row) => {
      const read = readAsJson(`v: ${row.scalar}\n`);

      if (row.valueError === undefined) expect(read).toEqual({ json: JSON.stringify({ v: row.value }) });
      else expect(read).toHaveProperty('error');
    },
  );

  // kubectl rounds an integer beyond 64 bits to a float, which every int64 field refuses too; podmutation keeps the
  // digits, so that its refusal names the number as written, and refuses one as a mapping key.
  it.each(ROWS.filter((row) => beyond64Bits(row.scalar)).map((row) => row.scalar))(
    '%s beyond 64 bits keeps its digits, where kubectl rounds it',
    (scalar) => {
      expect(readAsJson(`v: ${scalar}\n`)).toEqual({ json: `{"v":${scalar}}` });
      expect(readAsJson(`${scalar}: v\n`)).toHaveProperty('error');
    },
  );

  it.each(ROWS.filter((row) => !beyond64Bits(row.scalar)).map((row) => [JSON.stringify(row.scalar), row] as const))(
    '%s as a mapping key',
    (_name, row) => {
      const read = readAsJson(`${row.scalar}: v\n`);

      if (row.keyError === undefined) expect(read).toEqual({ json: JSON.stringify({ [row.key!]: 'v' }) });
      else expect(read).toHaveProperty('error');
    },
  );
});

describe('podmutation validate reads a rule file as the cluster will', () => {
  const folder = mkdtempSync(join(tmpdir(), 'kubectl-scalars-'));
  const ruleFile = (name: string, lines: string[]): string => {
    const path = join(folder, `${name}.yaml`);
    const text = [
      'apiVersion: agent.cloudpilot.ai/v1alpha1',
      'kind: PodMutation',
      `metadata: {name: ${name}}`,
      'spec:',
      '  workloadSelector: {all: true}',
      ...lines,
    ];
    writeFileSync(path, `${text.join('\n')}\n`);
    return path;
  };

  it('rejects an unquoted on in a nodeSelector value, which the cluster reads as true', async () => {
    const path = ruleFile('spot-on', ['  enable: true', '  mutationAdd:', '    nodeSelector: {example.com/spot: on}']);

    const run = await runPodmutation(['validate', path]);

    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain('example.com/spot');
  });

  it('accepts enable: yes, which the cluster reads as true', async () => {
    const path = ruleFile('enable-yes', [
      '  enable: yes',
      '  mutationAdd:',
      '    nodeSelector: {example.com/spot: "on"}',
    ]);

    const run = await runPodmutation(['validate', path]);

    expect(run).toMatchObject({ code: 0 });
  });
});
