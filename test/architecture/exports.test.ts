import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../support/source-files.ts';

// Every name a lib/ file exports is imported by another file: an index.ts exports what other folders import, and a
// file inside a folder exports what its index or its neighbours import. An export only tests import says why with
// `@internal <reason>` on its declaration. Names taken from `await import()` count one by one, as static ones do.
const IMPORTERS = ['lib', 'functions', 'bin', 'scripts', 'serverless', 'test'];

/** A name a file binds from another file: where it comes from, and its name there. */
interface Binding {
  readonly from: string;
  readonly name: string;
}

interface ModuleFacts {
  /** The names the file exports, its own and those it re-exports. */
  readonly exported: string[];
  /** Per imported file, the names used from it; `*` for a namespace import, `export *`, or an `import()` not destructured. */
  readonly uses: Map<string, Set<string>>;
  /** Each exported name bound by an import or a re-export: where it comes from. */
  readonly reexports: Map<string, Binding>;
  /** Each exported name declared here, with the reason of its `@internal` tag ('' when it has none). */
  readonly internal: Map<string, string>;
}

/** The module path `specifier` names from `path`, or undefined for a package or a computed specifier. */
function target(path: string, specifier: ts.Node | undefined): string | undefined {
  if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return undefined;
  return relative(ROOT, resolve(ROOT, dirname(path), specifier.text));
}

/** The `import('…')` call under `await`, parentheses and `as`, if that is what the expression is. */
function importCall(expression: ts.Expression): ts.CallExpression | undefined {
  let node = expression;
  while (ts.isAwaitExpression(node) || ts.isParenthesizedExpression(node) || ts.isAsExpression(node))
    node = node.expression;
  return ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword ? node : undefined;
}

/** The `import()` calls of `await Promise.all([import('…'), …])`, in order, if that is what the expression is. */
function importCalls(expression: ts.Expression): (ts.CallExpression | undefined)[] | undefined {
  let node = expression;
  while (ts.isAwaitExpression(node) || ts.isParenthesizedExpression(node)) node = node.expression;
  if (!ts.isCallExpression(node) || node.expression.getText() !== 'Promise.all') return undefined;
  const [list] = node.arguments;
  return list !== undefined && ts.isArrayLiteralExpression(list) ? list.elements.map(importCall) : undefined;
}

/** The names an object binding pattern takes, or undefined when it keeps the rest (`...rest`) or is no pattern. */
function boundNames(name: ts.BindingName | undefined): string[] | undefined {
  if (name === undefined || !ts.isObjectBindingPattern(name)) return undefined;
  if (name.elements.some((element) => element.dotDotDotToken !== undefined)) return undefined;
  return name.elements.map((element) => (element.propertyName ?? element.name).getText());
}

/** The `@internal` reason of a declaration: its tag's text, '' without one. */
function internalReason(node: ts.Node): string {
  const tag = ts.getJSDocTags(node).find((candidate) => candidate.tagName.text === 'internal');
  if (tag === undefined) return '';
  const comment = typeof tag.comment === 'string' ? tag.comment : ts.getTextOfJSDocComment(tag.comment);
  return (comment ?? '').trim() || '(no reason)';
}

