import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../support/source-files.ts';

// Every name a lib/ file exports is imported by another file: an index.ts exports what other folders (or the tests)
// import, and a file inside a folder exports what its index or its neighbours import.
const IMPORTERS = ['lib', 'functions', 'bin', 'scripts', 'serverless', 'test'];

interface ModuleFacts {
  /** The names the file exports itself (not re-exports of another file's). */
  readonly exported: string[];
  /** Per imported file, the names used from it; `*` for a namespace import or `export *`. */
  readonly uses: Map<string, Set<string>>;
}

/** What one file exports and which names it takes from which other files. */
export function moduleFacts(path: string, text: string): ModuleFacts {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const exported: string[] = [];
  const uses = new Map<string, Set<string>>();
  const use = (specifier: ts.Expression | undefined, name: string): void => {
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return;
    const target = relative(ROOT, resolve(ROOT, dirname(path), specifier.text));
    const names = uses.get(target) ?? new Set<string>();
    names.add(name);
    uses.set(target, names);
  };
  const dynamic = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) use(node.arguments[0], '*');
    ts.forEachChild(node, dynamic);
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const bindings = statement.importClause?.namedBindings;
      if (statement.importClause?.name !== undefined) use(statement.moduleSpecifier, 'default');
      if (bindings === undefined) use(statement.moduleSpecifier, '*');
      else if (ts.isNamespaceImport(bindings)) use(statement.moduleSpecifier, '*');
      else
        for (const element of bindings.elements)
          use(statement.moduleSpecifier, (element.propertyName ?? element.name).text);
    } else if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      if (statement.moduleSpecifier !== undefined) {
        if (clause === undefined || ts.isNamespaceExport(clause)) use(statement.moduleSpecifier, '*');
        else
          for (const element of clause.elements)
            use(statement.moduleSpecifier, (element.propertyName ?? element.name).text);
      } else if (clause !== undefined && ts.isNamedExports(clause)) {
        exported.push(...clause.elements.map((element) => element.name.text));
      }
    } else if (ts.isExportAssignment(statement)) {
      exported.push('default');
    } else if (
      ts.canHaveModifiers(statement) &&
      ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    ) {
      const isDefault = ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
      if (isDefault) exported.push('default');
      else if (ts.isVariableStatement(statement))
        exported.push(...statement.declarationList.declarations.map((declaration) => declaration.name.getText(source)));
      else if ('name' in statement && statement.name !== undefined)
        exported.push((statement.name as ts.Identifier).text);
    }
  }
  dynamic(source);
  return { exported, uses };
}

/** The lib/ exports no other file imports, as `path: name`. */
function unusedExports(): string[] {
  const facts = new Map(
    IMPORTERS.flatMap(sourceFiles).map((path) => [path, moduleFacts(path, readFileSync(join(ROOT, path), 'utf8'))]),
  );
  const used = new Map<string, Set<string>>();
  for (const [path, { uses }] of facts) {
    for (const [target, names] of uses) {
      if (target === path) continue;
      const set = used.get(target) ?? new Set<string>();
      for (const name of names) set.add(name);
      used.set(target, set);
    }
  }
  const unused: string[] = [];
  for (const [path, { exported }] of facts) {
    if (!path.startsWith('lib/')) continue;
    const names = used.get(path) ?? new Set<string>();
    if (names.has('*')) continue;
    for (const name of exported) if (!names.has(name)) unused.push(`${path}: ${name}`);
  }
  return unused.sort();
}

describe('exports', () => {
  it('reads what a file exports and what it imports by name', () => {
    const facts = moduleFacts(
      'lib/x/a.ts',
      "import { b, c as d } from './b.ts';\nexport { e } from './e.ts';\nexport const f = 1;\nfunction g() {}\nexport { g };\n",
    );
    expect(facts.exported).toEqual(['f', 'g']);
    expect([...facts.uses.entries()].map(([path, names]) => [path, [...names]])).toEqual([
      ['lib/x/b.ts', ['b', 'c']],
      ['lib/x/e.ts', ['e']],
    ]);
  });

  it('leaves no lib/ export that nothing imports', () => {
    expect(unusedExports()).toEqual([]);
  });
});
