/**
 * `podmutation test`'s run, offline: the test files found under the given folders, each with its rules, placements
 * and resources read from files, and each result checked against the engine's outcome for its resource's Pod. A
 * test file that cannot be read is reported in its place; the others still run.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describeIssues, POD_PLACEMENT_KIND, type NormalizedPlacement } from '../api/index.ts';
import { Capacity, Placement, type Verdict } from '../capacity/index.ts';
import { compileRuleSet, reviewPod, type MutationOutcome, type RuleSet } from '../engine/index.ts';
import { fileProblem, MalformedInputError, PodMutationError } from '../errors/index.ts';
import { createPlacementStep, parsePlacementPolicies, type PlacementStep } from '../placement/index.ts';
import { loadRuleFiles, parseResourceDocuments, parseSingleDocument, readTextFile } from '../rule-files/index.ts';
import { issuesOf, type Issue } from '../json/index.ts';
import { compareCodeUnits } from '../text/index.ts';
import { podInputs, type PodInput, type ResourceIdentity } from '../workloads/index.ts';
import { checkResult, patchedResource, type CaseFailure } from './expectations.ts';
import {
  readRuleTest,
  TEST_FILE_NAME,
  TEST_FILE_NAMES,
  type ExpectedResult,
  type ResourceReference,
  type RuleTest,
} from './format.ts';

/** One result of a test file, run: the resource it names, where that came from, and what failed (nothing: passed). */
interface CaseResult {
  readonly resource: string;
  readonly source: string;
  readonly failures: readonly CaseFailure[];
  /** Where the Pod fitted and fits, when the rules changed it (the engine's MutationOutcome.fit). */
  readonly fit?: NonNullable<MutationOutcome['fit']>;
  readonly seconds: number;
}

/** How test files are run: the capacity of files that name none, and the reader of those that do. */
interface RunOptions {
  /** The capacity of a test file that names no capacity files (the command's --capacity); default: none. */
  readonly capacity?: Capacity;
  /** Reads the Nodes and NodePools of capacity files (the CLI's --capacity reader); needed by files that name them. */
  readonly readCapacity?: (paths: readonly string[]) => Promise<Capacity>;
}

/** One test file, run; `error` when it, its rules, placements or resources cannot be read (then no case ran). */
export interface TestFileResult {
  readonly file: string;
  /** metadata.name, or the file when it cannot be read. */
  readonly name: string;
  readonly error?: { readonly message: string; readonly issues: readonly Issue[] };
  /** Each invalid rule and PodPlacement of the named rule files, described: a failure, since the cluster would skip it. */
  readonly invalidRules: readonly string[];
  readonly cases: readonly CaseResult[];
  /** The resources no result names: not checked. */
  readonly unchecked: readonly string[];
  /** True when the cases were judged against Nodes and NodePools (the file's capacity, or the command's). */
  readonly capacityGiven: boolean;
  readonly seconds: number;
}

// Resources listed in a message about a reference that names none of them; more are counted.
const MAX_LISTED_RESOURCES = 8;
// Folders a search for test files never enters.
const SKIPPED_FOLDERS = new Set(['node_modules', '.git']);

/** A resource identity as a result names it: KIND/NAMESPACE/NAME. */
function identityText(resource: ResourceIdentity): string {
  return `${resource.kind}/${resource.namespace}/${resource.name}`;
}

function names(reference: ResourceReference, resource: ResourceIdentity): boolean {
  return (
    reference.kind === resource.kind &&
    reference.name === resource.name &&
    (reference.namespace === undefined || reference.namespace === resource.namespace)
  );
}

function listed(inputs: readonly PodInput[]): string {
  const shown = inputs.slice(0, MAX_LISTED_RESOURCES).map((input) => identityText(input.resource));
  return `${shown.join(', ')}${inputs.length > MAX_LISTED_RESOURCES ? ` and ${inputs.length - MAX_LISTED_RESOURCES} more` : ''}`;
}