/** What one file exports and which names it takes from which other files. */
export function moduleFacts(path: string, text: string): ModuleFacts {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const facts: ModuleFacts = { exported: [], uses: new Map(), reexports: new Map(), internal: new Map() };
  const imported = new Map<string, Binding>();
  const declared = new Map<string, ts.Node>();
  const use = (specifier: ts.Node | undefined, name: string): void => {
    const module = target(path, specifier);
    if (module === undefined) return;
    const names = facts.uses.get(module) ?? new Set<string>();
    names.add(name);
    facts.uses.set(module, names);
  };
  const resolved = new Set<ts.Node>();
  const dynamic = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.initializer !== undefined) {
      const single = importCall(node.initializer);
      const names = boundNames(node.name);
      if (single !== undefined && names !== undefined) {
        for (const name of names) use(single.arguments[0], name);
        resolved.add(single);
      }
      const calls = importCalls(node.initializer);
      if (calls !== undefined && ts.isArrayBindingPattern(node.name)) {
        node.name.elements.forEach((element, index) => {
          const call = calls[index];
          const taken = ts.isBindingElement(element) ? boundNames(element.name) : undefined;
          if (call === undefined || taken === undefined) return;
          for (const name of taken) use(call.arguments[0], name);
          resolved.add(call);
        });
      }
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && !resolved.has(node))
      use(node.arguments[0], '*');
    ts.forEachChild(node, dynamic);
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const bindings = statement.importClause?.namedBindings;
      if (statement.importClause?.name !== undefined) use(statement.moduleSpecifier, 'default');
      if (bindings === undefined || ts.isNamespaceImport(bindings)) use(statement.moduleSpecifier, '*');
      else
        for (const element of bindings.elements) {
          const name = (element.propertyName ?? element.name).text;
          use(statement.moduleSpecifier, name);
          const from = target(path, statement.moduleSpecifier);
          if (from !== undefined) imported.set(element.name.text, { from, name });
        }
    } else if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause;
      const from = target(path, statement.moduleSpecifier);
      if (statement.moduleSpecifier !== undefined && (clause === undefined || ts.isNamespaceExport(clause)))
        use(statement.moduleSpecifier, '*');
      else if (clause !== undefined && ts.isNamedExports(clause))
        for (const element of clause.elements) {
          const local = (element.propertyName ?? element.name).text;
          facts.exported.push(element.name.text);
          if (statement.moduleSpecifier === undefined) {
            const binding = imported.get(local);
            if (binding !== undefined) facts.reexports.set(element.name.text, binding);
            else facts.internal.set(element.name.text, local);
          } else {
            use(statement.moduleSpecifier, local);
            if (from !== undefined) facts.reexports.set(element.name.text, { from, name: local });
          }
        }
    } else if (ts.isExportAssignment(statement)) {
      facts.exported.push('default');
    } else if (ts.canHaveModifiers(statement)) {
      const modifiers = ts.getModifiers(statement) ?? [];
      const names = ts.isVariableStatement(statement)
        ? statement.declarationList.declarations.map((declaration) => declaration.name.getText(source))
        : 'name' in statement && statement.name !== undefined
          ? [(statement.name as ts.Identifier).text]
          : [];
      for (const name of names) declared.set(name, statement);
      if (modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
        const isDefault = modifiers.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
        for (const name of isDefault ? ['default'] : names) {
          facts.exported.push(name);
          facts.internal.set(name, name);
        }
      }
    }
  }
  // `export { local }` names a declaration of the file: its reason is on that declaration.
  for (const [name, local] of facts.internal) {
    const declaration = declared.get(local);
    facts.internal.set(name, declaration === undefined ? '' : internalReason(declaration));
  }
  dynamic(source);
  return facts;
}

/** Every source file's facts, by path. */
function allFacts(): Map<string, ModuleFacts> {
  return new Map(
    IMPORTERS.flatMap(sourceFiles).map((path) => [path, moduleFacts(path, readFileSync(join(ROOT, path), 'utf8'))]),
  );
}

/** Per file, per exported name, the files that import it (`*` collects namespace and unresolved dynamic imports). */
function importersByName(facts: Map<string, ModuleFacts>): Map<string, Map<string, Set<string>>> {
  const importers = new Map<string, Map<string, Set<string>>>();
  for (const [path, { uses }] of facts)
    for (const [module, names] of uses) {
      if (module === path) continue;
      const byName = importers.get(module) ?? new Map<string, Set<string>>();
      for (const name of names) byName.set(name, (byName.get(name) ?? new Set()).add(path));
      importers.set(module, byName);
    }
  return importers;
}

/** The `@internal` reason of an export, followed through the re-exports to its declaration. */
function reasonOf(facts: Map<string, ModuleFacts>, path: string, name: string): string {
  const module = facts.get(path);
  const binding = module?.reexports.get(name);
  if (binding !== undefined) return reasonOf(facts, binding.from, binding.name);
  return module?.internal.get(name) ?? '';
}

