/**
 * The documentation a newcomer walks: a short README that reaches every docs/ file in one click, and links between the
 * documents that lead to a file and a heading that exist, with GitHub's heading anchors.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const DOCUMENTS = ['README.md', 'ARCHITECTURE.md', ...DOCS];

function text(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

// Fenced code holds commands and queries, not links or headings.
function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/** The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces made `-`. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replaceAll(' ', '-');
}

/** Every heading's anchor in a Markdown file, a repeated heading numbered as GitHub numbers it (`-1`, `-2`). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, heading] of withoutCodeBlocks(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const anchor = headingAnchor(heading!);
    const count = seen.get(anchor) ?? 0;
    seen.set(anchor, count + 1);
    found.add(count === 0 ? anchor : `${anchor}-${count}`);
  }
  return found;
}

/** The targets of a Markdown file's inline links, outside code. */
function links(markdown: string): string[] {
  const prose = withoutCodeBlocks(markdown).replace(/(?<!\[)`[^`\n]*`(?!\])/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

function isRelative(target: string): boolean {
  return !/^[a-z]+:/i.test(target);
}

/** Why a relative link of a document leads nowhere, or undefined when it leads to an existing file and heading. */
function brokenBecause(document: string, target: string): string | undefined {
  const [path, anchor] = target.split('#') as [string, string | undefined];
  const file = path === '' ? join(ROOT, document) : resolve(ROOT, dirname(document), path);
  if (!existsSync(file)) return `no file ${relative(ROOT, file)}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `an anchor into ${relative(ROOT, file)}`;
  return anchors(readFileSync(file, 'utf8')).has(anchor) ? undefined : `no heading #${anchor}`;
}

describe('the README', () => {
  it('is under 300 lines', () => {
    expect(text('README.md').split('\n').length).toBeLessThan(300);
  });

  it('links every docs/ file', () => {
    const linked = new Set(links(text('README.md')).map((target) => target.split('#')[0]));

    expect(DOCS.filter((doc) => !linked.has(doc))).toEqual([]);
  });

  it('keeps the setup commands CI runs', () => {
    expect(text('README.md')).toMatch(/^npm ci\nnpm test\n/m);
  });
});

describe('the links of the documentation', () => {
  it.each(DOCUMENTS)('in %s lead to files and headings that exist', (document) => {
    const broken = links(text(document))
      .filter(isRelative)
      .flatMap((target) => {
        const reason = brokenBecause(document, target);
        return reason === undefined ? [] : [`${target}: ${reason}`];
      });

    expect(broken).toEqual([]);
  });
});

describe('heading anchors', () => {
  it('are made as GitHub makes them', () => {
    expect(headingAnchor('What a rollout would change: `podmutation report`')).toBe(
      'what-a-rollout-would-change-podmutation-report',
    );
    expect(headingAnchor('2. Install the CRD and the cluster access, before the stack')).toBe(
      '2-install-the-crd-and-the-cluster-access-before-the-stack',
    );
    expect(headingAnchor('`spec.workloadSelector`')).toBe('specworkloadselector');
  });
});
