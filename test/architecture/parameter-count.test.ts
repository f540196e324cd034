import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../support/source-files.ts';

// A function with more parameters than this takes them as one options or record object, whose fields are named where
// it is called.
const MAX_PARAMETERS = 4;
const FOLDERS = ['lib', 'functions', 'scripts'];

/** Every function, method, constructor and arrow of a file with more parameters than the limit, as `path:line name (N)`. */
export function longParameterLists(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && node.parameters.length > MAX_PARAMETERS) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const name =
        node.name?.getText(source) ??
        (ts.isConstructorDeclaration(node)
          ? 'constructor'
          : ts.isVariableDeclaration(node.parent)
            ? node.parent.name.getText(source)
            : '(anonymous)');
      found.push(`${path}:${line} ${name} (${node.parameters.length})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('parameter count', () => {
  it.each([
    ['a function declaration', 'function five(a, b, c, d, e) {}', 'x.ts:1 five (5)'],
    ['an arrow', 'const five = (a, b, c, d, e) => a;', 'x.ts:1 five (5)'],
    ['a method', 'class C {\n  five(a, b, c, d, e) {}\n}', 'x.ts:2 five (5)'],
    ['a constructor', 'class C {\n  constructor(a, b, c, d, e) {}\n}', 'x.ts:2 constructor (5)'],
    ['an interface method', 'interface I {\n  five(a, b, c, d, e): void;\n}', 'x.ts:2 five (5)'],
  ])(`finds %s with more than ${MAX_PARAMETERS} parameters`, (_kind, text, expected) => {
    expect(longParameterLists('x.ts', text)).toEqual([expected]);
  });

  it(`accepts ${MAX_PARAMETERS} parameters and one options object`, () => {
    const text = 'function four(a, b, c, d) {}\nfunction one({ a, b, c, d, e }) {}\n';
    expect(longParameterLists('x.ts', text)).toEqual([]);
  });

  it(`leaves no function with more than ${MAX_PARAMETERS} parameters in lib, functions or scripts`, () => {
    const found = FOLDERS.flatMap(sourceFiles).flatMap((path) =>
      longParameterLists(path, readFileSync(join(ROOT, path), 'utf8')),
    );
    expect(found).toEqual([]);
  });
});
