/**
 * Comments cite what a reader of the repository can open (the README or docs/, a Kubernetes or AWS document, a test),
 * never a tracker number: this repository's issues are not in it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CODE = /\.(ts|mts|mjs|js)$/;
// A word for an issue, then its number: written as parts so that this file does not match itself.
const TRACKER_NUMBER = new RegExp(['\\bissues?', '\\s+#?\\d+'].join(''), 'i');

function trackedCode(): string[] {
  const listed = execFileSync(
    'git',
    [
      'ls-files',
      '--cached',
      '--others',
      '--exclude-standard',
      'lib',
      'functions',
      'bin',
      'scripts',
      'serverless',
      'test',
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return listed.split('\n').filter((path) => CODE.test(path));
}

describe('the comments of the code', () => {
  it('cite no tracker number', () => {
    const citing = trackedCode().flatMap((path) =>
      readFileSync(`${ROOT}${path}`, 'utf8')
        .split('\n')
        .flatMap((line, index) => (TRACKER_NUMBER.test(line) ? [`${path}:${index + 1}: ${line.trim()}`] : [])),
    );

    expect(citing).toEqual([]);
  });
});
