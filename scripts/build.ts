/**
 * `npm run build`: bundles every functions/<name>/index.ts with esbuild into dist/<name>/index.js (CommonJS, node22,
 * minified, AWS SDK bundled; a package.json beside each bundle marks it CommonJS, as the project's own says
 * "type": "module"), prints each bundle's size, fails when the admission bundle holds a forbidden package or exceeds
 * its size budget, then measures how long Node takes to load the admission bundle against an empty module and against
 * the same bundle without kept names (fresh processes, median of several runs) and prints the ratios.
 *
 * Stack traces name the project's functions: its own code (functions/, lib/) is bundled first with every function and
 * class name kept (esbuild keepNames), then bundled with the packages and minified. No source map is written: the
 * Lambda runtime reads none unless NODE_OPTIONS=--enable-source-maps, which costs more load time than the names.
 *
 * Flags: --outdir DIR (default dist), --skip-load-time (what packaging runs, through serverless/plugin.mjs).
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { median, timeNodeProcess } from './measure.ts';

/** One built function. */
interface FunctionBundle {
  readonly name: string;
  readonly outfile: string;
  readonly bytes: number;
  /** Every input file esbuild bundled, relative to the project root. */
  readonly inputs: readonly string[];
}

/** Load times of the admission bundle and of an empty module, in milliseconds (medians). */
interface LoadTimeReport {
  readonly bundleMs: number;
  readonly emptyMs: number;
  /** A bundle of nothing but a DynamoDBClient with GetItem and Query: the floor the SDK alone sets. */
  readonly sdkFloorMs: number;
  /** The comparison bundle given (the admission bundle built without kept names), when one was. */
  readonly comparisonMs: number | undefined;
  readonly ratio: number;
  readonly repetitions: number;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMISSION = 'admission';
// 600 KB, counted in kibibytes as esbuild and ls -h report them.
const ADMISSION_MAX_BYTES = 600 * 1024;
// The admission bundle runs on every cold start of the hot path: no cluster client (the sync's job) and no
// embedded DynamoDB (local server and tests only).
const ADMISSION_FORBIDDEN_PACKAGES = ['@kubernetes/client-node', 'dynalite'];
const LOAD_TIME_REPETITIONS = 9;
// What the admission module needs to initialise at import; nothing is contacted until a request arrives.
const PROBE_ENV = {
  RULES_TABLE: 'load-time-probe',
  WEBHOOK_TOKEN: 'load-time-probe-token-0123456789abcdef',
  AWS_REGION: 'us-east-1',
  POWERTOOLS_METRICS_NAMESPACE: 'podmutation',
  POWERTOOLS_SERVICE_NAME: 'podmutation-admission',
};

/** The names of functions/<name>/index.ts, sorted. */
function functionNames(root: string): string[] {
  const folder = join(root, 'functions');
  return readdirSync(folder, { withFileTypes: true })
    .filter(
      (entry) =>
        entry.isDirectory() && statSync(join(folder, entry.name, 'index.ts'), { throwIfNoEntry: false })?.isFile(),
    )
    .map((entry) => entry.name)
    .sort();
}

/** Options of buildFunctions. */
interface BuildFunctionsOptions {
  /** The project root holding functions/ and node_modules/ (default: this repository). */
  readonly root?: string;
  /** Where dist/<name>/ go, relative to the root. */
  readonly outdir: string;
  /** Keep the project's function and class names for stack traces (default true; false only to measure their cost). */
  readonly keepNames?: boolean;
}

/** The project's own code of one function, bundled with packages left as imports. */
interface OwnCode {
  readonly code: string;
  /** The project files it holds, relative to the root. */
  readonly inputs: readonly string[];
}

const OWN_CODE_NAMESPACE = 'podmutation-own-code';

/** How every Lambda bundle is built; the load-time probe is built the same way. */
function bundleOptions(root: string): BuildOptions {
  return {
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: 'node22',
    // Measured on the admission bundle: CommonJS loads about 15 ms faster than ESM, because an ESM bundle hoists every
    // Node built-in any bundled module imports (http2, worker_threads, child_process...) to eager static imports.
    format: 'cjs',
    // Prefer the packages' ESM sources (AWS SDK, Powertools): they tree-shake.
    mainFields: ['module', 'main'],
    minify: true,
    // Lambda always has its credentials in the environment; the SDK's full default chain is not shipped.
    // Nor the event stream codec, which no operation the functions call uses (functions/shims/event-streams.ts).
    alias: {
      '@aws-sdk/credential-provider-node': join(root, 'functions', 'shims', 'credential-provider.ts'),
      '@smithy/core/event-streams': join(root, 'functions', 'shims', 'event-streams.ts'),
    },
    logLevel: 'warning',
  };
}

/**
 * The first step: each function's own code (functions/<name>, the lib/ it imports) in one ESM module, packages left as
 * imports, every function and class keeping its name through the minifier of the second step. Keeping the packages'
 * names too (keepNames on the whole bundle) would add 24 KiB (7%) to the admission bundle instead of 7 KiB.
 */
async function bundleOwnCode(
  root: string,
  names: readonly string[],
  keepNames: boolean,
): Promise<Map<string, OwnCode>> {
  // Never written: the modules stay in memory for the second step.
  const outdir = join(root, '.own-code');
  const result = await build({
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    packages: 'external',
    keepNames,
    entryPoints: Object.fromEntries(names.map((name) => [`${name}/index`, join(root, 'functions', name, 'index.ts')])),
    outdir,
    write: false,
    metafile: true,
    logLevel: 'warning',
  });
  return new Map(
    names.map((name) => {
      const path = join(outdir, name, 'index.js');
      const file = result.outputFiles.find((output) => output.path === path);
      const output = result.metafile.outputs[relative(root, path).split('\\').join('/')];
      if (file === undefined || output === undefined) throw new Error(`esbuild bundled no own code for ${name}`);
      return [name, { code: file.text, inputs: Object.keys(output.inputs) }];
    }),
  );
}

/** Resolves `podmutation-own-code:<name>` to the first step's module of that function, its imports from the root. */
function ownCodeEntries(root: string, ownCode: ReadonlyMap<string, OwnCode>): Plugin {
  return {
    name: 'own-code',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: new RegExp(`^${OWN_CODE_NAMESPACE}:`) }, (args) => ({
        path: args.path.slice(OWN_CODE_NAMESPACE.length + 1),
        namespace: OWN_CODE_NAMESPACE,
      }));
      pluginBuild.onLoad({ filter: /.*/, namespace: OWN_CODE_NAMESPACE }, (args) => {
        const own = ownCode.get(args.path);
        return own === undefined ? undefined : { contents: own.code, loader: 'js', resolveDir: root };
      });
    },
  };
}

