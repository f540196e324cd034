/**
 * --capacity on explain, review and test: each changed Pod judged against kubectl's Nodes and NodePools as admission
 * judges it; a rule that strands a Pod warns and exits 1, and one annotated if-unschedulable: skip is held back.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

import { runPodmutationInProcess } from '../support/cli.ts';
import { fixturePath } from '../support/fixtures.ts';
import { IF_UNSCHEDULABLE_ANNOTATION } from '../../lib/api/constants.ts';

const CAPACITY = fixturePath('capacity/kubectl-get-nodes-nodepools.yaml');
const EXAMPLES = fileURLToPath(new URL('../../examples', import.meta.url));
const RULE = join(EXAMPLES, 'rules/migrate-legacy-pool.yaml');
const POSTGRES = join(EXAMPLES, 'tests/migrate-legacy-pool/resources/postgres.yaml');
const scratch = mkdtempSync(join(tmpdir(), 'podmutation-capacity-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The example rule with its added pool misspelt (mergd), optionally annotated if-unschedulable. */
function misspeltRule(ifUnschedulable?: 'warn' | 'skip'): string {
  const rule = parse(readFileSync(RULE, 'utf8')) as {
    metadata: { name: string; annotations?: Record<string, string> };
    spec: { mutationAdd: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: unknown } } };
  };
  rule.metadata.name = `migrate-misspelt-${ifUnschedulable ?? 'default'}`;
  if (ifUnschedulable !== undefined) rule.metadata.annotations = { [IF_UNSCHEDULABLE_ANNOTATION]: ifUnschedulable };
  rule.spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = {
    nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: ['mergd'] }] }],
  };
  const file = join(scratch, `${rule.metadata.name}.yaml`);
  writeFileSync(file, stringify(rule));
  return file;
}

describe('validate --capacity', () => {
  it("warns that a misspelt pool's additions fit no Node and no NodePool, and exits 0: the rule is valid", async () => {
    const run = await runPodmutationInProcess(['validate', misspeltRule(), '--capacity', CAPACITY]);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      'spec.mutationAdd: by node labels, what the rule adds fits nowhere: no Node and no NodePool takes it',
    );
    expect(run.stdout).toMatch(/1 valid, 0 invalid, 1 warning\n$/);
  });

  it('does not warn about a rule whose additions some Node takes', async () => {
    const run = await runPodmutationInProcess(['validate', RULE, '--capacity', CAPACITY]);

    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('warning');
  });

  it('does not judge the additions without --capacity', async () => {
    const run = await runPodmutationInProcess(['validate', misspeltRule()]);

    expect(run.stdout).not.toContain('fits nowhere');
  });
});

describe('explain --capacity', () => {
  it('says where a Pod the rule moves to an existing pool can run before and after, and exits 0', async () => {
    const run = await runPodmutationInProcess(['explain', '--rules', RULE, '--capacity', CAPACITY, POSTGRES]);

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/where it can run:\n\s+before: fits 1 Node\n\s+after: +fits 4 Nodes\n/);
    expect(run.stdout).not.toContain('unschedulable');
  });

  it('names the closest NodePool and Nodes of a Pod a misspelt pool strands, and exits 1', async () => {
    const run = await runPodmutationInProcess(['explain', '--rules', misspeltRule(), '--capacity', CAPACITY, POSTGRES]);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('after:  fits nowhere: no Node and no NodePool takes it');
    expect(run.stdout).toContain('closest: NodePool general');
    expect(run.stdout).toContain(
      'node affinity: example.com/node-pool In [mergd] (the Node has example.com/node-pool=legacy)',
    );
    expect(run.stdout).toContain('unschedulable: the rules turned a Pod that fit somewhere into one that fits nowhere');
  });

  it('holds back a rule annotated if-unschedulable: skip from the Pod it would strand, and changes nothing', async () => {
    const run = await runPodmutationInProcess([
      'explain',
      '--rules',
      misspeltRule('skip'),
      '--capacity',
      CAPACITY,
      POSTGRES,
    ]);

    expect(run.stdout).toContain('result: unchanged');
    expect(run.stdout).toContain('PodMutation "migrate-misspelt-skip" not applied (if-unschedulable: skip)');
  });

  it('exits 2 naming a capacity file that cannot be read', async () => {
    const run = await runPodmutationInProcess([
      'explain',
      '--rules',
      RULE,
      '--capacity',
      join(scratch, 'missing.yaml'),
      POSTGRES,
    ]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain('missing.yaml');
  });
});