/** The lib/ exports no other file imports, and those only tests import with no `@internal` reason, as `path: name`. */
function exportProblems(facts: Map<string, ModuleFacts> = allFacts()): {
  readonly unused: string[];
  readonly testOnly: string[];
} {
  const importers = importersByName(facts);
  const unused: string[] = [];
  const testOnly: string[] = [];
  for (const [path, { exported }] of facts) {
    if (!path.startsWith('lib/')) continue;
    const byName = importers.get(path) ?? new Map<string, Set<string>>();
    for (const name of exported) {
      const users = [...(byName.get(name) ?? []), ...(byName.get('*') ?? [])];
      if (users.length === 0) unused.push(`${path}: ${name}`);
      else if (users.every((user) => user.startsWith('test/')) && reasonOf(facts, path, name) === '')
        testOnly.push(`${path}: ${name}`);
    }
  }
  return { unused: unused.sort(), testOnly: testOnly.sort() };
}

describe('exports', () => {
  it('reads what a file exports and what it imports by name', () => {
    const facts = moduleFacts(
      'lib/x/a.ts',
      "import { b, c as d } from './b.ts';\nexport { e } from './e.ts';\nexport const f = 1;\nfunction g() {}\nexport { g, d };\n",
    );
    expect(facts.exported).toEqual(['e', 'f', 'g', 'd']);
    expect([...facts.uses.entries()].map(([path, names]) => [path, [...names]])).toEqual([
      ['lib/x/b.ts', ['b', 'c']],
      ['lib/x/e.ts', ['e']],
    ]);
    expect(facts.reexports.get('d')).toEqual({ from: 'lib/x/b.ts', name: 'c' });
  });

  it('takes the names destructured from an awaited import() as imported by name', () => {
    const facts = moduleFacts(
      'lib/cli/a.ts',
      [
        "async function f() { const { b, c: d } = await import('../b/index.ts');",
        "  const [{ e }, { g }] = await Promise.all([import('../e/index.ts'), import('../g/index.ts')]);",
        "  const whole = await import('../h/index.ts'); }",
      ].join('\n'),
    );
    expect([...facts.uses.entries()].map(([path, names]) => [path, [...names]])).toEqual([
      ['lib/b/index.ts', ['b', 'c']],
      ['lib/e/index.ts', ['e']],
      ['lib/g/index.ts', ['g']],
      ['lib/h/index.ts', ['*']],
    ]);
  });

  it('reads the reason of an @internal tag on the declaration an export names', () => {
    const facts = moduleFacts(
      'lib/x/a.ts',
      '/** A. @internal Tests build their tables with it. */\nconst a = 1;\n/** B. */\nexport function b() {}\nexport { a };\n',
    );
    expect(Object.fromEntries(facts.internal)).toEqual({ a: 'Tests build their tables with it.', b: '' });
  });

  it('finds an export nobody imports, even beside a lazy import(), and one only tests import without @internal', () => {
    const files: Record<string, string> = {
      'lib/a/inner.ts': [
        'const used = 1, lazy = 2, unused = 3, testOnly = 4;',
        '/** @internal Tests read it. */',
        'const marked = 5;',
        'export { used, lazy, unused, testOnly, marked };',
      ].join('\n'),
      'lib/a/index.ts': "export { used, lazy, unused, testOnly, marked } from './inner.ts';",
      'lib/b/x.ts': [
        "import { used } from '../a/index.ts';",
        "async function f() { const { lazy } = await import('../a/index.ts'); return used + lazy; }",
        'export { f };',
      ].join('\n'),
      'functions/x/index.ts': "import { f } from '../../lib/b/x.ts';",
      'test/a.test.ts': "import { testOnly, marked } from '../lib/a/index.ts';",
    };
    const facts = new Map(Object.entries(files).map(([path, text]) => [path, moduleFacts(path, text)]));
    expect(exportProblems(facts)).toEqual({
      unused: ['lib/a/index.ts: unused'],
      testOnly: ['lib/a/index.ts: testOnly'],
    });
  });

  it('leaves no lib/ export that nothing imports', () => {
    expect(exportProblems().unused).toEqual([]);
  });

  it('leaves no lib/ export that only tests import unless it says why with @internal', () => {
    expect(exportProblems().testOnly).toEqual([]);
  });
});
