/**
 * `validate` through the built binary warns about a kind that is a near miss of a workload kind (the issue's own
 * `kinds: [deployment, Deployments, Deploymnet]`), naming the kind meant, and still finds the rule valid; Argo
 * Rollouts' and other controllers' kinds pass without a warning.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPodmutation } from '../support/cli.ts';

const scratch = mkdtempSync(join(tmpdir(), 'podmutation-kind-typos-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A rule file selecting these kinds. */
function ruleFile(name: string, kinds: readonly string[]): string {
  const file = join(scratch, `${name}.yaml`);
  writeFileSync(
    file,
    [
      'apiVersion: agent.cloudpilot.ai/v1alpha1',
      'kind: PodMutation',
      `metadata: { name: ${name} }`,
      'spec:',
      '  enable: true',
      `  workloadSelector: { kinds: [${kinds.join(', ')}] }`,
      '  mutationAdd: { annotations: { example.com/selected: "yes" } }',
      '',
    ].join('\n'),
  );
  return file;
}

describe('validate of a rule whose kinds are near misses', () => {
  it('warns about each, naming the kind meant, and exits 0 with the rule valid', async () => {
    const file = ruleFile('misspelt', ['deployment', 'Deployments', 'Deploymnet']);

    const run = await runPodmutation(['validate', file]);

    expect(run.stdout.split('\n').filter((line) => line.includes('warning:'))).toEqual([
      expect.stringContaining('spec.workloadSelector.kinds[0]: "deployment" is Deployment in another case'),
      expect.stringContaining('spec.workloadSelector.kinds[1]: "Deployments" is the plural of Deployment'),
      expect.stringContaining('spec.workloadSelector.kinds[2]: "Deploymnet" looks like a misspelling of Deployment'),
    ]);
    expect(run.stdout).toContain('1 valid, 0 invalid, 3 warnings');
    expect(run.code).toBe(0);
  });

  it('gives the same warnings in -o json', async () => {
    const file = ruleFile('misspelt-json', ['deployment']);

    const run = await runPodmutation(['validate', file, '-o', 'json']);
    const [rule] = (JSON.parse(run.stdout) as { rules: { warnings: { field: string; reason: string }[] }[] }).rules;

    expect(rule?.warnings).toEqual([
      {
        field: 'spec.workloadSelector.kinds[0]',
        reason: expect.stringMatching(/^"deployment" is Deployment in another case, .*write Deployment/) as unknown,
      },
    ]);
  });
});

describe('validate of a rule that selects kinds as their controllers write them', () => {
  it("warns about none of Argo Rollouts' and other controllers' kinds", async () => {
    const file = ruleFile('controllers', ['Deployment', 'Rollout', 'CloneSet', 'TFJob', 'JobSet', 'DeploymentConfig']);

    const run = await runPodmutation(['validate', file]);

    expect(run.stdout).not.toContain('warning:');
    expect(run.stdout).toContain('1 valid, 0 invalid');
    expect(run.code).toBe(0);
  });
});
