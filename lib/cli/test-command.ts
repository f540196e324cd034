import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Option, type Command } from 'commander';
import { stringify } from 'yaml';
import { fileProblem, MalformedInputError } from '../errors/index.ts';
import {
  findTestFiles,
  junitReport,
  runTestFile,
  TEST_FILE_NAME,
  type CaseFailure,
  type TestFileResult,
} from '../rule-tests/index.ts';
import { canonicalJson, parseJsonExact } from '../json/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import type { Pod } from '../engine/index.ts';
import type { DiffSign } from '../scheduling/index.ts';
import { colourWanted, diffLine, lineDiff, schedulingDiff } from './diff.ts';
import { writeLine } from './io.ts';
import { outputOption, printDocument, type OutputFormat } from './output.ts';
import {
  capacityOption,
  fitCaveatLine,
  fitDocument,
  fitLines,
  fitShown,
  readCapacityFiles,
  type CapacityFlags,
} from './options/capacity.ts';
import { allowEmptyOption } from './options/rules.ts';

interface TestFlags extends CapacityFlags {
  readonly junit?: string;
  readonly allowEmpty?: boolean;
  readonly output: OutputFormat;
}

// Unchanged lines kept around each change of a diff; longer unchanged runs are cut to "…".
const DIFF_CONTEXT = 3;

/** A value with object keys sorted, so that two documents differ in the diff only where their values do. */
function sortedKeys(value: unknown): unknown {
  return value === undefined ? undefined : parseJsonExact(canonicalJson(value));
}

/** The unchanged runs of a line diff cut to DIFF_CONTEXT lines around each change. */
function withContext<Line extends { readonly sign: DiffSign }>(lines: readonly Line[], ellipsis: Line): Line[] {
  const near = lines.map((_, index) =>
    lines.slice(Math.max(0, index - DIFF_CONTEXT), index + DIFF_CONTEXT + 1).some((line) => line.sign !== ' '),
  );
  return lines.flatMap((line, index) =>
    near[index] ? [line] : near[index - 1] === true || index === 0 ? [ellipsis] : [],
  );
}

/** An expectation's scheduling fields (or the actual ones, in the same form) as the Pod fields they stand for. */
function schedulingPod(view: unknown): Pod {
  const { annotations, ...spec } = (view ?? {}) as Record<string, unknown>;
  return { metadata: annotations === undefined ? {} : { annotations }, spec } as Pod;
}

/**
 * What a failed expectation shows: its summary, then the difference (- expected, + actual). Scheduling fields get the
 * semantic diff explain prints (which requirement left or joined which term); other values a line diff of their YAML.
 * @internal Exported for tests: the JUnit tests render a failed case's diff as the command does.
 */
export function caseDiff(failure: CaseFailure, colour = false): string[] {
  if (failure.aspect === 'scheduling') {
    // The summary's one-line form is for -o json; people read the diff.
    return [
      'scheduling: differs as Kubernetes reads it (- expected, + actual):',
      ...schedulingDiff(schedulingPod(failure.expected), schedulingPod(failure.actual), colour).map(
        (line) => `  ${line}`,
      ),
    ];
  }
  const yaml = (value: unknown) => stringify({ [failure.aspect]: sortedKeys(value) }).trimEnd();
  const lines = withContext(lineDiff(yaml(failure.expected), yaml(failure.actual)), { sign: ' ', text: '…' });
  return [
    `${failure.aspect}: ${failure.summary}`,
    ...lines.map(({ sign, text }) => `  ${diffLine(sign, text, colour)}`),
  ];
}

function printFile(result: TestFileResult, { stdout }: CliContext['streams'], colour: boolean): void {
  writeLine(stdout, result.name === result.file ? result.file : `${result.file} (${result.name})`);
  if (result.error !== undefined) {
    writeLine(stdout, '  ERROR the test file cannot be run; fix it:');
    for (const { field, reason } of result.error.issues)
      writeLine(stdout, `        ${field === '' ? reason : `${field}: ${reason}`}`);
    return;
  }
  if (result.invalidRules.length > 0) {
    writeLine(stdout, '  FAIL  rules: invalid rules are skipped, as the cluster would skip them');
    for (const line of result.invalidRules) writeLine(stdout, `        ${line}`);
  }
  for (const item of result.cases) {
    writeLine(stdout, `  ${item.failures.length === 0 ? 'PASS' : 'FAIL'}  ${item.resource}`);
    for (const line of item.failures.flatMap((failure) => caseDiff(failure, colour)))
      writeLine(stdout, `        ${line}`);
    if (fitShown(item.fit, result.capacityGiven))
      for (const line of fitLines(item.fit)) writeLine(stdout, `        ${line}`);
  }
  for (const resource of result.unchecked) writeLine(stdout, `  warning: ${resource} has no result; it is not checked`);
}

