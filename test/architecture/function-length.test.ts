import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from '../support/source-files.ts';

// A function longer than this is a module written as one function; split it, or say in a comment on its first
// line (`long function:` and why) that it must be one.
const MAX_LINES = 80;
const FOLDERS = ['lib', 'functions', 'bin', 'serverless', 'scripts'];

/** Every function of a file longer than the limit, as `path:line name (N lines)`. */
export function longFunctions(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      const leading = text.slice(node.getFullStart(), node.getStart(source));
      const statement = ts.isVariableDeclaration(node.parent) ? node.parent.parent.parent : undefined;
      const declared = statement === undefined ? '' : text.slice(statement.getFullStart(), statement.getStart(source));
      if (lines > MAX_LINES && !/long function:/.test(leading + declared)) {
        const name =
          node.name?.getText(source) ??
          (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : '(anonymous)');
        found.push(`${path}:${start + 1} ${name} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function length', () => {
  it(`finds a function longer than ${MAX_LINES} lines`, () => {
    const body = Array.from({ length: MAX_LINES }, (_, index) => `  const v${index} = ${index};`).join('\n');
    expect(longFunctions('x.ts', `function big() {\n${body}\n}\n`)).toEqual([`x.ts:1 big (${MAX_LINES + 2} lines)`]);
  });

  it('accepts a long function whose first line says why it must be one', () => {
    const body = Array.from({ length: MAX_LINES }, (_, index) => `  const v${index} = ${index};`).join('\n');
    expect(longFunctions('x.ts', `// long function: one table\nconst big = () => {\n${body}\n};\n`)).toEqual([]);
  });

  it(`leaves no function over ${MAX_LINES} lines in the shipped code`, () => {
    const found = FOLDERS.flatMap(sourceFiles).flatMap((path) =>
      longFunctions(path, readFileSync(join(ROOT, path), 'utf8')),
    );
    expect(found).toEqual([]);
  });
});
