import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { answerAdmissionReview, type AdmissionReviewResponse } from '../../lib/admission/index.ts';
import { compileRuleSet } from '../../lib/engine/index.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import { KEYLESS_STAMPS } from '../../lib/stamp/index.ts';
import { runPodmutation } from '../support/cli.ts';
import { EXAMPLES, fixturePath, fixtureText } from '../support/fixtures.ts';
import { writeTemporary } from '../report/support.ts';
import { decodePatch, parseAnswer, parseReview } from '../support/reviews.ts';

const REVIEWS = ['deployment-legacy-pool.json', 'cronjob-pod.json', 'pod-update.json', 'daemonset-pod.json'];

/** One line of NDJSON output: an AdmissionReview answer, or an error answer naming the failed line. */
type OutputLine = Partial<AdmissionReviewResponse> & {
  readonly error?: string;
  readonly message?: string;
  readonly line?: number;
};

function outputLines(stdout: string): OutputLine[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as OutputLine);
}

async function libraryAnswer(fixture: string): Promise<string> {
  const ruleSet = compileRuleSet((await loadRuleFiles([EXAMPLES])).rules);
  // As the CLI stamps: without the stack's key (the Lambda's answer differs only by the stamp's MAC).
  return answerAdmissionReview(fixtureText(`reviews/${fixture}`), ruleSet, { stamps: KEYLESS_STAMPS }).body;
}

describe('podmutation review', () => {
  it("prints byte for byte the response the engine produces, its stamps without the stack's key", async () => {
    const run = await runPodmutation([
      'review',
      '--rules',
      EXAMPLES,
      fixturePath('reviews/deployment-legacy-pool.json'),
    ]);
    expect(run).toEqual({ code: 0, stdout: `${await libraryAnswer('deployment-legacy-pool.json')}\n`, stderr: '' });
  });

  it('answers NDJSON from standard input with one line per input line', async () => {
    const input = REVIEWS.map((fixture) => JSON.stringify(JSON.parse(fixtureText(`reviews/${fixture}`)))).join('\n');
    const run = await runPodmutation(['review', '--rules', EXAMPLES, '-'], `${input}\n`);
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toEqual(await Promise.all(REVIEWS.map(libraryAnswer)));
  });

  it('reads an AdmissionReview written as YAML', async () => {
    const yaml = stringify(JSON.parse(fixtureText('reviews/cronjob-pod.json')));
    const run = await runPodmutation(['review', '--rules', EXAMPLES], yaml);
    expect(run.stdout).toBe(`${await libraryAnswer('cronjob-pod.json')}\n`);
  });

  it('skips invalid rules with a line each on stderr, still answers, and exits 1 for the invalid rule', async () => {
    const run = await runPodmutation([
      'review',
      '--rules',
      fixturePath('rules/invalid'),
      fixturePath('reviews/deployment-legacy-pool.json'),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'invalid rule skipped: PodMutation "force-spot": spec.mutationAdd.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key',
    );
    const { response } = parseAnswer(run.stdout);
    const patch = decodePatch(response.patch);
    expect(patch).toContainEqual({
      op: 'add',
      path: '/metadata/annotations/podmutation.agent.cloudpilot.ai~1applied',
      value: 'tag-team',
    });
  });

  it.each([
    [
      'a review that is not JSON or YAML, with its position',
      '{"apiVersion": [',
      /podmutation review: -:1:17: not valid JSON or YAML/,
    ],
    [
      'a bare Pod, pointing to --wrap',
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [] } }),
      /^podmutation review: -: a Pod, not an AdmissionReview; review answers AdmissionReviews, and --wrap answers a Pod as the CREATE the API server would send\n$/,
    ],
    [
      'a review with the wrong apiVersion',
      fixtureText('reviews/malformed-v1beta1.json'),
      /apiVersion must be admission.k8s.io\/v1/,
    ],
    [
      'a YAML review of 10,000 nested flow lists',
      `apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`,
      /podmutation review: -: nests deeper than 128 levels/,
    ],
    [
      'a JSON review whose Pod is null',
      JSON.stringify({
        ...parseReview(fixtureText('reviews/pod-update.json')),
        request: { ...parseReview(fixtureText('reviews/pod-update.json')).request, operation: 'CREATE', object: null },
      }),
      /podmutation review: request\.object: expected an object \(the Pod\), got null/,
    ],
  ])('exits 2 with a clear message for %s', async (_, input, message) => {
    const run = await runPodmutation(['review', '--rules', EXAMPLES], input);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });

  it('exits 2 when two rules share a name, naming both files', async () => {
    const run = await runPodmutation([
      'review',
      '--rules',
      fixturePath('rules/duplicates'),
      fixturePath('reviews/pod-update.json'),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/PodMutation "same-name" is defined more than once \(.*a\.yaml, .*b\.yaml\)/);
  });

  it('exits 2 on an NDJSON line that is not a review, after answering the others', async () => {
    const good = JSON.stringify(JSON.parse(fixtureText('reviews/pod-update.json')));
    const run = await runPodmutation(['review', '--rules', EXAMPLES], `${good}\n{"kind":"x"}\n`);
    expect(run.code).toBe(2);
    const [answer, failure] = outputLines(run.stdout);
    expect(answer?.response?.uid).toBeDefined();
    expect(failure).toEqual({
      error: 'MalformedInputError',
      message: expect.stringContaining('apiVersion must be admission.k8s.io/v1') as unknown,
      line: 2,
    });
    expect(run.stderr).toContain('-:2: AdmissionReview apiVersion must be admission.k8s.io/v1');
  });
});

