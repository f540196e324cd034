import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/source-files.ts';

// ARCHITECTURE.md's "How a request flows" and its glossary name functions and the files that declare them; this test
// reads both and fails when a name or a file is gone, so the walk-through cannot drift from the code.

const FLOWS_HEADING = '## How a request flows';

/** A name the document says a file declares: `name` or `Class.method`. */
interface Reference {
  readonly name: string;
  readonly file: string;
}

/** The part of ARCHITECTURE.md from its flows heading to the end (the glossary follows the flows). */
function flowsSection(text: string): string {
  const start = text.indexOf(FLOWS_HEADING);
  return start === -1 ? '' : text.slice(start);
}

/** Every "`name` in `path`" of a text; a line break may fall between them. */
function referencesIn(text: string): Reference[] {
  return [...text.matchAll(/`([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?)` in\s+`([\w./-]+\.(?:ts|mjs))`/g)].map(
    (match) => ({ name: match[1]!, file: match[2]! }),
  );
}

/** Every backticked repository path of a text (lib/…, functions/…, bin/…, scripts/…, test/…). */
function pathsIn(text: string): string[] {
  return [...text.matchAll(/`((?:lib|functions|bin|scripts|test)\/[\w./-]+\.(?:ts|mjs))`/g)].map((match) => match[1]!);
}

const escape = (name: string) => name.replace(/\$/g, '\\$');

/** Whether a source text declares a name: a function, class, interface, type or binding, or a method or member. */
function declares(source: string, name: string): boolean {
  const [owner, member] = name.includes('.') ? name.split('.') : [undefined, name];
  let body = source;
  if (owner !== undefined) {
    const at = source.search(new RegExp(`\\bclass\\s+${escape(owner)}\\b`));
    if (at === -1) return false;
    body = source.slice(at);
  }
  const declaration = new RegExp(
    `\\b(?:function\\*?|class|interface|type|const|let|enum)\\s+${escape(member)}\\b|` +
      `^\\s+(?:static\\s+)?(?:async\\s+)?(?:readonly\\s+)?${escape(member)}\\s*[(<:]`,
    'm',
  );
  return declaration.test(body);
}

/** What is wrong with the references and paths of a section, one line each. */
function problemsOf(section: string, read: (file: string) => string | undefined): string[] {
  const problems: string[] = [];
  for (const file of new Set(pathsIn(section))) {
    if (read(file) === undefined) problems.push(`${file} does not exist`);
  }
  for (const { name, file } of referencesIn(section)) {
    const source = read(file);
    if (source !== undefined && !declares(source, name)) problems.push(`${file} declares no ${name}`);
  }
  return problems;
}

function readRepositoryFile(file: string): string | undefined {
  const path = join(ROOT, file);
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

describe('ARCHITECTURE.md flows and glossary', () => {
  const section = flowsSection(readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8'));

  it('walks the admission, sync and CLI paths and defines the glossary', () => {
    for (const heading of [
      '### An AdmissionReview becomes a patch',
      '### A sync run',
      '### A CLI command',
      '## Glossary',
    ])
      expect(section).toContain(heading);
    expect(referencesIn(section).length).toBeGreaterThan(60);
  });

  it('names only functions that their files declare and files that exist', () => {
    expect(problemsOf(section, readRepositoryFile)).toEqual([]);
  });
});

describe('the flows check', () => {
  const files: Record<string, string> = {
    'lib/a.ts':
      'export function readThing(x: string) {}\nclass Lease {\n  static async take(o: O) {}\n  release(): void {}\n}\n',
    'lib/b.ts': 'interface Source {\n  listThings(): Promise<void>;\n}\nconst LIMIT = 3;\n',
  };
  const read = (file: string) => files[file];

  it('accepts a function, a class method, an interface member and a constant that their files declare', () => {
    const text =
      '`readThing` in `lib/a.ts`, `Lease.take` in\n   `lib/a.ts`, `Lease.release` in `lib/a.ts`, `listThings` in `lib/b.ts`, `LIMIT` in `lib/b.ts`';
    expect(problemsOf(text, read)).toEqual([]);
  });

  it('reports a function its file no longer declares', () => {
    expect(problemsOf('`writeThing` in `lib/a.ts`', read)).toEqual(['lib/a.ts declares no writeThing']);
  });

  it('reports a method of a class the file does not declare', () => {
    expect(problemsOf('`Lock.take` in `lib/a.ts`', read)).toEqual(['lib/a.ts declares no Lock.take']);
  });

  it('reports a named file that does not exist, also outside a reference', () => {
    expect(problemsOf('read by `lib/gone.ts`; `readThing` in `lib/moved.ts`', read)).toEqual([
      'lib/gone.ts does not exist',
      'lib/moved.ts does not exist',
    ]);
  });

  it('does not take a word that only contains the name for its declaration', () => {
    expect(declares('function readThings() {}', 'readThing')).toBe(false);
  });
});
