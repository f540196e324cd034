import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../support/source-files.ts';

// The allowed import directions live in ARCHITECTURE.md's folder table; this test reads them from there.

interface FolderRule {
  readonly folder: string;
  readonly imports: ReadonlySet<string>;
  readonly packages: readonly string[];
}

/** The rows of ARCHITECTURE.md's folder table. */
function folderRules(): Map<string, FolderRule> {
  const text = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const rules = new Map<string, FolderRule>();
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    // | `folder` | job | imports | packages |
    if (cells.length !== 6 || !/^`[a-z-]+`$/.test(cells[1]!)) continue;
    const list = (cell: string) =>
      cell === '—' ? [] : cell.split(',').map((item) => item.trim().replace(/^`|`$/g, ''));
    const folder = cells[1]!.slice(1, -1);
    rules.set(folder, { folder, imports: new Set(list(cells[3]!)), packages: list(cells[4]!) });
  }
  return rules;
}

interface Import {
  readonly file: string;
  readonly specifier: string;
}

/** Every static import/export-from and dynamic import() of a file. */
function importsOf(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [
    ...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*'([^']+)'/gm),
    ...text.matchAll(/^import\s*'([^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((match) => match[1]!);
  return specifiers.map((specifier) => ({ file, specifier }));
}

/** The repository-relative path an import points at, or undefined for a package. */
function target(imported: Import): string | undefined {
  if (!imported.specifier.startsWith('.')) return undefined;
  return relative(ROOT, resolve(ROOT, dirname(imported.file), imported.specifier))
    .split(sep)
    .join('/');
}

function packageAllowed(specifier: string, allowed: readonly string[]): boolean {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
  return allowed.some((pattern) =>
    pattern.endsWith('*') ? specifier.startsWith(pattern.slice(0, -1)) : pattern === name || pattern === specifier,
  );
}

const libFolders = readdirSync(join(ROOT, 'lib')).filter((entry) => statSync(join(ROOT, 'lib', entry)).isDirectory());
const rules = folderRules();
const libImports = libFolders.flatMap((folder) => sourceFiles(`lib/${folder}`).flatMap(importsOf));

/** The problems of one lib/ import against the table, as sentences. */
function violations(imported: Import): string[] {
  const from = imported.file.split('/')[1]!;
  const rule = rules.get(from);
  if (rule === undefined) return [];
  const to = target(imported);
  if (to === undefined) {
    return packageAllowed(imported.specifier, rule.packages)
      ? []
      : [`${imported.file} imports package ${imported.specifier}, not listed for ${from}`];
  }
  if (!to.startsWith('lib/')) return [`${imported.file} imports ${to}, outside lib/`];
  const into = to.split('/')[1]!;
  if (into === from) return [];
  const problems: string[] = [];
  if (!rule.imports.has(into)) problems.push(`${imported.file} imports ${to}, but ${from} may not import ${into}`);
  if (!to.endsWith('/index.ts')) problems.push(`${imported.file} imports ${to} instead of ${into}'s index.ts`);
  return problems;
}

/** The cycles of a directed graph, each as the path that closes it (`a → b → a`); one per back edge found. */
function cyclesOf(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const state = new Map<string, 'visiting' | 'done'>();
  const cycles: string[] = [];
  const visit = (node: string, path: readonly string[]): void => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'visiting') {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
      return;
    }
    state.set(node, 'visiting');
    for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) visit(node, []);
  return cycles;
}

/** The imports between files of one lib/ folder (its sub-folders included), type-only ones too, by importing file. */
function fileImports(imports: readonly Import[]): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  for (const imported of imports) {
    const to = target(imported);
    if (to === undefined || to.split('/')[1] !== imported.file.split('/')[1]) continue;
    edges.set(imported.file, [...(edges.get(imported.file) ?? []), to]);
  }
  return edges;
}