/**
 * The Pod input each result names. Every result must name exactly one resource, and no two results the same one;
 * one MalformedInputError lists every result that does not.
 */
function resolveResults(test: RuleTest, inputs: readonly PodInput[]): PodInput[] {
  const issues: Issue[] = [];
  const claimed = new Map<PodInput, string>();
  const resolved = test.results.map((result) => {
    const field = `${result.path}.resource`;
    const matches = inputs.filter((input) => names(result.resource, input.resource));
    if (matches.length === 0)
      issues.push({
        field,
        reason: `no resource ${result.resource.text} in the resources (they are ${listed(inputs) || 'none'})`,
      });
    else if (matches.length > 1)
      issues.push({
        field,
        reason: `${result.resource.text} names ${matches.length} resources (${matches.map((input) => input.origin).join('; ')}); give each its own name or namespace`,
      });
    else if (claimed.has(matches[0]!))
      issues.push({ field, reason: `names the same resource as ${claimed.get(matches[0]!)!}` });
    else claimed.set(matches[0]!, result.path);
    return matches[0]!;
  });
  if (issues.length > 0) {
    throw new MalformedInputError(
      `${test.file}: ${issues.map((issue) => `${issue.field}: ${issue.reason}`).join('; ')}`,
      { context: { source: test.file, issues } },
    );
  }
  return resolved;
}

/**
 * The managed placement step of the test: its placements file's policies (which win) and the PodPlacements of its rule
 * paths; undefined, as admission runs none, when there is no policy and no enabled PodPlacement.
 * @internal Exported for tests: the real-cluster test compares the offline placement with the webhook's.
 */
export async function testPlacementStep(
  test: RuleTest,
  placements: readonly NormalizedPlacement[],
): Promise<PlacementStep | undefined> {
  const policies =
    test.placements === undefined
      ? []
      : parsePlacementPolicies(
          parseSingleDocument(await readTextFile(test.placements), test.placements),
          test.placements,
        );
  const step = createPlacementStep({ flavour: test.capacityFlavour, policies, placements });
  return step.empty ? undefined : step;
}

/** The capacity a test file is judged against: its own capacity files, else the run's, else none. */
async function capacityOf(test: RuleTest, options: RunOptions): Promise<Capacity> {
  if (test.capacity === undefined) return options.capacity ?? Capacity.unknown();
  if (options.readCapacity === undefined)
    throw new Error(`runTestFile: ${test.file} names capacity files, and no readCapacity was given`);
  return options.readCapacity(test.capacity);
}

/**
 * Where the Pod as admitted can run, for a result that asks: the engine's verdict for a Pod the rules changed, else
 * the Pod as it came judged against the same capacity.
 */
function admittedFit(result: ExpectedResult, outcome: MutationOutcome, capacity: Capacity): Verdict | undefined {
  if (result.fit === undefined && result.fitMessage === undefined) return undefined;
  return outcome.fit?.after ?? capacity.judge(Placement.of(outcome.facts));
}

/** A test file read and made ready: its rules compiled, its placement step, and its capacity. */
interface LoadedTest {
  readonly test: RuleTest;
  readonly ruleSet: RuleSet;
  readonly step: PlacementStep | undefined;
  readonly capacity: Capacity;
}