/** The run in the documented shape of `test -o json|yaml` (docs/cli.md, "Testing rules"). */
function runDocument(results: readonly TestFileResult[], totals: Totals) {
  return {
    files: results.map(({ file, name, error, invalidRules, cases, unchecked, capacityGiven }) => ({
      file,
      name,
      ...(error === undefined
        ? {}
        : { error: { message: error.message, issues: error.issues.map(({ field, reason }) => ({ field, reason })) } }),
      invalidRules,
      cases: cases.map(({ resource, source, failures, fit }) => ({
        resource,
        source,
        passed: failures.length === 0,
        failures,
        ...(fitShown(fit, capacityGiven) ? { fit: fitDocument(fit) } : {}),
      })),
      unchecked,
    })),
    ...totals,
  };
}

interface Totals {
  readonly passed: number;
  readonly failed: number;
  readonly errors: number;
}

function totalsOf(results: readonly TestFileResult[]): Totals {
  const cases = results.flatMap((result) => result.cases);
  const failedCases = cases.filter((item) => item.failures.length > 0).length;
  return {
    passed: cases.length - failedCases,
    failed: failedCases + results.filter((result) => result.invalidRules.length > 0).length,
    errors: results.filter((result) => result.error !== undefined).length,
  };
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** "17 passed, 0 failed in 5 test files", and how many files could not be run. */
function summaryLine(totals: Totals, files: number): string {
  const errors = totals.errors === 0 ? '' : `; ${plural(totals.errors, 'test file')} could not be run`;
  return `${totals.passed} passed, ${totals.failed} failed in ${plural(files, 'test file')}${errors}`;
}

/** Runs every test file of the paths, offline; prints PASS or FAIL per result, with a diff for each failure. */
async function test(paths: readonly string[], flags: TestFlags, context: CliContext): Promise<number> {
  const { streams } = context;
  const colour = colourWanted(streams.stdout, context.env);
  const files = await findTestFiles(paths, { allowEmpty: flags.allowEmpty === true });
  const run = {
    capacity: await readCapacityFiles(flags.capacity ?? [], streams),
    readCapacity: (capacityFiles: readonly string[]) => readCapacityFiles(capacityFiles, streams),
  };
  const results: TestFileResult[] = [];
  for (const file of files) {
    const result = await runTestFile(file, run);
    results.push(result);
    if (flags.output === 'table') {
      printFile(result, streams, colour);
      writeLine(streams.stdout, '');
    }
  }
  const totals = totalsOf(results);
  const judged = results.some(({ cases, capacityGiven }) => cases.some(({ fit }) => fitShown(fit, capacityGiven)));
  if (flags.output === 'table' && judged) writeLine(streams.stdout, `${fitCaveatLine()}\n`);
  if (flags.output === 'table') writeLine(streams.stdout, summaryLine(totals, files.length));
  else printDocument(streams.stdout, flags.output, runDocument(results, totals));
  if (flags.junit !== undefined) {
    const folder = dirname(flags.junit);
    try {
      // A report folder that does not exist yet is made, as CI configurations expect (test-results/).
      await mkdir(folder, { recursive: true });
    } catch (error) {
      throw new MalformedInputError(`cannot make the folder ${folder} of ${flags.junit}: ${fileProblem(error)}`, {
        cause: error,
      });
    }
    try {
      await writeFile(
        flags.junit,
        junitReport(results, (failure) => caseDiff(failure)),
      );
    } catch (error) {
      throw new MalformedInputError(`cannot write ${flags.junit}: ${fileProblem(error)}`, { cause: error });
    }
  }
  if (totals.errors > 0) return EXIT.usage;
  return totals.failed > 0 ? EXIT.findings : EXIT.ok;
}

/** `podmutation test`. */
export function registerTest(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'test', {
    summary: 'run PodMutationTest files offline: each expected result passes, or fails with a diff',
    description:
      `Finds every ${TEST_FILE_NAME} (or .yml) under the given folders (or takes the given test files), and for each result of each ` +
      "file runs the Pod of the named resource through the engine with the test's rules and placements, as admission would, " +
      'and compares the applied and audited rules, the denial, the scheduling fields (as Kubernetes reads them) and the patched ' +
      'resource with what the result expects. Prints PASS or FAIL per result, with a diff for each failure; a test file that ' +
      'cannot be read is reported and the other files still run. A test file may name capacity files (capacity:), and ' +
      '--capacity gives them to the files that name none: each Pod is then judged as admission judges it against them ' +
      '(a rule annotated if-unschedulable: skip held back from a Pod it would strand), each changed Pod shows where it ' +
      'can run, and a result may expect it (fit, fitMessage). The file format is in docs/cli.md, "Testing rules".',
    examples: ['podmutation test examples/tests', 'podmutation test rules/tests --junit test-results/podmutation.xml'],
    exits: {
      0: 'every result passed',
      1: "some result failed, or some test file's rules are invalid",
      2: 'usage error, or a test file (or its rules, placements or resources) that cannot be read; the other files still ran',
    },
  });
  command
    .argument('<paths...>', `folders searched recursively for ${TEST_FILE_NAME} (or .yml), or test files`)
    .addOption(new Option('--junit <file>', 'also write the results to FILE as JUnit XML, for CI test reports'))
    .addOption(capacityOption('the Pods of test files that name no capacity'))
    .addOption(outputOption())
    .addOption(allowEmptyOption('test folders that hold no test file'));
  onRun<TestFlags, [string[]]>(command, (flags, [paths]) => test(paths, flags, context));
}