describe('the import directions of ARCHITECTURE.md', () => {
  it('lists every lib/ folder, and only those', () => {
    expect([...rules.keys()].sort()).toEqual([...libFolders].sort());
  });

  it('allows only imports of folders it lists', () => {
    const unknown = [...rules.values()].flatMap((rule) =>
      [...rule.imports].filter((name) => !rules.has(name)).map((name) => `${rule.folder} → ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('allows no cycle between folders', () => {
    expect(cyclesOf(new Map([...rules.values()].map((rule) => [rule.folder, [...rule.imports]])))).toEqual([]);
  });

  it('finds no cycle between the files of one lib/ folder', () => {
    expect(cyclesOf(fileImports(libImports))).toEqual([]);
  });

  it('finds the imports of lib/ (the scan is not empty)', () => {
    expect(libImports.length).toBeGreaterThan(200);
    expect(libImports.some((imported) => imported.specifier === '../engine/index.ts')).toBe(true);
  });

  it('holds for every import in lib/', () => {
    expect(libImports.flatMap(violations)).toEqual([]);
  });

  it("leaves the CRD's descriptions and CEL text to the CRD generator (lib/api/crd.ts)", () => {
    const importers = libImports
      .filter((imported) => ['lib/api/crd-docs.ts', 'lib/api/crd-rules.ts'].includes(target(imported) ?? ''))
      .map((imported) => imported.file);
    expect([...new Set(importers)]).toEqual(['lib/api/crd.ts']);
  });

  it('keeps functions/ on the index.ts of lib/ folders', () => {
    const wrong = ['functions/admission', 'functions/sync']
      .flatMap(sourceFiles)
      .flatMap(importsOf)
      .map((imported) => ({ imported, to: target(imported) }))
      .filter(({ to }) => to !== undefined && !/^lib\/[a-z-]+\/index\.ts$/.test(to))
      .map(({ imported, to }) => `${imported.file} imports ${to}`);
    expect(wrong).toEqual([]);
  });
});

describe('the import check itself', () => {
  const check = (file: string, specifier: string) => violations({ file, specifier });

  it('rejects the engine importing the store', () => {
    expect(check('lib/engine/mutate.ts', '../store/index.ts')).toEqual([
      `lib/engine/mutate.ts imports lib/store/index.ts, but engine may not import store`,
    ]);
  });

  it('rejects an import past a folder index', () => {
    expect(check('lib/endpoint/handler.ts', '../store/cache.ts')).toEqual([
      `lib/endpoint/handler.ts imports lib/store/cache.ts instead of store's index.ts`,
    ]);
  });

  it('rejects a package the folder does not list', () => {
    expect(check('lib/engine/pod.ts', 'node:fs')).toEqual([
      `lib/engine/pod.ts imports package node:fs, not listed for engine`,
    ]);
  });

  it('rejects lib/ reaching into test/', () => {
    expect(check('lib/api/validate.ts', '../../test/support/builders.ts')).toEqual([
      `lib/api/validate.ts imports test/support/builders.ts, outside lib/`,
    ]);
  });

  it('finds a cycle between two files of one folder, type-only imports included', () => {
    const edges = fileImports([
      { file: 'lib/api/schema.ts', specifier: './types.ts' },
      { file: 'lib/api/types.ts', specifier: './schema.ts' },
      { file: 'lib/api/index.ts', specifier: './schema.ts' },
    ]);
    expect(cyclesOf(edges)).toEqual(['lib/api/schema.ts → lib/api/types.ts → lib/api/schema.ts']);
  });

  it('reads a type-only import as an import', () => {
    expect(importsOf('lib/api/types.ts').map(({ specifier }) => specifier)).toContain('./schema.ts');
  });

  it('finds no cycle where files of one folder import in one direction', () => {
    const edges = fileImports([
      { file: 'lib/api/index.ts', specifier: './schema.ts' },
      { file: 'lib/api/types.ts', specifier: './schema.ts' },
      { file: 'lib/api/schema.ts', specifier: '../json/index.ts' },
    ]);
    expect(cyclesOf(edges)).toEqual([]);
  });

  it('accepts a listed folder through its index and a listed package', () => {
    expect([...check('lib/sync/sync.ts', '../store/index.ts'), ...check('lib/store/dynamo.ts', 'node:http')]).toEqual(
      [],
    );
  });
});