async function runCase(loaded: LoadedTest, result: ExpectedResult, input: PodInput): Promise<CaseResult> {
  const { test, ruleSet, step, capacity } = loaded;
  const started = performance.now();
  // The request uid seeds Diversity placement: a stable one keeps a test's answer the same from run to run.
  const uid =
    input.uid ?? (typeof input.pod.metadata?.uid === 'string' ? input.pod.metadata.uid : result.resource.text);
  const outcome = reviewPod(
    { pod: input.pod, namespace: input.namespace, ruleSet, context: { requestUid: uid } },
    {
      managedSteps: step === undefined ? [] : [step],
      enforcement: test.enforcement,
      source: input.origin,
      fallbackNamespace: test.namespace,
      ...(input.passThrough === undefined ? {} : { passThrough: input.passThrough }),
      capacity,
    },
  );
  const patched =
    result.patchedResource === undefined
      ? undefined
      : {
          expected: parseSingleDocument(await readTextFile(result.patchedResource), result.patchedResource),
          actual: patchedResource(input, outcome),
        };
  const fit = admittedFit(result, outcome, capacity);
  const placement = step?.choose(outcome.facts);
  const failures = checkResult(result, input, outcome, {
    patched,
    ...(fit === undefined ? {} : { fit }),
    ...(placement === undefined ? {} : { placement }),
  });
  return {
    resource: result.resource.text,
    source: input.origin,
    failures,
    ...(outcome.fit === undefined ? {} : { fit: outcome.fit }),
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * Runs one test file; a file that cannot be read (or whose rules, placements, capacity or resources cannot) is a result
 * with `error`.
 */
export async function runTestFile(file: string, options: RunOptions = {}): Promise<TestFileResult> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  let name = file;
  try {
    const test = readRuleTest(parseSingleDocument(await readTextFile(file), file), file);
    name = test.name;
    const loaded = await loadRuleFiles(test.rules);
    const ruleSet = compileRuleSet(loaded.rules);
    const step = await testPlacementStep(test, loaded.placements.placements);
    const capacity = await capacityOf(test, options);
    const inputs: PodInput[] = [];
    for (const path of test.resources)
      inputs.push(...podInputs(parseResourceDocuments(await readTextFile(path), path), path, test.namespace).inputs);
    const resolved = resolveResults(test, inputs);
    const cases: CaseResult[] = [];
    const ready: LoadedTest = { test, ruleSet, step, capacity };
    for (const [index, result] of test.results.entries()) cases.push(await runCase(ready, result, resolved[index]!));
    const checked = new Set(resolved);
    return {
      file,
      name,
      invalidRules: [
        ...loaded.invalid.flatMap((invalid) => describeIssues(invalid)),
        ...loaded.placements.invalid.flatMap((invalid) => describeIssues(invalid, POD_PLACEMENT_KIND)),
      ],
      cases,
      unchecked: inputs
        .filter((input) => !checked.has(input))
        .map((input) => `${identityText(input.resource)} (${input.origin})`),
      capacityGiven: capacity.known,
      seconds: seconds(),
    };
  } catch (error) {
    // The project's own errors are input that cannot be read; anything else is a bug and is not hidden.
    if (!(error instanceof PodMutationError)) throw error;
    return {
      file,
      name,
      error: { message: error.message, issues: issuesOf(error) },
      invalidRules: [],
      cases: [],
      unchecked: [],
      capacityGiven: false,
      seconds: seconds(),
    };
  }
}

async function testFilesUnder(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries.sort((left, right) => compareCodeUnits(left.name, right.name))) {
    if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name))
      found.push(...(await testFilesUnder(join(path, entry.name))));
    else if (entry.isFile() && TEST_FILE_NAMES.has(entry.name)) found.push(join(path, entry.name));
  }
  return found;
}

/**
 * The test files of the paths, in order: a folder's podmutation-test.yaml (or .yml) files, recursively and sorted; a file as
 * given. A path that cannot be read, or a folder without a test file, is malformed input.
 */
export async function findTestFiles(
  paths: readonly string[],
  options: { readonly allowEmpty?: boolean } = {},
): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    let isFolder: boolean;
    try {
      isFolder = (await stat(path)).isDirectory();
    } catch (error) {
      throw new MalformedInputError(`test path ${path} cannot be read: ${fileProblem(error)}`, {
        cause: error,
        context: { source: path },
      });
    }
    if (!isFolder) {
      files.push(path);
      continue;
    }
    const found = await testFilesUnder(path);
    if (found.length === 0 && options.allowEmpty !== true) {
      throw new MalformedInputError(
        `no ${TEST_FILE_NAME} (or .yml) under ${path}; check the path, or pass --allow-empty where no tests is what you mean`,
        { context: { source: path } },
      );
    }
    files.push(...found);
  }
  return [...new Set(files)];
}