/** Bundles every function: its own code first (names kept), then all functions with their packages in one run. */
async function buildFunctions(options: BuildFunctionsOptions): Promise<FunctionBundle[]> {
  const root = options.root ?? ROOT;
  const outdir = resolve(root, options.outdir);
  const names = functionNames(root);
  const ownCode = await bundleOwnCode(root, names, options.keepNames ?? true);
  // Only the folders this build writes are cleared, so leftovers of an earlier layout are not shipped.
  for (const name of names) rmSync(join(outdir, name), { recursive: true, force: true });
  const result = await build({
    ...bundleOptions(root),
    entryPoints: Object.fromEntries(names.map((name) => [`${name}/index`, `${OWN_CODE_NAMESPACE}:${name}`])),
    plugins: [ownCodeEntries(root, ownCode)],
    outdir,
    legalComments: 'external',
    metafile: true,
  });
  for (const name of names) writeFileSync(join(outdir, name, 'package.json'), '{ "type": "commonjs" }\n');
  return names.map((name) => {
    const outfile = join(outdir, name, 'index.js');
    const output = result.metafile.outputs[relative(root, outfile).split('\\').join('/')];
    if (output === undefined) throw new Error(`esbuild wrote no ${outfile}`);
    const packageInputs = Object.keys(output.inputs).filter((input) => !input.startsWith(`${OWN_CODE_NAMESPACE}:`));
    const inputs = [...new Set([...(ownCode.get(name)?.inputs ?? []), ...packageInputs])].sort();
    return { name, outfile, bytes: output.bytes, inputs };
  });
}

