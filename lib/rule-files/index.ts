import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { asKubectlReadsIt, KUBECTL_YAML_OPTIONS } from './kubectl-yaml.ts';
import { streamYaml as streamYamlWith } from './yaml-stream.ts';
import {
  applySnapshotBudget,
  POD_MUTATION_API_VERSION,
  POD_MUTATION_KIND,
  POD_PLACEMENT_KIND,
  validatePodMutation,
  validatePodPlacement,
  type InvalidRule,
  type NormalizedPlacement,
  type NormalizedRule,
  type PlacementVerdict,
  type RuleVerdict,
} from '../api/index.ts';
import { DuplicateRuleError, fileProblem, MalformedInputError } from '../errors/index.ts';
import {
  checkNesting,
  exactInteger,
  MAX_JSON_DEPTH,
  parseJsonExact,
  textNestsDeeperThan,
  type StreamedJson,
} from '../json/index.ts';
import { compareCodeUnits } from '../text/index.ts';

/** One resource read from a file, with the validator's verdict (a RuleVerdict, or a PlacementVerdict). */
interface Loaded<Verdict> {
  readonly source: string;
  readonly verdict: Verdict;
  /** The document as read, for what only the source shows (a field left out rather than defaulted). */
  readonly resource: unknown;
}

/** The PodPlacements of rules paths, apart from the rules: every verdict in file order, and the split. */
interface LoadedPlacements {
  readonly loaded: readonly Loaded<PlacementVerdict>[];
  readonly placements: readonly NormalizedPlacement[];
  readonly invalid: readonly InvalidRule[];
}

/** A document of a rules path that is no PodMutation (a Kustomization, a chart's values.yaml), left out with a note. */
interface SkippedDocument {
  readonly source: string;
  /** What the document is, for the note: `kind Kustomization`, `no kind`, `apiVersion argoproj.io/v1alpha1`. */
  readonly what: string;
}

/** A file of a rules path that could not be read or parsed, when the load carries on past it (LoadOptions.keepGoing). */
interface UnreadableFile {
  readonly source: string;
  readonly error: MalformedInputError;
}

/** How rule files are loaded. */
interface LoadOptions {
  /** Carry on past a file that cannot be read or parsed, listing it in `unreadable` (validate); default: throw at it. */
  readonly keepGoing?: boolean;
  /** Accept paths that hold no PodMutation and no PodPlacement; default: a MalformedInputError, so that a wrong path does not pass. */
  readonly allowEmpty?: boolean;
  /** Globs of files and folders not to read, matched against the path under the given rules path and the base name. */
  readonly exclude?: readonly string[];
  /** Reads standard input, for the path "-" (without it, "-" is a file name). */
  readonly stdin?: () => Promise<string>;
}

/** The rules read from files: every verdict in file order, and the split into valid and invalid; PodPlacements apart. */
interface LoadedRules {
  readonly loaded: readonly Loaded<RuleVerdict>[];
  readonly rules: readonly NormalizedRule[];
  readonly invalid: readonly InvalidRule[];
  /** The PodPlacements of the same paths, validated as the cluster's. */
  readonly placements: LoadedPlacements;
  /** Documents of other kinds, left out. */
  readonly skipped: readonly SkippedDocument[];
  /** Files that could not be read or parsed (only with keepGoing). */
  readonly unreadable: readonly UnreadableFile[];
}

const RULE_FILE_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** Reads a whole text file; a file that cannot be read is malformed input naming the path and the system's code. */
async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new MalformedInputError(`cannot read ${path}: ${fileProblem(error)}`, {
      cause: error,
      context: { source: path },
    });
  }
}

/** The 1-based line and column of a character offset, as editors and compilers count them. */
function positionOf(text: string, offset: number): { readonly line: number; readonly column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let index = text.indexOf('\n'); index !== -1 && index < end; index = text.indexOf('\n', index + 1)) {
    line += 1;
    lineStart = index + 1;
  }
  return { line, column: end - lineStart + 1 };
}

/** The reviver of YAML documents read with intAsBigInt: each bigint as parseJsonExact would give it. */
function exactIntegers(_key: unknown, value: unknown): unknown {
  return typeof value === 'bigint' ? exactInteger(value) : value;
}

/**
 * Parses YAML (multi-document) or JSON text into its non-empty documents, each checked to nest at most
 * MAX_JSON_DEPTH levels (the text is checked before the parser recurses into it). Throws MalformedInputError naming
 * the source and, for a deep document, its position.
 */
