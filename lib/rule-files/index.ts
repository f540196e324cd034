import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { applySnapshotBudget, validatePodMutation, type InvalidRule, type NormalizedRule, type RuleVerdict } from '../api/index.ts';
import { DuplicateRuleError, fileProblem, MalformedInputError } from '../errors/index.ts';
import { checkNesting, MAX_JSON_DEPTH, textNestsDeeperThan } from '../values/index.ts';

/** One resource read from a file, with the validator's verdict. */
interface LoadedRule {
  readonly source: string;
  readonly verdict: RuleVerdict;
}

/** The rules read from files: every verdict in file order, and the split into valid and invalid. */
interface LoadedRules {
  readonly loaded: readonly LoadedRule[];
  readonly rules: readonly NormalizedRule[];
  readonly invalid: readonly InvalidRule[];
}

const RULE_FILE_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** Reads a whole text file; a file that cannot be read is malformed input naming the path and the system's code. */
async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new MalformedInputError(`cannot read ${path}: ${fileProblem(error)}`, { cause: error, context: { source: path } });
  }
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
  const documents = parseAllDocuments(text, { prettyErrors: false });
  const values: unknown[] = [];
  for (const document of Array.isArray(documents) ? documents : [documents]) {
    if (document.errors.length > 0) {
      const first = document.errors[0]!;
      throw new MalformedInputError(`${source}: not valid JSON or YAML: ${first.message}`, { cause: first, context: { source } });
    }
    const value: unknown = document.toJS({ maxAliasCount: 100 });
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
    json = JSON.parse(text);
  } catch {
    // Not JSON: read it as YAML below.
  }
  if (json !== undefined) {
    checkNesting(json, source);
    return json;
  }
  const documents = parseYamlDocuments(text, source);
  if (documents.length === 0) throw new MalformedInputError(`${source}: input is empty`);
  if (documents.length > 1) throw new MalformedInputError(`${source}: expected one document, found ${documents.length}`);
  return documents[0];
}

/**
 * Parses YAML (multi-document) or JSON text into resources; `List` documents (kind List or
 * PodMutationList) are flattened into their items. Throws MalformedInputError naming the source.
 */
function parseResourceDocuments(text: string, source: string): unknown[] {
  const resources: unknown[] = [];
  for (const value of parseYamlDocuments(text, source)) {
    if (typeof value === 'object' && !Array.isArray(value) && typeof (value as { kind?: unknown }).kind === 'string'
      && (value as { kind: string }).kind.endsWith('List') && Array.isArray((value as { items?: unknown }).items)) {
      resources.push(...(value as { items: unknown[] }).items);
    } else resources.push(value);
  }
  return resources;
}

async function ruleFilesUnder(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw new MalformedInputError(`rules path ${path} cannot be read: ${fileProblem(error)}`, {
      cause: error,
      context: { source: path },
    });
  }
  if (!info.isDirectory()) return [path];
  const entries = await readdir(path, { withFileTypes: true });
  const nested = await Promise.all(
    entries
      .filter((entry) => entry.isDirectory() || RULE_FILE_EXTENSIONS.has(extname(entry.name)))
      .sort((left, right) => (left.name < right.name ? -1 : 1))
      .map((entry) => ruleFilesUnder(join(path, entry.name))),
  );
  return nested.flat();
}

function resourceName(resource: unknown): string | undefined {
  const name = (resource as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** Validates resources read from their sources, within the snapshot budget; two resources of the same name are a DuplicateRuleError. */
function verdictsFor(resources: readonly { readonly source: string; readonly resource: unknown }[]): LoadedRules {
  const sourcesByName = new Map<string, string[]>();
  for (const { source, resource } of resources) {
    const name = resourceName(resource);
    if (name === undefined) continue;
    const sources = sourcesByName.get(name) ?? [];
    sources.push(source);
    sourcesByName.set(name, sources);
  }
  for (const [name, sources] of sourcesByName) if (sources.length > 1) throw new DuplicateRuleError(name, sources);
  // The snapshot budget applies to files as it does to a cluster, so the CLI answers as the webhook would.
  const loaded = applySnapshotBudget(resources.map(({ source, resource }) => ({ source, verdict: validatePodMutation(resource) })));
  return {
    loaded,
    rules: loaded.flatMap(({ verdict }) => (verdict.valid ? [verdict.rule] : [])),
    invalid: loaded.flatMap(({ verdict }) => (verdict.valid ? [] : [verdict.invalid])),
  };
}

/** Reads PodMutations from files and directories (recursively: *.yaml, *.yml, *.json) and validates them. */
async function loadRuleFiles(paths: readonly string[]): Promise<LoadedRules> {
  const files = (await Promise.all(paths.map(ruleFilesUnder))).flat();
  const resources: { source: string; resource: unknown }[] = [];
  for (const file of files) {
    const text = await readTextFile(file);
    for (const resource of parseResourceDocuments(text, file)) resources.push({ source: file, resource });
  }
  return verdictsFor(resources);
}

export { loadRuleFiles, parseResourceDocuments, parseSingleDocument, parseYamlDocuments, readTextFile, verdictsFor };
export type { LoadedRule, LoadedRules };
