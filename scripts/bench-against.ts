/**
 * `npm run bench:against -- REF`: this checkout's admission cost beside REF's, for a change that must not alter it (a
 * refactor). Prints, as ratios to REF: the admission bundle's size and its load time in fresh processes (in turn), and
 * a review of the example migration (every example rule, with stamps) in alternating rounds in one process, beside the
 * spread of this checkout's review measured twice in the same rounds, which is the run's noise.
 *
 * Flags: --rounds N (default 9), --round-ms N (default 400).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { answerAdmissionReview } from '../lib/admission/index.ts';
import { compileRuleSet } from '../lib/engine/index.ts';
import { loadRuleFiles } from '../lib/rule-files/index.ts';
import { keyedStamps } from '../lib/stamp/index.ts';
import { bundleAgainst, treeAt } from './baseline.ts';
import { measureAlternating } from './measure.ts';

const FIXTURE = fileURLToPath(new URL('../test/fixtures/reviews/deployment-legacy-pool.json', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../examples/rules', import.meta.url));
const STAMP_KEY = 'bench-stamp-key-0123456789abcdefghijklmn';

/** The review of one checkout: its own modules, rules read and compiled by its own code. */
type Review = () => number;

interface ReviewModules {
  readonly answerAdmissionReview: typeof answerAdmissionReview;
  readonly compileRuleSet: typeof compileRuleSet;
  readonly loadRuleFiles: typeof loadRuleFiles;
  readonly keyedStamps: typeof keyedStamps;
}

/** The example migration's review under a checkout's modules; the body length, so the work is not optimised away. */
async function reviewOf(modules: ReviewModules): Promise<{ readonly review: Review; readonly answer: string }> {
  const body = readFileSync(FIXTURE, 'utf8');
  const ruleSet = modules.compileRuleSet((await modules.loadRuleFiles([EXAMPLES])).rules);
  const options = { stamps: modules.keyedStamps(STAMP_KEY) };
  const answer = modules.answerAdmissionReview(body, ruleSet, options).body;
  return { review: () => modules.answerAdmissionReview(body, ruleSet, options).body.length, answer };
}

/** A baseline tree's modules, imported from its sources (tsx compiles them as it does this checkout's). */
async function baselineModules(tree: string): Promise<ReviewModules> {
  const load = (path: string) => import(join(tree, path)) as Promise<Partial<ReviewModules>>;
  const parts = await Promise.all(
    ['lib/admission/index.ts', 'lib/engine/index.ts', 'lib/rule-files/index.ts', 'lib/stamp/index.ts'].map(load),
  );
  const modules = Object.assign({}, ...parts) as Partial<ReviewModules>;
  for (const name of ['answerAdmissionReview', 'compileRuleSet', 'loadRuleFiles', 'keyedStamps'] as const)
    if (typeof modules[name] !== 'function') throw new Error(`the baseline's lib/ exports no ${name}`);
  return modules as ReviewModules;
}

const ratio = (value: number) => `${value.toFixed(3)}x`;

/** Reviews here, at the baseline and here again in alternating rounds; the baseline's answer must be this one's. */
async function reviewsAgainst(tree: string, rounds: { readonly rounds: number; readonly roundMs: number }) {
  const now = await reviewOf({ answerAdmissionReview, compileRuleSet, loadRuleFiles, keyedStamps });
  const before = await reviewOf(await baselineModules(tree));
  if (before.answer !== now.answer)
    throw new Error('the baseline answers the example review differently: not a refactor');
  const [nowNs, beforeNs, againNs] = measureAlternating([now.review, before.review, now.review], rounds);
  return { nowNs: nowNs!, beforeNs: beforeNs!, againNs: againNs! };
}

async function main(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { rounds: { type: 'string', default: '9' }, 'round-ms': { type: 'string', default: '400' } },
  });
  const [ref] = positionals;
  const rounds = { rounds: Number(values.rounds), roundMs: Number(values['round-ms']) };
  if (ref === undefined || positionals.length > 1 || !(rounds.rounds >= 1) || !(rounds.roundMs >= 1)) {
    console.error('usage: npm run bench:against -- REF [--rounds N] [--round-ms N]');
    return 2;
  }
  const folder = mkdtempSync(join(tmpdir(), 'podmutation-bench-against-'));
  try {
    const tree = treeAt(ref, folder);
    const review = await reviewsAgainst(tree, rounds);
    const bundle = await bundleAgainst(tree, folder);
    console.log(`against ${ref}:`);
    console.log(
      `  admission bundle ${(bundle.bytes / 1024).toFixed(1)} KiB, ${ratio(bundle.bytes / bundle.baselineBytes)} ` +
        `(${(bundle.baselineBytes / 1024).toFixed(1)} KiB)`,
    );
    console.log(
      `  its load ${bundle.loadMs.toFixed(1)} ms, ${ratio(bundle.loadMs / bundle.baselineLoadMs)} ` +
        `(${bundle.baselineLoadMs.toFixed(1)} ms)`,
    );
    const noise = Math.abs(review.againNs / review.nowNs - 1);
    console.log(
      `  review ${(review.nowNs / 1000).toFixed(1)} µs, ${ratio(review.nowNs / review.beforeNs)} ` +
        `(${(review.beforeNs / 1000).toFixed(1)} µs); the same review measured twice differs by ${(noise * 100).toFixed(1)}%`,
    );
    return 0;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
