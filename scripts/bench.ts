// npm run bench: reviews per second through the code path of `podmutation review` (and of the
// Lambda), against the floor of JSON.parse(request) + JSON.stringify(response) measured in the same run;
// and the cold load and compile of the largest snapshot the sync publishes and of 1,000 to 20,000 typical rules, in
// fresh processes.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { answerAdmissionReview, type AdmissionReviewResponse } from '../lib/admission/index.ts';
import { applySnapshotBudget, ruleCost, SNAPSHOT_BUDGET, validatePodMutation, type NormalizedRule } from '../lib/api/index.ts';
import { compileRuleSet, type RuleSet } from '../lib/engine/index.ts';
import { createDynamoClient, createSnapshotStore, createSnapshotTable } from '../lib/store/index.ts';
import { startEmbeddedDynamo } from '../lib/store/embedded/index.ts';
import { largestRule } from '../test/support/largest-rule.ts';
import { measureCliStart, startTimeLines } from './bench-start.ts';
import { median } from './measure.ts';

const ROUND_MS = 400;
const ROUNDS = 7;
const FIXTURE = new URL('../test/fixtures/reviews/deployment-legacy-pool.json', import.meta.url);

function rule(name: string, spec: Record<string, unknown>): NormalizedRule {
  const verdict = validatePodMutation({ apiVersion: 'agent.cloudpilot.ai/v1alpha1', kind: 'PodMutation', metadata: { name }, spec: { enable: true, workloadSelector: { all: true }, ...spec } });
  if (!verdict.valid) throw new Error(`bench rule ${name} is invalid: ${JSON.stringify(verdict.invalid.issues)}`);
  return verdict.rule;
}

const poolTerm = (value: string) => ({ matchExpressions: [{ key: 'example.com/node-pool', operator: 'In', values: [value] }] });

/** What every generated rule does: moves its Pods from one node pool to another. */
const migration = (index: number) => ({
  mutationRemove: { nodeAffinity: { keys: ['example.com/node-pool'] } },
  mutationAdd: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm(`pool-${index}-new`)] } } },
});

/** Rules that select on labels only (on the index's "any" list for every Pod): a small, fixed number, as in a cluster. */
const LABEL_ONLY_RULES = 5;
/** Rules per team: its namespaces; a StatefulSet by name; an app label; a node pool. */
const TEAM_SHAPES = 4;

/** What the generated rule sets are, for the output. */
const RULE_SET_DESCRIPTION =
  `3 rules match the fixture Pod (namespace production), ${LABEL_ONLY_RULES} select on labels only, 2 more select production; ` +
  `the rest each select a team namespace, ${TEAM_SHAPES} per team (team-N and team-N-staging; a StatefulSet by name; an app label; a node pool)`;

/**
 * A realistic multi-tenant rule set of `count` rules (at least 10): three rules match the fixture Pod, a fixed few
 * select on labels only or on other production workloads, and every other rule belongs to a team and selects its
 * namespace, as platform teams write them. Priorities repeat, so the order of application is by priority, then name.
 */
function realisticRules(count: number): NormalizedRule[] {
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
  for (let index = 0; index < LABEL_ONLY_RULES; index += 1) {
    rules.push(rule(`labels-${index}`, { priority: index % 7, workloadSelector: { labelSelector: { matchLabels: { 'app.kubernetes.io/name': `service-${index}` } } }, ...migration(index) }));
  }
  for (let index = 0; index < 2; index += 1) {
    rules.push(rule(`production-db-${index}`, { priority: index % 7, workloadSelector: { namespaces: ['production'], kinds: ['StatefulSet'], names: [`db-${index}`] }, ...migration(index) }));
  }
  for (let index = 0; rules.length < count; index += 1) {
    const team = `team-${Math.floor(index / TEAM_SHAPES)}`;
    const shape = index % TEAM_SHAPES;
    const workloadSelector =
      shape === 0 ? { namespaces: [team, `${team}-staging`] }
      : shape === 1 ? { namespaces: [team], kinds: ['StatefulSet'], names: [`db-${index}`] }
      : shape === 2 ? { namespaces: [team], labelSelector: { matchLabels: { 'app.kubernetes.io/name': `service-${index}` } } }
      : { namespaces: [team], nodeAffinityMatch: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [poolTerm(`pool-${index}`)] } } };
    rules.push(rule(`${team}-${shape}`, { priority: index % 7, workloadSelector, ...migration(index) }));
  }
  return rules;
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


/**
 * Median nanoseconds per call of each piece of work. Rounds alternate between them, so load from elsewhere on a
 * shared machine falls on all of them alike and their ratios stay meaningful.
 */
function measureAlternating(works: readonly (() => void)[]): number[] {
  const warmUntil = performance.now() + 300;
  while (performance.now() < warmUntil) for (const work of works) work();
  const rounds = works.map((): number[] => []);
  for (let round = 0; round < ROUNDS; round += 1) works.forEach((work, index) => rounds[index]!.push(timeRound(work)));
  return rounds.map(median);
}