describe('review --capacity', () => {
  it('answers with the warning the webhook gives for a stranded Pod, and exits 1', async () => {
    const run = await runPodmutationInProcess([
      'review',
      '--wrap',
      '--rules',
      misspeltRule(),
      '--capacity',
      CAPACITY,
      POSTGRES,
    ]);
    const answer = JSON.parse(run.stdout) as { response: { allowed: boolean; warnings?: string[] } };

    expect(run.code).toBe(1);
    expect(answer.response.allowed).toBe(true);
    expect(answer.response.warnings?.[0]).toMatch(
      /^the Pod fit before PodMutation migrate-misspelt-default .* now fits nowhere/,
    );
    expect(run.stderr).toContain('unschedulable: the rules stranded the Pod');
  });

  it('answers without a warning and exits 0 without --capacity, as the webhook without a published capacity', async () => {
    const run = await runPodmutationInProcess(['review', '--wrap', '--rules', misspeltRule(), POSTGRES]);
    const answer = JSON.parse(run.stdout) as { response: { allowed: boolean; warnings?: string[] } };

    expect(run.code).toBe(0);
    expect(answer.response.warnings ?? []).toEqual([]);
  });
});

describe('test --capacity', () => {
  /** A test file over the postgres StatefulSet whose one result expects this fit. */
  function testFile(name: string, rule: string, expected: Record<string, unknown>, capacity?: string): string {
    const file = join(scratch, `${name}.yaml`);
    writeFileSync(
      file,
      stringify({
        apiVersion: 'cli.podmutation.agent.cloudpilot.ai/v1alpha1',
        kind: 'PodMutationTest',
        metadata: { name },
        rules: [rule],
        ...(capacity === undefined ? {} : { capacity: [capacity] }),
        resources: [POSTGRES],
        results: [{ resource: 'StatefulSet/production/postgres', ...expected }],
      }),
    );
    return file;
  }

  it('passes a result that expects the misspelt pool to fit nowhere, with the capacity the file names', async () => {
    const file = testFile(
      'strands',
      misspeltRule(),
      { applied: ['migrate-misspelt-default'], fit: 'nowhere', fitMessage: 'example.com/node-pool In [mergd]' },
      CAPACITY,
    );
    const run = await runPodmutationInProcess(['test', file]);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('PASS  StatefulSet/production/postgres');
  });

  it('fails a result that expects the Pod to fit, naming the verdict', async () => {
    const file = testFile('expects-fit', misspeltRule(), { applied: ['migrate-misspelt-default'], fit: 'fits' });
    const run = await runPodmutationInProcess(['test', file, '--capacity', CAPACITY]);

    expect(run.code).toBe(1);
    expect(run.stdout).toContain('FAIL  StatefulSet/production/postgres');
    expect(run.stdout).toContain('fit: expected fits, got nowhere');
  });

  it('reads the Pod as unknown without any capacity', async () => {
    const file = testFile('unknown', RULE, { applied: ['migrate-legacy-pool'], fit: 'unknown' });
    const run = await runPodmutationInProcess(['test', file]);

    expect(run.code).toBe(0);
  });

  it('holds back a skip rule, as admission does: the result expecting no rule applied passes', async () => {
    const file = testFile('held', misspeltRule('skip'), { applied: [] }, CAPACITY);
    const run = await runPodmutationInProcess(['test', file]);

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('PASS  StatefulSet/production/postgres');
  });
});