function parseYamlDocuments(text: string, source: string): unknown[] {
  if (textNestsDeeperThan(text)) {
    throw new MalformedInputError(`${source}: nests deeper than ${MAX_JSON_DEPTH} levels`, { context: { source } });
  }
  // Integers as bigints, then kept as parseJsonExact keeps them: tolerationSeconds 9223372036854775807 is valid int64,
  // and a double would round it (to 9223372036854775808, which Kubernetes refuses).
  const documents = parseAllDocuments(text, { prettyErrors: false, ...KUBECTL_YAML_OPTIONS });
  const values: unknown[] = [];
  for (const document of Array.isArray(documents) ? documents : [documents]) {
    if (document.errors.length > 0) {
      const first = document.errors[0]!;
      const at = positionOf(text, first.pos[0]);
      throw new MalformedInputError(`${source}:${at.line}:${at.column}: not valid JSON or YAML: ${first.message}`, {
        cause: first,
        context: { source, ...at },
      });
    }
    const problem = asKubectlReadsIt(document);
    if (problem !== undefined) throw new MalformedInputError(`${source}: document ${values.length + 1}: ${problem}`);
    const value: unknown = document.toJS({ maxAliasCount: 100, reviver: exactIntegers });
    if (value === null || value === undefined) continue;
    checkNesting(value, `${source}: document ${values.length + 1}`);
    values.push(value);
  }
  return values;
}

/**
 * Parses one YAML or JSON document, nested at most MAX_JSON_DEPTH levels; more than one document, a syntax error or
 * deeper nesting is malformed input.
 */
function parseSingleDocument(text: string, source: string): unknown {
  let json: unknown;
  try {
    json = parseJsonExact(text);
  } catch {
    // Not JSON: read it as YAML below.
  }
  if (json !== undefined) {
    checkNesting(json, source);
    return json;
  }
  const documents = parseYamlDocuments(text, source);
  if (documents.length === 0) throw new MalformedInputError(`${source}: input is empty`);
  if (documents.length > 1)
    throw new MalformedInputError(`${source}: expected one document, found ${documents.length}`, {
      context: { source, documents: documents.length },
    });
  return documents[0];
}

/**
 * Parses YAML (multi-document) or JSON text into resources; `List` documents (kind List or
 * PodMutationList) are flattened into their items. Throws MalformedInputError naming the source.
 */
function parseResourceDocuments(text: string, source: string): unknown[] {
  const resources: unknown[] = [];
  for (const value of parseYamlDocuments(text, source)) {
    if (
      typeof value === 'object' &&
      !Array.isArray(value) &&
      typeof (value as { kind?: unknown }).kind === 'string' &&
      (value as { kind: string }).kind.endsWith('List') &&
      Array.isArray((value as { items?: unknown }).items)
    ) {
      resources.push(...(value as { items: unknown[] }).items);
    } else resources.push(value);
  }
  return resources;
}

/**
 * YAML text read chunk by chunk, each piece as parseYamlDocuments reads it: a stream document by document, a List's
 * items one by one and then its other members (lib/rule-files/yaml-stream.ts).
 */
function streamYaml(chunks: AsyncIterable<string>, source: string): AsyncGenerator<StreamedJson> {
  return streamYamlWith(chunks, source, parseYamlDocuments);
}

/** The path "-": standard input, read once, named so in messages. */
const STDIN_PATH = '-';

/** Folders a search does not enter: hidden ones (.git, .github, .cache) and installed packages. */
function searchedFolder(name: string): boolean {
  return !name.startsWith('.') && name !== 'node_modules';
}

// What each wildcard of a glob stands for: double star and slash any folders, double star anything, star any part of
// a name, question mark one character.
const GLOB_WILDCARDS: Readonly<Record<string, string>> = { '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' };

/** A glob (the wildcards above, the rest literal) as a regular expression over a whole path. */
function globPattern(glob: string): RegExp {
  const source = glob
    .replace(/^\.\/|\/+$/g, '')
    .split(/(\*\*\/|\*\*|\*|\?)/)
    .map((part) => GLOB_WILDCARDS[part] ?? part.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
    .join('');
  return new RegExp(`^${source}$`);
}

/** Whether an entry (its path under the rules path, with /) is excluded by one of the globs. */
function excluded(relativePath: string, patterns: readonly RegExp[]): boolean {
  const name = relativePath.slice(relativePath.lastIndexOf('/') + 1);
  return patterns.some((pattern) => pattern.test(relativePath) || pattern.test(name));
}

async function ruleFilesUnder(
  path: string,
  patterns: readonly RegExp[],
  under = '',
  noun = 'rules path',
): Promise<string[]> {
  if (path === STDIN_PATH && under === '') return [path];
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw new MalformedInputError(`${noun} ${path} cannot be read: ${fileProblem(error)}`, {
      cause: error,
      context: { source: path },
    });
  }
  if (!info.isDirectory()) return [path];
  const entries = await readdir(path, { withFileTypes: true });
  const nested = await Promise.all(
    entries
      .filter((entry) =>
        entry.isDirectory() ? searchedFolder(entry.name) : RULE_FILE_EXTENSIONS.has(extname(entry.name)),
      )
      .filter((entry) => !excluded(`${under}${entry.name}`, patterns))
      .sort((left, right) => compareCodeUnits(left.name, right.name))
      .map((entry) => ruleFilesUnder(join(path, entry.name), patterns, `${under}${entry.name}/`, noun)),
  );
  return nested.flat();
}

