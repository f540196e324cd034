/**
 * explain, review, test and the webhook give one answer for every review: the webhook mutates only a Pod CREATE and
 * lets every other request through unchanged (an UPDATE, a subresource, another kind), and the commands that show
 * its answer say so rather than running the rules on such a request's object.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ruleToResource } from '../../lib/api/index.ts';
import { randomRules } from '../support/arbitraries.ts';
import { runPodmutation, runPodmutationInProcess } from '../support/cli.ts';
import { EXAMPLES, fixturePath } from '../support/fixtures.ts';

/** The fixture reviews the webhook answers (the malformed ones it rejects as a bad request). */
const REVIEWS = readdirSync(fixturePath('reviews'))
  .filter((name) => !name.startsWith('malformed-'))
  .map((name) => fixturePath(`reviews/${name}`));

interface Answer {
  readonly allowed: boolean;
  readonly patch: unknown;
}

/** The webhook's answer as `podmutation review` prints it: allowed, and the decoded patch ([] for none). */
function reviewAnswer(stdout: string): Answer {
  const { response } = JSON.parse(stdout) as { response: { allowed: boolean; patch?: string } };
  const patch: unknown =
    response.patch === undefined ? [] : JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
  return { allowed: response.allowed, patch };
}

/** The same answer as `podmutation explain -o json` gives it. */
function explainAnswer(stdout: string): Answer {
  const { pods } = JSON.parse(stdout) as { pods: { decision: string; patch: unknown }[] };
  expect(pods).toHaveLength(1);
  return { allowed: pods[0]!.decision !== 'denied', patch: pods[0]!.patch };
}

describe('one answer for every review', () => {
  it.each(REVIEWS.flatMap((review) => [EXAMPLES, fixturePath('rules/int64')].map((rules) => [review, rules])))(
    'explain answers %s as review does, with the rules of %s',
    async (review, rules) => {
      const [reviewed, explained] = await Promise.all([
        runPodmutation(['review', '--rules', rules, review]),
        runPodmutation(['explain', '--rules', rules, '-o', 'json', review]),
      ]);

      expect(explained.stderr).toBe('');
      expect(explainAnswer(explained.stdout)).toEqual(reviewAnswer(reviewed.stdout));
    },
  );

  it('explain says the webhook lets an UPDATE through unchanged, where it used to show the rules applied', async () => {
    const run = await runPodmutation(['explain', '--rules', EXAMPLES, fixturePath('reviews/pod-update.json')]);

    expect(run.stdout).toContain('skipped: the webhook allows it unchanged: operation UPDATE is not CREATE');
    expect(run.stdout).not.toContain('mutated');
  });

  it('test expects no rule applied to an UPDATE review, as the webhook applies none', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'review-one-answer-'));
    writeFileSync(
      join(folder, 'podmutation-test.yaml'),
      stringify({
        apiVersion: 'cli.podmutation.agent.cloudpilot.ai/v1alpha1',
        kind: 'PodMutationTest',
        metadata: { name: 'update-passes' },
        rules: [EXAMPLES],
        resources: [fixturePath('reviews/pod-update.json')],
        results: [{ resource: 'AdmissionReview/production/e911857d-c318-11e8-bbad-025000000001', applied: [] }],
      }),
    );

    const run = await runPodmutation(['test', folder]);

    expect(run.code, run.stdout + run.stderr).toBe(0);
  });

  it('explain and review agree on every fixture review under random rules', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'review-one-answer-rules-'));
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...REVIEWS), randomRules, async (review, rules) => {
        const file = join(folder, `rules-${(round += 1)}.yaml`);
        writeFileSync(file, rules.map((rule) => stringify(ruleToResource(rule))).join('---\n'));
        const [reviewed, explained] = await Promise.all([
          runPodmutationInProcess(['review', '--rules', file, review]),
          runPodmutationInProcess(['explain', '--rules', file, '-o', 'json', review]),
        ]);
        expect(explainAnswer(explained.stdout)).toEqual(reviewAnswer(reviewed.stdout));
      }),
      { numRuns: 150 },
    );
  });
});