/** The problems of the admission bundle: forbidden packages among its inputs, size above the budget. */
function admissionBundleProblems(bundle: FunctionBundle): string[] {
  const problems = ADMISSION_FORBIDDEN_PACKAGES.flatMap((pkg) => {
    const files = bundle.inputs.filter((input) => input.includes(`node_modules/${pkg}/`));
    return files.length === 0
      ? []
      : [`contains ${pkg} (${files.length} files, first ${files[0]}); only type imports are allowed`];
  });
  if (bundle.bytes > ADMISSION_MAX_BYTES) {
    problems.push(`is ${kib(bundle.bytes)}, above the budget of ${kib(ADMISSION_MAX_BYTES)}`);
  }
  return problems;
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Wall time of one fresh `node file`, in milliseconds; fails when the module does not load. */
function timeProcess(file: string): number {
  return timeNodeProcess([file], { env: { ...process.env, ...PROBE_ENV } });
}

const SDK_FLOOR_SOURCE = `import { DynamoDBClient, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
globalThis.sdkFloor = [new DynamoDBClient({ region: 'us-east-1' }), GetItemCommand, QueryCommand];
`;

/** Bundles the SDK floor probe exactly as the functions are bundled. */
async function buildSdkFloor(folder: string): Promise<string> {
  const entry = join(folder, 'sdk-floor.mjs');
  writeFileSync(entry, SDK_FLOOR_SOURCE);
  const outfile = join(folder, 'sdk-floor', 'index.js');
  await build({ ...bundleOptions(ROOT), entryPoints: [entry], outfile, nodePaths: [join(ROOT, 'node_modules')] });
  writeFileSync(join(folder, 'sdk-floor', 'package.json'), '{ "type": "commonjs" }\n');
  return outfile;
}

/**
 * Median wall time of fresh processes loading the bundle, an empty module, the SDK floor probe and the comparison
 * bundle if one is given, runs interleaved after a warm-up so that load from elsewhere falls on all of them alike.
 */
async function measureLoadTime(
  bundleFile: string,
  options: { readonly repetitions?: number; readonly comparisonFile?: string } = {},
): Promise<LoadTimeReport> {
  const repetitions = options.repetitions ?? LOAD_TIME_REPETITIONS;
  const folder = mkdtempSync(join(tmpdir(), 'podmutation-load-time-'));
  const emptyFile = join(folder, 'empty.cjs');
  writeFileSync(emptyFile, '');
  try {
    const sdkFloorFile = await buildSdkFloor(folder);
    const files = { empty: emptyFile, sdkFloor: sdkFloorFile, bundle: bundleFile, comparison: options.comparisonFile };
    const times = {
      empty: [] as number[],
      sdkFloor: [] as number[],
      bundle: [] as number[],
      comparison: [] as number[],
    };
    const runAll = (record: boolean): void => {
      for (const key of ['empty', 'sdkFloor', 'bundle', 'comparison'] as const) {
        const file = files[key];
        if (file === undefined) continue;
        const elapsed = timeProcess(file);
        if (record) times[key].push(elapsed);
      }
    };
    runAll(false);
    for (let run = 0; run < repetitions; run += 1) runAll(true);
    const bundleMs = median(times.bundle);
    const emptyMs = median(times.empty);
    return {
      bundleMs,
      emptyMs,
      sdkFloorMs: median(times.sdkFloor),
      comparisonMs: times.comparison.length === 0 ? undefined : median(times.comparison),
      ratio: bundleMs / emptyMs,
      repetitions,
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The admission bundle built without kept names, in a scratch folder, for what the names cost. */
async function withoutKeptNames<T>(measure: (bundle: FunctionBundle) => Promise<T>): Promise<T> {
  const folder = mkdtempSync(join(tmpdir(), 'podmutation-without-names-'));
  try {
    const bundles = await buildFunctions({ outdir: folder, keepNames: false });
    const admission = bundles.find((bundle) => bundle.name === ADMISSION);
    if (admission === undefined) throw new Error(`the build without kept names wrote no ${ADMISSION} bundle`);
    return await measure(admission);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: { outdir: { type: 'string', default: 'dist' }, 'skip-load-time': { type: 'boolean', default: false } },
  });
  const bundles = await buildFunctions({ outdir: values.outdir });
  for (const bundle of bundles) {
    console.log(
      `${bundle.name.padEnd(12)} ${kib(bundle.bytes).padStart(12)}  ${relative(process.cwd(), bundle.outfile)}`,
    );
  }
  const admission = bundles.find((bundle) => bundle.name === ADMISSION);
  if (admission === undefined) {
    console.error(`build: functions/${ADMISSION}/index.ts is missing`);
    return 1;
  }
  const problems = admissionBundleProblems(admission);
  if (problems.length > 0) {
    for (const problem of problems) console.error(`build: the ${ADMISSION} bundle ${problem}`);
    return 1;
  }
  if (!values['skip-load-time']) {
    const { report, bytes } = await withoutKeptNames(async (plain) => ({
      report: await measureLoadTime(admission.outfile, { comparisonFile: plain.outfile }),
      bytes: plain.bytes,
    }));
    const extra = admission.bytes - bytes;
    console.log(
      `names kept for stack traces: ${ADMISSION} ${extra >= 0 ? '+' : ''}${kib(extra)} ` +
        `(${((extra / bytes) * 100).toFixed(1)}%) over the same bundle without them (${kib(bytes)})`,
    );
    console.log(
      `load time (median of ${report.repetitions} fresh processes): ${ADMISSION} ${report.bundleMs.toFixed(1)} ms, ` +
        `empty module ${report.emptyMs.toFixed(1)} ms, ratio ${report.ratio.toFixed(2)}x (target at most 2x)`,
    );
    if (report.comparisonMs !== undefined) {
      console.log(
        `  without kept names: ${report.comparisonMs.toFixed(1)} ms, ratio ${(report.comparisonMs / report.emptyMs).toFixed(2)}x; ` +
          `the names cost ${(report.bundleMs - report.comparisonMs).toFixed(1)} ms`,
      );
    }
    console.log(
      `  for scale: a bundle of only a DynamoDBClient loads in ${report.sdkFloorMs.toFixed(1)} ms, ` +
        `${(report.sdkFloorMs / report.emptyMs).toFixed(2)}x the empty module; the rest of the admission bundle adds ` +
        `${(report.bundleMs - report.sdkFloorMs).toFixed(1)} ms`,
    );
  }
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}

export { buildFunctions, admissionBundleProblems, measureLoadTime, ADMISSION_MAX_BYTES };
export type { FunctionBundle, BuildFunctionsOptions, LoadTimeReport };