function resourceName(resource: unknown): string | undefined {
  const name = (resource as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

type Sourced = { readonly source: string; readonly resource: unknown };

/**
 * The names defined more than once among resources of one kind, each with its DuplicateRuleError naming every source;
 * without `keepGoing` the first is thrown.
 */
function duplicatesOf(
  resources: readonly Sourced[],
  kind: string,
  keepGoing: boolean,
): Map<string, DuplicateRuleError> {
  const sourcesByName = new Map<string, string[]>();
  for (const { source, resource } of resources) {
    const name = resourceName(resource);
    if (name === undefined) continue;
    const sources = sourcesByName.get(name) ?? [];
    sources.push(source);
    sourcesByName.set(name, sources);
  }
  const duplicates = new Map<string, DuplicateRuleError>();
  for (const [name, sources] of sourcesByName) {
    if (sources.length < 2) continue;
    const error = new DuplicateRuleError(name, sources, kind);
    if (!keepGoing) throw error;
    duplicates.set(name, error);
  }
  return duplicates;
}

/** A resource's verdict: invalid at metadata.name when its name is defined more than once, else the validator's. */
function verdictWith<Verdict>(
  duplicates: ReadonlyMap<string, DuplicateRuleError>,
  validate: (resource: unknown) => Verdict,
): (resource: unknown) => Verdict | { readonly valid: false; readonly invalid: InvalidRule } {
  return (resource) => {
    const duplicate = duplicates.get(resourceName(resource) ?? '');
    if (duplicate === undefined) return validate(resource);
    return {
      valid: false,
      invalid: { name: duplicate.rule, issues: [{ field: 'metadata.name', reason: duplicate.reason }] },
    };
  };
}

/**
 * Validates resources read from their sources, within the snapshot budget. Two resources of the same name are a
 * DuplicateRuleError, or with `keepGoing` each is invalid at metadata.name and the others are still validated.
 */
function verdictsFor(
  resources: readonly Sourced[],
  keepGoing: boolean,
): Pick<LoadedRules, 'loaded' | 'rules' | 'invalid'> {
  const verdictOf = verdictWith<RuleVerdict>(
    duplicatesOf(resources, POD_MUTATION_KIND, keepGoing),
    validatePodMutation,
  );
  // The snapshot budget applies to files as it does to a cluster, so the CLI answers as the webhook would.
  const loaded = applySnapshotBudget(
    resources.map(({ source, resource }) => ({ source, verdict: verdictOf(resource), resource })),
  );
  return {
    loaded,
    rules: loaded.flatMap(({ verdict }) => (verdict.valid ? [verdict.rule] : [])),
    invalid: loaded.flatMap(({ verdict }) => (verdict.valid ? [] : [verdict.invalid])),
  };
}

/** Validates PodPlacements read from their sources; duplicates as verdictsFor treats them (names are per kind). */
function placementVerdictsFor(resources: readonly Sourced[], keepGoing: boolean): LoadedPlacements {
  const verdictOf = verdictWith<PlacementVerdict>(
    duplicatesOf(resources, POD_PLACEMENT_KIND, keepGoing),
    validatePodPlacement,
  );
  const loaded = resources.map(({ source, resource }) => ({ source, verdict: verdictOf(resource), resource }));
  return {
    loaded,
    placements: loaded.flatMap(({ verdict }) => (verdict.valid ? [verdict.placement] : [])),
    invalid: loaded.flatMap(({ verdict }) => (verdict.valid ? [] : [verdict.invalid])),
  };
}

// The product's API group: a document of it is read as a PodPlacement when its kind says so, and as a PodMutation with
// any other kind (a misspelt kind is then invalid, not skipped), as is one without a kind.
const POD_MUTATION_GROUP = POD_MUTATION_API_VERSION.split('/')[0]!;

/**
 * How a document of a rules path is read: as a PodMutation, as a PodPlacement, or left out (`skipped`: what it is,
 * for its note). Left out: a document outside the product's group with another kind or none (a Helm values file,
 * package.json), one of another group (kubeconform and kyverno skip what they do not check), and what is no object.
 */
function readAs(resource: unknown): 'rule' | 'placement' | { readonly skipped: string } {
  if (Array.isArray(resource))
    return {
      skipped:
        'a bare list; put PodMutations in the items of a document of kind List (apiVersion: v1, kind: List, items: [...])',
    };
  if (typeof resource !== 'object' || resource === null)
    return { skipped: `a ${resource === null ? 'null' : typeof resource}` };
  const { kind, apiVersion } = resource as { kind?: unknown; apiVersion?: unknown };
  const group = typeof apiVersion === 'string' ? (apiVersion.includes('/') ? apiVersion.split('/')[0] : '') : undefined;
  const as = kind === POD_PLACEMENT_KIND ? 'placement' : 'rule';
  if (group === POD_MUTATION_GROUP) return as;
  if (typeof kind !== 'string') return { skipped: 'no kind' };
  if (kind !== POD_MUTATION_KIND && kind !== POD_PLACEMENT_KIND) return { skipped: `kind ${kind}` };
  return group === undefined ? as : { skipped: `apiVersion ${String(apiVersion)}` };
}

/** The one-line note of a skipped document: `kustomization.yaml: kind Kustomization, not a PodMutation; skipped`. */
function skippedNote({ source, what }: SkippedDocument): string {
  return `${source}: ${what}, not a PodMutation; skipped`;
}

/**
 * The files of input paths, in order: a file as given, "-" as is, and a folder's .yaml, .yml and .json files as a
 * rules path's are found (sorted, recursively, without hidden folders and node_modules). `noun` names a path that
 * cannot be read: "input".
 */
async function filesOfPaths(paths: readonly string[], noun: string): Promise<string[]> {
  return (await Promise.all(paths.map((path) => ruleFilesUnder(path, [], '', noun)))).flat();
}

/**
 * Reads PodMutations, and PodPlacements apart from them (`placements`), from files and directories (recursively:
 * *.yaml, *.yml, *.json) and validates them; documents of other kinds are skipped (`skipped`), as kubeconform and
 * kyverno skip what they do not check. Paths that hold neither are a MalformedInputError unless `allowEmpty`; a file
 * that cannot be read or parsed throws, or with `keepGoing` is listed in `unreadable` and the other files still load.
 */
async function loadRuleFiles(paths: readonly string[], options: LoadOptions = {}): Promise<LoadedRules> {
  const patterns = (options.exclude ?? []).map(globPattern);
  const files = (await Promise.all(paths.map((path) => ruleFilesUnder(path, patterns)))).flat();
  const resources: Sourced[] = [];
  const placements: Sourced[] = [];
  const skipped: SkippedDocument[] = [];
  const unreadable: UnreadableFile[] = [];
  for (const file of files) {
    let documents: unknown[];
    try {
      const text =
        file === STDIN_PATH && options.stdin !== undefined ? await options.stdin() : await readTextFile(file);
      documents = parseResourceDocuments(text, file);
    } catch (error) {
      if (options.keepGoing !== true || !(error instanceof MalformedInputError)) throw error;
      unreadable.push({ source: file, error });
      continue;
    }
    for (const resource of documents) {
      const as = readAs(resource);
      if (as === 'rule') resources.push({ source: file, resource });
      else if (as === 'placement') placements.push({ source: file, resource });
      else skipped.push({ source: file, what: as.skipped });
    }
  }
  if (resources.length === 0 && placements.length === 0 && unreadable.length === 0 && options.allowEmpty !== true) {
    const where =
      files.length === 0
        ? 'no .yaml, .yml or .json file'
        : `${files.length === 1 ? 'a file' : `${files.length} files`} but no PodMutation or PodPlacement`;
    // The notes say what was found instead, as they would beside rules.
    const notes = skipped.map((document) => `\n  ${skippedNote(document)}`).join('');
    throw new MalformedInputError(
      `rules path ${paths.join(', ')} holds ${where}; check the path, or pass --allow-empty where no rules is what you mean${notes}`,
      { context: { source: paths.join(', ') } },
    );
  }
  const keepGoing = options.keepGoing === true;
  return {
    ...verdictsFor(resources, keepGoing),
    placements: placementVerdictsFor(placements, keepGoing),
    skipped,
    unreadable,
  };
}

export {
  streamYaml,
  filesOfPaths,
  loadRuleFiles,
  parseResourceDocuments,
  searchedFolder,
  skippedNote,
  parseSingleDocument,
  parseYamlDocuments,
  readTextFile,
};
export type { LoadedPlacements, LoadedRules, LoadOptions, SkippedDocument };
