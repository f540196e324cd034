// npm run bench: reviews per second through the code path of `podmutation review` (and of the
// Lambda), against the floor of JSON.parse(request) + JSON.stringify(response) measured in the same run;
// and the cold load and compile of the largest snapshot the sync publishes, in fresh processes.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { answerAdmissionReview, type AdmissionReviewResponse } from '../lib/admission/index.ts';
import { applySnapshotBudget, ruleCost, SNAPSHOT_BUDGET, validatePodMutation, type NormalizedRule } from '../lib/api/index.ts';
import { compileRuleSet, type RuleSet } from '../lib/engine/index.ts';
import { createDynamoClient, createSnapshotStore, createSnapshotTable } from '../lib/store/index.ts';
import { startEmbeddedDynamo } from '../lib/store/embedded/index.ts';
import { largestRule } from '../test/support/largest-rule.ts';

const ROUND_MS = 400;
const ROUNDS = 7;
const FIXTURE = new URL('../test/fixtures/reviews/deployment-legacy-pool.json', import.meta.url);

function rule(name: string, spec: Record<string, unknown>): NormalizedRule {
  const verdict = validatePodMutation({ apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodMutation', metadata: { name }, spec: { enable: true, workloadSelector: { all: true }, ...spec } });
  if (!verdict.valid) throw new Error(`bench rule ${name} is invalid: ${JSON.stringify(verdict.invalid.issues)}`);
  return verdict.rule;
}

const poolTerm = (value: string) => ({ matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: [value] }] });

/** A realistic rule set: three rules match the fixture Pod, the rest select other namespaces, kinds, labels or pools. */
function realisticRules(count: number): RuleSet {
  const rules: NormalizedRule[] = [
    rule('migrate-legacy-pool', {
      priority: 100,
      workloadSelector: { namespaces: ['production'], kinds: ['Deployment'], nodeAffinityMatch: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm('legacy')] } } },
      mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
      mutationAdd: { annotations: { 'example.com/migration': 'merged-pool' }, nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm('merged')] } } },
    }),
    rule('prefer-zone-a', { workloadSelector: { namespaces: ['production'] }, mutationAdd: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 20, preference: { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] } }] } } }),
    rule('tolerate-maintenance', { workloadSelector: { labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'checkout' } } }, mutationAdd: { tolerations: [{ key: 'example.com/maintenance', operator: 'Exists', effect: 'NoSchedule' }] } }),
  ];
  for (let index = rules.length; index < count; index += 1) {
    const shape = index % 4;
    const spec =
      shape === 0 ? { workloadSelector: { namespaces: [`team-${index}`, `team-${index}-staging`] } }
      : shape === 1 ? { workloadSelector: { namespaces: ['production'], kinds: ['StatefulSet'], names: [`db-${index}`] } }
      : shape === 2 ? { workloadSelector: { labelSelector: { matchLabels: { 'app.kubernetes.io/name': `service-${index}` } } } }
      : { workloadSelector: { namespaces: ['production'], nodeAffinityMatch: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm(`pool-${index}`)] } } } };
    rules.push(rule(`rule-${String(index).padStart(4, '0')}`, {
      priority: index % 7,
      ...spec,
      mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
      mutationAdd: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm(`pool-${index}-new`)] } } },
    }));
  }
  return compileRuleSet(rules);
}

/** 64 x 64: a Pod with 64 required terms and a rule adding 64 more, so 4,096 intermediate terms. */
function worstCase(): { body: string; ruleSet: RuleSet } {
  // The fixture's Pod has a required node affinity; its terms are replaced.
  const review = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
    request: { object: { spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: unknown[] } } } } } };
  };
  review.request.object.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms = Array.from({ length: 64 }, (_, index) => ({
    matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: ['legacy'] }, { key: 'topology.kubernetes.io/zone', operator: 'In', values: [`zone-${index}`] }],
  }));
  const adding = rule('add-64-terms', {
    mutationAdd: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: Array.from({ length: 64 }, (_, index) => ({ matchExpressions: [{ key: 'example.com/rack', operator: 'In', values: [`rack-${index}`] }] })) } } },
  });
  return { body: JSON.stringify(review), ruleSet: compileRuleSet([adding]) };
}

function timeRound(work: () => void): number {
  let calls = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ROUND_MS * 1e6);
  let now = start;
  while (now < deadline) {
    for (let batch = 0; batch < 16; batch += 1) work();
    calls += 16;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / calls;
}

const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;

/**
 * Median nanoseconds per call of the review and of its floor. Rounds alternate between the two,
 * so load from elsewhere on a shared machine falls on both alike and the ratio stays meaningful.
 */
function measurePair(review: () => void, floor: () => void): { reviewNs: number; floorNs: number } {
  const warmUntil = performance.now() + 300;
  while (performance.now() < warmUntil) {
    review();
    floor();
  }
  const reviews: number[] = [];
  const floors: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    reviews.push(timeRound(review));
    floors.push(timeRound(floor));
  }
  return { reviewNs: median(reviews), floorNs: median(floors) };
}

