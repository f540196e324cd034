/**
 * `podmutation test --junit FILE`: the results as JUnit XML, in the subset CI systems read. GitLab shows a testcase's
 * classname as its suite and its name as the test, reads `file` and `time`, and takes a failure's text from the
 * element's content (it ignores the message attribute); GitHub Actions reporters read the same elements. So: one
 * testsuite per test file (named by its metadata.name), one testcase per result (classname the test file, unique where
 * names may repeat, as GitLab keeps one of two testcases alike; name the resource), the diff as the failure's content;
 * a file that cannot be read is one testcase with an error.
 */
import type { CaseFailure } from './expectations.ts';
import type { TestFileResult } from './run.ts';

/** What the report says of a failure: its lines (the caller's diff). */
type FailureLines = (failure: CaseFailure) => readonly string[];

// XML 1.0 allows tab, newline, carriage return and the code points from U+0020 on, but the surrogates (unpaired here,
// as paired ones are read as one code point) and U+FFFE/U+FFFF: anything else cannot appear even escaped.
const NOT_XML_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\n': '&#10;',
  '\r': '&#13;',
  '\t': '&#9;',
};

/**
 * Text as XML element content: markup escaped, characters XML cannot hold replaced with U+FFFD.
 * @internal Exported for tests: tested on its own against XML 1.0's escapes.
 */
export function xmlText(text: string): string {
  return text.replace(NOT_XML_CHARACTER, '\uFFFD').replace(/[&<>]/g, (character) => ESCAPES[character]!);
}

/**
 * Text as an XML attribute value in double quotes; line breaks and tabs as references, so that they survive normalization.
 * @internal Exported for tests: tested on its own against XML 1.0's escapes.
 */
export function xmlAttribute(text: string): string {
  return text.replace(NOT_XML_CHARACTER, '\uFFFD').replace(/[&<>"'\n\r\t]/g, (character) => ESCAPES[character]!);
}

function attributes(values: Readonly<Record<string, string | number>>): string {
  return Object.entries(values)
    .map(([name, value]) => ` ${name}="${xmlAttribute(String(value))}"`)
    .join('');
}

const time = (seconds: number) => seconds.toFixed(3);

interface JUnitCase {
  readonly name: string;
  readonly seconds: number;
  readonly problem?: {
    readonly element: 'failure' | 'error';
    readonly message: string;
    readonly type: string;
    readonly body: string;
  };
}

function fileCases(result: TestFileResult, lines: FailureLines): JUnitCase[] {
  if (result.error !== undefined) {
    const body = result.error.issues
      .map((issue) => (issue.field === '' ? issue.reason : `${issue.field}: ${issue.reason}`))
      .join('\n');
    return [
      {
        name: 'test file',
        seconds: result.seconds,
        problem: { element: 'error', message: result.error.message, type: 'unreadable', body },
      },
    ];
  }
  const cases: JUnitCase[] = result.cases.map((item) => {
    if (item.failures.length === 0) return { name: item.resource, seconds: item.seconds };
    const message = item.failures.map((failure) => `${failure.aspect}: ${failure.summary}`).join('; ');
    const body = [`${item.resource} (${item.source})`, ...item.failures.flatMap((failure) => lines(failure))].join(
      '\n',
    );
    return {
      name: item.resource,
      seconds: item.seconds,
      problem: { element: 'failure', message, type: 'mismatch', body },
    };
  });
  if (result.invalidRules.length > 0) {
    const body = result.invalidRules.join('\n');
    cases.unshift({
      name: 'rules are valid',
      seconds: 0,
      problem: {
        element: 'failure',
        message: `${result.invalidRules.length} invalid rule issues`,
        type: 'invalid-rules',
        body,
      },
    });
  }
  return cases;
}

/** The JUnit XML of a run: testsuites, a testsuite per test file, a testcase per result, with failures and errors counted. */
export function junitReport(results: readonly TestFileResult[], lines: FailureLines): string {
  const suites = results.map((result) => ({ result, cases: fileCases(result, lines) }));
  const count = (cases: readonly JUnitCase[], element: 'failure' | 'error') =>
    cases.filter((item) => item.problem?.element === element).length;
  const all = suites.flatMap((suite) => suite.cases);
  const total = results.reduce((sum, result) => sum + result.seconds, 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'podmutation test', tests: all.length, failures: count(all, 'failure'), errors: count(all, 'error'), time: time(total) })}>`,
  ];
  for (const { result, cases } of suites) {
    out.push(
      `  <testsuite${attributes({ name: result.name, file: result.file, tests: cases.length, failures: count(cases, 'failure'), errors: count(cases, 'error'), skipped: 0, time: time(result.seconds) })}>`,
    );
    for (const item of cases) {
      const head = `    <testcase${attributes({ classname: result.file, name: item.name, file: result.file, time: time(item.seconds) })}`;
      const { problem } = item;
      if (problem === undefined) {
        out.push(`${head}/>`);
        continue;
      }
      out.push(
        `${head}>`,
        `      <${problem.element}${attributes({ message: problem.message, type: problem.type })}>${xmlText(problem.body)}</${problem.element}>`,
        '    </testcase>',
      );
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}