interface Row {
  readonly label: string;
  readonly bytes: number;
  readonly reviewNs: number;
  /** JSON.parse(request) + JSON.stringify(response): the least any answer costs. */
  readonly floorNs: number;
  /** JSON.parse(request) + JSON.stringify(request): the floor as the issue measured it. */
  readonly requestFloorNs: number;
  readonly decision: string;
}

/**
 * Reviews of one request under each rule set, measured in the same alternating rounds as the two floors. The rule
 * sets must give the same answer (the same rules match), so that one response floor serves them all.
 */
function rows(body: string, cases: readonly { readonly label: string; readonly ruleSet: RuleSet }[]): Row[] {
  const answers = cases.map(({ ruleSet }) => answerAdmissionReview(body, ruleSet).body);
  if (new Set(answers).size !== 1) throw new Error('the rule sets of one request must give the same answer');
  const response = JSON.parse(answers[0]!) as AdmissionReviewResponse;
  const request: unknown = JSON.parse(body);
  let sink = 0;
  const [floorNs, requestFloorNs, ...reviewNs] = measureAlternating([
    () => {
      JSON.parse(body);
      sink += JSON.stringify(response).length;
    },
    () => {
      JSON.parse(body);
      sink += JSON.stringify(request).length;
    },
    ...cases.map(({ ruleSet }) => () => {
      sink += answerAdmissionReview(body, ruleSet).body.length;
    }),
  ]);
  if (sink === 0) throw new Error('unreachable');
  const decision = response.response.allowed ? (response.response.patch ? 'mutated' : 'allowed') : 'denied';
  return cases.map(({ label }, index) => ({ label, bytes: body.length, reviewNs: reviewNs[index]!, floorNs: floorNs!, requestFloorNs: requestFloorNs!, decision }));
}

// The machine may be shared: the load says how far to trust absolute figures (ratios are measured in one run).
const loadAtStart = loadavg().map((value) => value.toFixed(1)).join(' ');
const SIZES = [10, 100, 1000, 10000] as const;
const sized = rows(
  readFileSync(FIXTURE, 'utf8'),
  SIZES.map((count) => ({ label: `${count.toLocaleString('en-US')} rules`, ruleSet: compileRuleSet(realisticRules(count)) })),
);
const [worst] = (() => {
  const { body, ruleSet } = worstCase();
  return rows(body, [{ label: 'worst case 64 x 64 terms', ruleSet }]);
})();

const COLD_RUNS = 3;
/** The cold-start budget of a snapshot read and compile, for the largest snapshot and for 10,000 typical rules. */
const COLD_LOAD_TARGET_MS = 500;
const COLD_SIZES = [1000, 10000, 20000] as const;

/**
 * The largest snapshot the sync publishes: the largest rule of the contract, as many times as the snapshot budget
 * takes (the budget decides, exactly as in a sync).
 */
function largestSnapshotRules(): NormalizedRule[] {
  const size = ruleCost((validatePodMutation(largestRule()) as { rule: NormalizedRule }).rule).bytes;
  const candidates = Array.from({ length: Math.ceil(SNAPSHOT_BUDGET.maxRuleBytes / size) + 1 }, (_, index) => ({
    verdict: validatePodMutation(largestRule(`largest-${String(index).padStart(3, '0')}`)),
  }));
  return applySnapshotBudget(candidates).flatMap(({ verdict }) => (verdict.valid ? [verdict.rule] : []));
}

interface ColdCase {
  readonly label: string;
  readonly rules: readonly NormalizedRule[];
}

/**
 * Each case's rules published as one snapshot (a cluster id each) to an embedded DynamoDB, then read cold by fresh
 * processes: the median of their cache loads (read the parts, verify digests and content hash, validate every rule
 * again, compile with the index).
 */
async function coldLoads(cases: readonly ColdCase[]): Promise<{ label: string; ms: number; cpuMs: number; rules: number; megabytes: number }[]> {
  const dynamo = await startEmbeddedDynamo();
  const client = createDynamoClient({ endpoint: dynamo.endpoint });
  try {
    await createSnapshotTable(client, 'bench');
    const store = createSnapshotStore({ client, tableName: 'bench' });
    const child = fileURLToPath(new URL('./bench-cold-load.ts', import.meta.url));
    const results = [];
    for (const [caseIndex, { label, rules }] of cases.entries()) {
      const clusterId = `bench-${caseIndex}`;
      await store.publish(clusterId, { rules, invalid: [], resourceVersion: '1', syncedAt: new Date().toISOString() });
      const runs: number[] = [];
      const cpuRuns: number[] = [];
      for (let run = 0; run < COLD_RUNS; run += 1) {
        // Asynchronously: the embedded DynamoDB serves the child from this process's event loop.
        const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', child, dynamo.endpoint, 'bench', clusterId], { encoding: 'utf8', env: { ...process.env, AWS_REGION: 'us-east-1' } });
        const measured = JSON.parse(result.stdout.trim()) as { ms: number; cpuMs: number; rules: number };
        if (measured.rules !== rules.length) throw new Error(`cold load compiled ${measured.rules} rules, expected ${rules.length}`);
        runs.push(measured.ms);
        cpuRuns.push(measured.cpuMs);
      }
      results.push({ label, ms: median(runs), cpuMs: median(cpuRuns), rules: rules.length, megabytes: rules.reduce((total, rule) => total + ruleCost(rule).bytes, 0) / 1024 / 1024 });
    }
    return results;
  } finally {
    client.destroy();
    await dynamo.close();
  }
}