function row(label: string, body: string, ruleSet: RuleSet) {
  const responseBody = answerAdmissionReview(body, ruleSet).body;
  const response = JSON.parse(responseBody) as AdmissionReviewResponse;
  let sink = 0;
  const { reviewNs, floorNs } = measurePair(
    () => {
      sink += answerAdmissionReview(body, ruleSet).body.length;
    },
    () => {
      JSON.parse(body);
      sink += JSON.stringify(response).length;
    },
  );
  if (sink === 0) throw new Error('unreachable');
  return { label, bytes: body.length, reviewNs, floorNs, decision: response.response.allowed ? (response.response.patch ? 'mutated' : 'allowed') : 'denied' };
}

const realistic = readFileSync(FIXTURE, 'utf8');
const rows = [
  row('10 rules', realistic, realisticRules(10)),
  row('100 rules', realistic, realisticRules(100)),
  row('1,000 rules', realistic, realisticRules(1000)),
  (() => {
    const worst = worstCase();
    return row('worst case 64 x 64 terms', worst.body, worst.ruleSet);
  })(),
];

const COLD_RUNS = 3;
const COLD_LOAD_TARGET_MS = 500;

/**
 * The largest snapshot the sync publishes: the largest rule of the contract, as many times as the snapshot budget
 * takes (the budget decides, exactly as in a sync). Published to an embedded DynamoDB, then read cold by fresh
 * processes; the median of their cache loads (read, verify, validate every rule again, compile).
 */
async function coldLoadOfLargestSnapshot(): Promise<{ ms: number; rules: number; megabytes: number }> {
  const size = ruleCost((validatePodMutation(largestRule()) as { rule: NormalizedRule }).rule).bytes;
  const candidates = Array.from({ length: Math.ceil(SNAPSHOT_BUDGET.maxRuleBytes / size) + 1 }, (_, index) => ({
    verdict: validatePodMutation(largestRule(`largest-${String(index).padStart(3, '0')}`)),
  }));
  const rules = applySnapshotBudget(candidates).flatMap(({ verdict }) => (verdict.valid ? [verdict.rule] : []));
  const dynamo = await startEmbeddedDynamo();
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  try {
    await createSnapshotTable(client, 'bench');
    await createSnapshotStore({ client, tableName: 'bench' }).publish('bench', { rules, invalid: [], resourceVersion: '1', syncedAt: new Date().toISOString() });
    const child = fileURLToPath(new URL('./bench-cold-load.ts', import.meta.url));
    const runs: number[] = [];
    for (let run = 0; run < COLD_RUNS; run += 1) {
      // Asynchronously: the embedded DynamoDB serves the child from this process's event loop.
      const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', child, dynamo.endpoint, 'bench', 'bench'], { encoding: 'utf8', env: { ...process.env, AWS_REGION: 'us-east-1' } });
      const measured = JSON.parse(result.stdout.trim()) as { ms: number; rules: number };
      if (measured.rules !== rules.length) throw new Error(`cold load compiled ${measured.rules} rules, expected ${rules.length}`);
      runs.push(measured.ms);
    }
    return { ms: median(runs), rules: rules.length, megabytes: rules.reduce((total, rule) => total + ruleCost(rule).bytes, 0) / 1024 / 1024 };
  } finally {
    client.destroy();
    await dynamo.close();
  }
}

const cold = await coldLoadOfLargestSnapshot();

const format = (ns: number) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`);
console.log(`node ${process.version}, ${ROUNDS} rounds of ${ROUND_MS} ms, median per review\n`);
console.log(['case'.padEnd(26), 'request'.padStart(8), 'reviews/s'.padStart(10), 'per review'.padStart(11), 'floor'.padStart(10), 'ratio'.padStart(6), '  decision'].join(' '));
for (const item of rows) {
  console.log([
    item.label.padEnd(26),
    `${(item.bytes / 1024).toFixed(1)}K`.padStart(8),
    Math.round(1e9 / item.reviewNs).toLocaleString('en-US').padStart(10),
    format(item.reviewNs).padStart(11),
    format(item.floorNs).padStart(10),
    `${(item.reviewNs / item.floorNs).toFixed(2)}x`.padStart(6),
    `  ${item.decision}`,
  ].join(' '));
}
const hundred = rows[1]!;
const worst = rows[3]!;
console.log(`\ncold load and compile of the largest snapshot (${cold.rules} rules of the largest size, ${cold.megabytes.toFixed(1)} MiB, median of ${COLD_RUNS} fresh processes): ${cold.ms.toFixed(0)} ms`);
const targets = [
  [`100 rules at most 3x the floor`, hundred.reviewNs / hundred.floorNs <= 3, `${(hundred.reviewNs / hundred.floorNs).toFixed(2)}x`],
  [`worst case under 25 ms`, worst.reviewNs < 25e6, format(worst.reviewNs)],
  [`cold load and compile of the largest snapshot under ${COLD_LOAD_TARGET_MS} ms`, cold.ms < COLD_LOAD_TARGET_MS, `${cold.ms.toFixed(0)} ms, ${(cold.ms / COLD_LOAD_TARGET_MS).toFixed(2)}x of the budget`],
] as const;
console.log('\ntargets:');
for (const [name, met, value] of targets) console.log(`  ${met ? 'met ' : 'MISSED'}  ${name} (${value})`);
process.exitCode = targets.every(([, met]) => met) ? 0 : 1;
