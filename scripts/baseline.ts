/** Another commit's code beside this checkout's, for measurements side by side: its tree, and its admission bundle. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFunctions, measureLoadTime, type FunctionBundle } from './build.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The admission bundle here and at a baseline: bytes, and load times of fresh processes run in turn. */
interface BundleCost {
  readonly bytes: number;
  readonly baselineBytes: number;
  readonly loadMs: number;
  readonly baselineLoadMs: number;
}

/** The tree of `ref` (git archive) in `folder`/baseline, with this checkout's node_modules; its path. */
function treeAt(ref: string, folder: string): string {
  const tree = join(folder, 'baseline');
  mkdirSync(tree, { recursive: true });
  const archive = execFileSync('git', ['archive', ref], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', tree], { input: archive });
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  return tree;
}

function admissionOf(bundles: readonly FunctionBundle[]): FunctionBundle {
  const admission = bundles.find((bundle) => bundle.name === 'admission');
  if (admission === undefined) throw new Error('the build wrote no admission bundle');
  return admission;
}

/** Builds the admission bundle here (into `folder`/now) and in a baseline tree (treeAt), and loads both in turn. */
async function bundleAgainst(baseline: string, folder: string): Promise<BundleCost> {
  // Built by the baseline's own build script, as it shipped (this one's aliases may name files the baseline lacks).
  const { buildFunctions: buildBaseline } = (await import(join(baseline, 'scripts', 'build.ts'))) as {
    buildFunctions: typeof buildFunctions;
  };
  const before = admissionOf(await buildBaseline({ root: baseline, outdir: 'dist' }));
  const now = admissionOf(await buildFunctions({ outdir: join(folder, 'now') }));
  const load = await measureLoadTime(now.outfile, { comparisonFile: before.outfile });
  return { bytes: now.bytes, baselineBytes: before.bytes, loadMs: load.bundleMs, baselineLoadMs: load.comparisonMs! };
}

export { bundleAgainst, treeAt };
export type { BundleCost };