const [largest, ...typical] = await coldLoads([
  { label: 'the largest snapshot', rules: largestSnapshotRules() },
  ...COLD_SIZES.map((count) => ({ label: `${count.toLocaleString('en-US')} typical rules`, rules: realisticRules(count) })),
]);

const format = (ns: number) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`);
const ratio = (value: number) => `${value.toFixed(2)}x`;
const load = () => loadavg().map((value) => value.toFixed(1)).join(' ');
console.log(`node ${process.version}, ${cpus().length} cores, load average ${loadAtStart} at the start and ${load()} at the end; ${ROUNDS} rounds of ${ROUND_MS} ms, median per review`);
console.log(`rule sets: ${RULE_SET_DESCRIPTION}\n`);
console.log([
  'case'.padEnd(26), 'request'.padStart(8), 'reviews/s'.padStart(10), 'per review'.padStart(11),
  'floor'.padStart(10), 'ratio'.padStart(6), 'req. floor'.padStart(11), 'ratio'.padStart(6), '  decision',
].join(' '));
for (const item of [...sized, worst!]) {
  console.log([
    item.label.padEnd(26),
    `${(item.bytes / 1024).toFixed(1)}K`.padStart(8),
    Math.round(1e9 / item.reviewNs).toLocaleString('en-US').padStart(10),
    format(item.reviewNs).padStart(11),
    format(item.floorNs).padStart(10),
    ratio(item.reviewNs / item.floorNs).padStart(6),
    format(item.requestFloorNs).padStart(11),
    ratio(item.reviewNs / item.requestFloorNs).padStart(6),
    `  ${item.decision}`,
  ].join(' '));
}
console.log('floor: JSON.parse(request) + JSON.stringify(response); req. floor: JSON.parse(request) + JSON.stringify(request), the issue\'s');
console.log(`\ncold load and compile (read, content hash, every rule validated again, compiled with the index; median of ${COLD_RUNS} fresh processes):`);
for (const item of [largest!, ...typical]) {
  const what = item === largest ? `${item.label} (${item.rules} rules of the largest size)` : item.label;
  console.log(`  ${what.padEnd(48)} ${item.megabytes.toFixed(1).padStart(5)} MiB ${item.ms.toFixed(0).padStart(6)} ms (CPU ${item.cpuMs.toFixed(0)} ms)`);
}
// Last, so that the fresh processes it starts do not share the cores with the measurements above.
const cliStart = await measureCliStart();
console.log('');
for (const line of startTimeLines(cliStart)) console.log(line);
const bySize = (count: number) => sized.find((item) => item.label === `${count.toLocaleString('en-US')} rules`)!;
const [hundred, tenThousand] = [bySize(100), bySize(10000)];
const coldTenThousand = typical.find((item) => item.rules === 10000)!;
const scaling = tenThousand.reviewNs / hundred.reviewNs;
const targets = [
  ['10,000 rules at most 1.5x the time of 100 rules per review', scaling <= 1.5, ratio(scaling)],
  ['100 rules at most 2x the issue\'s floor (parse + stringify of the request)', hundred.reviewNs / hundred.requestFloorNs <= 2, ratio(hundred.reviewNs / hundred.requestFloorNs)],
  ['worst case under 25 ms', worst!.reviewNs < 25e6, format(worst!.reviewNs)],
  [`cold load and compile of the largest snapshot under ${COLD_LOAD_TARGET_MS} ms`, largest!.ms < COLD_LOAD_TARGET_MS, `${largest!.ms.toFixed(0)} ms, ${ratio(largest!.ms / COLD_LOAD_TARGET_MS)} of the budget`],
  [`cold load and compile of 10,000 typical rules under ${COLD_LOAD_TARGET_MS} ms`, coldTenThousand.ms < COLD_LOAD_TARGET_MS, `${coldTenThousand.ms.toFixed(0)} ms, ${ratio(coldTenThousand.ms / COLD_LOAD_TARGET_MS)} of the budget`],
  ...cliStart.rows.flatMap((row) =>
    row.targetMs === undefined
      ? []
      : ([[`${row.label} starts in under ${row.targetMs} ms`, row.ms < row.targetMs, `${row.ms.toFixed(0)} ms, ${ratio(row.ms / cliStart.floorMs)} node -e 0`]] as const),
  ),
] as const;
console.log('\ntargets:');
for (const [name, met, value] of targets) console.log(`  ${met ? 'met ' : 'MISSED'}  ${name} (${value})`);
process.exitCode = targets.every(([, met]) => met) ? 0 : 1;
