/** The offline commands read PodPlacements from the rules paths and place Pods by them, as admission does. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runPodmutationInProcess } from '../support/cli.ts';
import { admissionReview, pod } from '../support/builders.ts';
import { decodePatch, parseAnswer } from '../support/reviews.ts';

const example = (path: string) => fileURLToPath(new URL(`../../examples/${path}`, import.meta.url));
const PODPLACEMENTS = example('podplacements');
const PLACEMENTS = example('placements.yaml');
const WORKLOADS = example('tests/podplacements/resources/workloads.yaml');

function temporaryFile(name: string, content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'podmutation-podplacements-')), name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const ALL_BATCH_NONSPOT = temporaryFile(
  'all-batch-nonspot.yaml',
  'apiVersion: agent.cloudpilot.ai/v1alpha1\nkind: PodPlacement\nmetadata: {name: all-batch-nonspot}\n' +
    'spec: {enable: true, priority: 5, workloadSelector: {namespaces: [batch]}, mode: NonSpot}\n',
);

describe('explain with PodPlacements in the rules paths', () => {
  it('says which placement applies to each Pod, and which other PodPlacements selected it in vain', async () => {
    const run = await runPodmutationInProcess([
      'explain',
      '--rules',
      PODPLACEMENTS,
      '--rules',
      ALL_BATCH_NONSPOT,
      '--placements',
      PLACEMENTS,
      WORKLOADS,
    ]);

    expect(run.code).toBe(0);
    const placementLines = run.stdout.split('\n').filter((line) => /^(Pod | {2}placement)/.test(line));
    expect(placementLines).toEqual([
      expect.stringMatching(/^Pod batch\/reindex-/),
      '  placement: Spot, from PodPlacement "batch-to-spot"',
      '  placement also selected by, not applied: all-batch-nonspot',
      expect.stringMatching(/^Pod batch\/nightly-report-/),
      '  placement: Spot, from placement policy batch/CronJob/nightly-report',
      '  placement also selected by, not applied: batch-to-spot, all-batch-nonspot',
      expect.stringMatching(/^Pod analytics\/dashboards-/),
      '  placement: Diversity (70% Spot, at least 2 on-demand), from PodPlacement "analytics-diversity"',
      expect.stringMatching(/^Pod shop\/web-/),
    ]);
  });

  it('skips an invalid PodPlacement with its issues on stderr, and exits 1', async () => {
    const invalid = temporaryFile(
      'too-much-spot.yaml',
      'apiVersion: agent.cloudpilot.ai/v1alpha1\nkind: PodPlacement\nmetadata: {name: too-much-spot}\n' +
        'spec: {enable: true, workloadSelector: {namespaces: [batch]}, mode: Diversity, spotPercent: 120}\n',
    );

    const run = await runPodmutationInProcess(['explain', '--rules', invalid, WORKLOADS]);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'invalid placement skipped: PodPlacement "too-much-spot": spec.spotPercent: must be an integer from 0 to 100 (got 120)',
    );
    expect(run.stdout).not.toContain('placement:');
  });
});

describe('review and report with PodPlacements in the rules paths', () => {
  const batchPod = pod({ namespace: 'batch', name: 'reindex-abcde', owner: { kind: 'Job', name: 'reindex' } });

  it('review answers with the capacity the PodPlacement asks for', async () => {
    const run = await runPodmutationInProcess([
      'review',
      '--rules',
      PODPLACEMENTS,
      temporaryFile('review.json', admissionReview(batchPod)),
    ]);

    expect(run.code).toBe(0);
    const patch = decodePatch(parseAnswer(run.stdout).response?.patch);
    expect(JSON.stringify(patch)).toContain('{"key":"karpenter.sh/capacity-type","operator":"In","values":["spot"]}');
  });

  it('report counts a running Pod the PodPlacement would place as pending', async () => {
    const running = { ...batchPod, spec: { ...batchPod.spec, nodeName: 'n1' }, status: { phase: 'Running' } };
    const objects = temporaryFile('objects.json', { apiVersion: 'v1', kind: 'List', items: [running] });

    const run = await runPodmutationInProcess(['report', '--objects', objects, '--rules', PODPLACEMENTS, '-o', 'json']);

    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ totals: { pods: 1, pending: 1 } });
  });
});
