/** review and explain with audited rules: the same inputs, audited results shown apart from applied ones. */
import { describe, expect, it } from 'vitest';
import { AUDITED_ANNOTATION } from '../../lib/api/index.ts';
import { STAMP_ANNOTATION } from '../../lib/engine/index.ts';
import { fixturePath, EXAMPLES } from '../support/fixtures.ts';
import { runPodmutationInProcess } from '../support/cli.ts';
import { decodePatch, parseAnswer } from '../support/reviews.ts';

const POD_LIST = fixturePath('pods/pod-list.json');
const REVIEW = fixturePath('reviews/deployment-legacy-pool.json');

describe('explain with --enforcement audit', () => {
  it('lists the matching rule as audited with what it would change, and shows no change to the scheduling fields but the audited annotation', async () => {
    const run = await runPodmutationInProcess(['explain', '--rules', EXAMPLES, '--enforcement', 'audit', POD_LIST]);

    const [checkout] = run.stdout.split('\n\n');
    expect(run.code).toBe(0);
    expect(checkout).toContain('  matched: none\n');
    expect(checkout).toMatch(
      / {2}audited migrate-legacy-pool: matched; enforcing it would change .*nodeAffinity.* \(\d+ patch operations\)/,
    );
    expect(checkout).toContain(
      '      annotations:\n    +   podmutation.agent.cloudpilot.ai/audited: migrate-legacy-pool',
    );
    expect(checkout).not.toContain('required node affinity');
  });

  it('refuses an enforcement other than enforce or audit', async () => {
    const run = await runPodmutationInProcess(['explain', '--rules', EXAMPLES, '--enforcement', 'Audit', POD_LIST]);

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "option '--enforcement <mode>' argument 'Audit' is invalid. Allowed choices are enforce, audit.",
    );
  });
});

describe('review with --enforcement audit', () => {
  it('answers with only the audited annotation and its stamp, and says on stderr what the audited rule would change', async () => {
    const run = await runPodmutationInProcess(['review', '--rules', EXAMPLES, '--enforcement', 'audit', REVIEW]);

    const operations = decodePatch(parseAnswer(run.stdout).response.patch);
    expect(run.code).toBe(0);
    expect(operations.map((operation) => operation.path)).toEqual([
      `/metadata/annotations/${AUDITED_ANNOTATION.replace('/', '~1')}`,
      `/metadata/annotations/${STAMP_ANNOTATION.replace('/', '~1')}`,
    ]);
    expect(run.stderr).toContain(`${REVIEW}: audited migrate-legacy-pool: matched; enforcing it would change`);
  });

  it('applies the same rule when enforcing, and prints nothing about audits', async () => {
    const run = await runPodmutationInProcess(['review', '--rules', EXAMPLES, REVIEW]);

    const operations = decodePatch(parseAnswer(run.stdout).response.patch);
    expect(operations.map((operation) => operation.path)).toContain('/spec/affinity/nodeAffinity');
    expect(run.stderr).not.toContain('audited');
  });
});
