/** PodPlacements in rules paths: read apart from the rules, validated, and found as rules are found. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DuplicateRuleError } from '../../lib/errors/index.ts';
import { loadRuleFiles, type LoadedRules } from '../../lib/rule-files/index.ts';

const GROUP = 'agent.cloudpilot.ai/v1alpha1';

function podPlacement(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: GROUP,
    kind: 'PodPlacement',
    metadata: { name },
    spec: { enable: true, workloadSelector: { namespaces: ['batch'] }, mode: 'Spot', ...spec },
  };
}

function podMutation(name: string): Record<string, unknown> {
  return {
    apiVersion: GROUP,
    kind: 'PodMutation',
    metadata: { name },
    spec: {
      enable: true,
      workloadSelector: { namespaces: ['batch'] },
      mutationAdd: { nodeSelector: { 'example.com/pool': 'batch' } },
    },
  };
}

const yaml = (...documents: unknown[]) => documents.map((document) => stringify(document)).join('---\n');

let scratch: string;
let count = 0;
/** A folder of its own holding the files. */
function folderWith(files: Readonly<Record<string, string>>): string {
  count += 1;
  const folder = join(scratch, `case-${count}`);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(folder, file, '..'), { recursive: true });
    writeFileSync(join(folder, file), text);
  }
  return folder;
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'podmutation-podplacements-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What a load read, by kind: the names of valid and invalid rules and PodPlacements, and the skipped documents. */
function names(loaded: LoadedRules) {
  return {
    rules: loaded.rules.map((rule) => rule.name),
    invalidRules: loaded.invalid.map((rule) => rule.name),
    placements: loaded.placements.placements.map((placement) => placement.name),
    invalidPlacements: loaded.placements.invalid.map((placement) => placement.name),
    skipped: loaded.skipped.map((document) => document.what),
  };
}

const NONE = { rules: [], invalidRules: [], placements: [], invalidPlacements: [], skipped: [] };

describe('a rules path with PodPlacements', () => {
  it.each([
    [
      'reads a PodPlacement apart from the PodMutations of the same file',
      { 'rules.yaml': yaml(podMutation('move-batch'), podPlacement('batch-to-spot')) },
      { ...NONE, rules: ['move-batch'], placements: ['batch-to-spot'] },
    ],
    [
      'reads the PodPlacements of a List, and of folders under the path',
      {
        'list.json': JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [podPlacement('a'), podPlacement('b')] }),
        'nested/c.yaml': yaml(podPlacement('c')),
      },
      { ...NONE, placements: ['a', 'b', 'c'] },
    ],
    [
      'holds what it needs when it holds PodPlacements alone',
      { 'placements.yaml': yaml(podPlacement('batch-to-spot')) },
      { ...NONE, placements: ['batch-to-spot'] },
    ],
    [
      'reads an invalid PodPlacement as an invalid PodPlacement, not as a rule',
      { 'bad.yaml': yaml(podPlacement('too-much', { mode: 'Diversity', spotPercent: 120 })) },
      { ...NONE, invalidPlacements: ['too-much'] },
    ],
    [
      "reads a misspelt kind of the product's group as an invalid PodMutation, never skipping it",
      { 'typo.yaml': yaml({ ...podPlacement('typo'), kind: 'PodPlacment' }), 'rule.yaml': yaml(podMutation('r')) },
      { ...NONE, rules: ['r'], invalidRules: ['typo'] },
    ],
    [
      'skips a PodPlacement of another group',
      {
        'other.yaml': yaml({ ...podPlacement('elsewhere'), apiVersion: 'example.com/v1' }),
        'rule.yaml': yaml(podMutation('r')),
      },
      { ...NONE, rules: ['r'], skipped: ['apiVersion example.com/v1'] },
    ],
    [
      'lets a PodMutation and a PodPlacement share a name: names clash within a kind',
      { 'batch.yaml': yaml(podMutation('batch'), podPlacement('batch')) },
      { ...NONE, rules: ['batch'], placements: ['batch'] },
    ],
  ])('%s', async (_, files, expected) => {
    expect(names(await loadRuleFiles([folderWith(files)]))).toEqual(expected);
  });

  it('leaves out the PodPlacement files --exclude names', async () => {
    const folder = folderWith({
      'placements/batch.yaml': yaml(podPlacement('batch-to-spot')),
      'rule.yaml': yaml(podMutation('r')),
    });

    expect(names(await loadRuleFiles([folder], { exclude: ['placements'] }))).toEqual({ ...NONE, rules: ['r'] });
  });

  it('reads the PodPlacements of standard input, for the path -', async () => {
    const loaded = await loadRuleFiles(['-'], { stdin: () => Promise.resolve(yaml(podPlacement('from-stdin'))) });

    expect(names(loaded)).toEqual({ ...NONE, placements: ['from-stdin'] });
  });

  it('refuses two PodPlacements of one name, naming both files', async () => {
    const folder = folderWith({ 'a.yaml': yaml(podPlacement('batch')), 'b.yaml': yaml(podPlacement('batch')) });

    const load = loadRuleFiles([folder]);

    await expect(load).rejects.toThrow(DuplicateRuleError);
    await expect(load).rejects.toThrow(
      `PodPlacement "batch" is defined more than once (${join(folder, 'a.yaml')}, ${join(folder, 'b.yaml')}); PodPlacement names must be unique`,
    );
  });

  it('with keepGoing, reads each of two PodPlacements of one name as invalid at metadata.name', async () => {
    const folder = folderWith({ 'a.yaml': yaml(podPlacement('batch')), 'b.yaml': yaml(podPlacement('batch')) });

    const { placements } = await loadRuleFiles([folder], { keepGoing: true });

    expect(placements.invalid.map((invalid) => invalid.issues.map((issue) => issue.field))).toEqual([
      ['metadata.name'],
      ['metadata.name'],
    ]);
    expect(placements.loaded.map((loaded) => loaded.source)).toEqual([join(folder, 'a.yaml'), join(folder, 'b.yaml')]);
  });
});