describe('podmutation review of NDJSON', () => {
  it('answers every line in order, a failed line with an error answer naming it, and exits 2', async () => {
    const review = parseReview(fixtureText('reviews/deployment-legacy-pool.json'));
    const good = JSON.stringify(review);
    const nullToleration = JSON.stringify({
      ...review,
      request: {
        ...review.request,
        object: { ...review.request.object, spec: { ...review.request.object.spec, tolerations: [null] } },
      },
    });
    const deep = good.replace('"legacy"', '['.repeat(100_000) + ']'.repeat(100_000));

    const run = await runPodmutation(
      ['review', '--rules', EXAMPLES],
      [good, nullToleration, '', deep, good].join('\n'),
    );

    expect(run.code).toBe(2);
    const answers = outputLines(run.stdout);
    expect(answers).toHaveLength(4);
    expect(answers[0]?.response?.uid).toBe(review.request.uid);
    expect(answers[1]).toEqual({
      error: 'MalformedInputError',
      message: 'request.object.spec.tolerations[0]: expected an object, got null',
      line: 2,
    });
    expect(answers[2]).toEqual({
      error: 'MalformedInputError',
      message: 'request.object: nests deeper than 128 levels',
      line: 4,
    });
    expect(answers[3]).toEqual(answers[0]);
    expect(run.stderr).toContain('-:2: request.object.spec.tolerations[0]: expected an object, got null');
    expect(run.stderr).not.toMatch(/\bat \S+ \(/);
  });

  it('exits 0 when every line is answered', async () => {
    const good = JSON.stringify(JSON.parse(fixtureText('reviews/deployment-legacy-pool.json')));

    const run = await runPodmutation(['review', '--rules', EXAMPLES], `${good}\n${good}\n`);

    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(2);
  });
});

describe('podmutation validate', () => {
  it('reports every example rule as valid and exits 0', async () => {
    const run = await runPodmutation(['validate', EXAMPLES]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^valid {4}migrate-legacy-pool /m);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('4 valid, 0 invalid');
  });

  it('reports an invalid rule with its field path and reason, and exits 1', async () => {
    const run = await runPodmutation(['validate', fixturePath('rules/invalid/reserved-key.yaml')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('invalid  force-spot');
    expect(run.stdout).toContain('declare a PodPlacement (docs/placement.md) (got "karpenter.sh/capacity-type")');
    expect(run.stdout).toMatch(/^valid {4}tag-team /m);
  });

  it("reports a rule whose enforcement annotation's key is misspelt as invalid, naming the key and the known one, and exits 1", async () => {
    const rule = {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'audit-me', annotations: { 'podmutation.agent.cloudpilot.ai/enforcment': 'audit' } },
      spec: {
        enable: true,
        workloadSelector: { namespaces: ['production'] },
        mutationAdd: { nodeSelector: { 'example.com/pool': 'merged' } },
      },
    };
    const run = await runPodmutation(['validate', writeTemporary('typo.yaml', stringify(rule))]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('invalid  audit-me');
    expect(run.stdout).toContain(
      'metadata.annotations["podmutation.agent.cloudpilot.ai/enforcment"]: unknown annotation under podmutation.agent.cloudpilot.ai/; expected one of podmutation.agent.cloudpilot.ai/enforcement',
    );
  });

  it('warns about a tolerationsMatch entry that every Pod meets, and still exits 0', async () => {
    const rule = {
      apiVersion: 'agent.cloudpilot.ai/v1alpha1',
      kind: 'PodMutation',
      metadata: { name: 'every-pod' },
      spec: {
        enable: true,
        workloadSelector: { tolerationsMatch: [{ operator: 'Exists' }] },
        mutationAdd: { nodeSelector: { 'example.com/pool': 'merged' } },
      },
    };
    const run = await runPodmutation(['validate', writeTemporary('every-pod.yaml', stringify(rule))]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^valid {4}every-pod /m);
    expect(run.stdout).toContain(
      '  warning: PodMutation "every-pod": spec.workloadSelector.tolerationsMatch[0]: matches every Pod, so it restricts nothing: the API server\'s DefaultTolerationSeconds admission plugin',
    );
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('1 valid, 0 invalid, 1 warning');
  });

  it('exits 2 for a path that does not exist', async () => {
    const run = await runPodmutation(['validate', '/nonexistent/rules']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('rules path /nonexistent/rules cannot be read: no such file or folder (ENOENT)');
  });
});

describe('podmutation explain', () => {
  it('shows, for each Pod of a List, the matched rules, the first failing dimension of the others, and the change', async () => {
    const run = await runPodmutation(['explain', '--rules', EXAMPLES, fixturePath('pods/pod-list.json')]);
    expect(run.code).toBe(0);
    const [checkout, report] = run.stdout.split('\n\n');
    expect(checkout).toContain('Pod production/checkout-7d9f8b6c5d-x7k2p (workload Deployment checkout)');
    expect(checkout).toContain('    migrate-legacy-pool\n');
    expect(checkout).toContain('batch-to-spot-pool: namespaces: namespace "production" is not one of batch, analytics');
    expect(checkout).toContain('disabled (spec.enable is not true): retire-old-zone-taint');
    expect(checkout).toContain(
      '    -     example.com/node-pool In [legacy]\n    +     example.com/node-pool In [merged]',
    );
    expect(report).toContain('Pod batch/nightly-report-29434560-q8w4z (workload CronJob nightly-report)');
    expect(report).toContain('    -   example.com/node-pool=batch-ondemand\n    +   example.com/node-pool=batch-spot');
    expect(report).toContain('      tolerations:\n    +   example.com/spot:NoSchedule op=Exists');
  });

  it('says the webhook lets an AdmissionReview of something other than a Pod through, as the webhook answers it', async () => {
    const run = await runPodmutation(['explain', '--rules', EXAMPLES, fixturePath('reviews/configmap-create.json')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('skipped: the webhook allows it unchanged: resource ConfigMap is not a Pod');
  });
});

describe('podmutation usage', () => {
  it('exits 2 on an unknown command and points at the help', async () => {
    const run = await runPodmutation(['frobnicate']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("podmutation: unknown command 'frobnicate'\nRun 'podmutation --help' for usage.\n");
  });

  it('exits 2 on a misspelt command and names the closest one', async () => {
    const run = await runPodmutation(['explian']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("podmutation: unknown command 'explian'\n(Did you mean explain?)");
  });

  it('exits 2 and prints the commands on stderr when no command is given', async () => {
    const run = await runPodmutation([]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Usage: podmutation [options] [command]');
  });
});

describe('podmutation --placements', () => {
  const placements = fixturePath('../../examples/placements.yaml');

  it('runs the managed capacity step after the rules in review', async () => {
    const run = await runPodmutation([
      'review',
      '--rules',
      EXAMPLES,
      '--placements',
      placements,
      '--capacity-flavour',
      'eks',
      fixturePath('reviews/cronjob-pod.json'),
    ]);
    expect(run.code).toBe(0);
    const patch = decodePatch(parseAnswer(run.stdout).response.patch);
    expect(patch).toContainEqual({
      op: 'add',
      path: '/spec/affinity',
      value: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'eks.amazonaws.com/capacityType', operator: 'In', values: ['SPOT'] }] },
            ],
          },
        },
      },
    });
  });

  it('shows the managed step in explain', async () => {
    const run = await runPodmutation([
      'explain',
      '--rules',
      EXAMPLES,
      '--placements',
      placements,
      fixturePath('pods/pod-list.json'),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('podmutation.agent.cloudpilot.ai/applied: migrate-legacy-pool,managed:capacity');
    expect(run.stdout).toContain('    +     karpenter.sh/capacity-type In [on-demand]');
    expect(run.stdout).toContain(
      '      topologySpreadConstraints:\n    +   topologyKey=node.kubernetes.io/instance-type maxSkew=1 whenUnsatisfiable=ScheduleAnyway labelSelector=',
    );
  });

  it('exits 2 for an unknown capacity flavour', async () => {
    const run = await runPodmutation([
      'review',
      '--rules',
      EXAMPLES,
      '--placements',
      placements,
      '--capacity-flavour',
      'azure',
      fixturePath('reviews/cronjob-pod.json'),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      "option '--capacity-flavour <flavour>' argument 'azure' is invalid. Allowed choices are karpenter, eks, gke.",
    );
  });
});
