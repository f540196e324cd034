/**
 * `podmutation test --junit FILE`: JUnit XML as CI systems read it, a testsuite per test file and
 * a testcase per result, failures carrying the diff, any text escaped.
 */
import fc from 'fast-check';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { caseDiff } from '../../lib/cli/test-command.ts';
import { junitReport, runTestFile, type TestFileResult } from '../../lib/rule-tests/index.ts';
import { fixturePath } from '../support/fixtures.ts';
import { parseXml, type XmlElement } from '../support/xml.ts';
import { xmlAttribute, xmlText } from '../../lib/rule-tests/junit.ts';

// The resources the failing fixtures name, as the runner resolves them beside the test file.
const CHECKOUT = fileURLToPath(
  new URL('../../examples/tests/migrate-legacy-pool/resources/checkout.yaml', import.meta.url),
);

function roundTrip(text: string): { readonly attribute: string; readonly content: string } {
  const element = parseXml(`<a b="${xmlAttribute(text)}">${xmlText(text)}</a>`);
  return { attribute: element.attributes.b!, content: element.text };
}

describe('XML escaping', () => {
  it('reads back any text of characters XML can hold exactly, in an attribute and as content (property)', () => {
    const xmlCharacter = fc.oneof(
      fc.constantFrom('&', '<', '>', '"', "'", '\t', '\n', '\r', ']]>', '&amp;', ' '),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
    );
    fc.assert(
      fc.property(
        fc.array(xmlCharacter, { maxLength: 12 }).map((parts) => parts.join('')),
        (text) => {
          expect(roundTrip(text)).toEqual({ attribute: text, content: text });
        },
      ),
      { numRuns: 500 },
    );
  });

  it.each([
    ['a NUL', 'a\u0000b', 'a\uFFFDb'],
    ['an ANSI colour escape', '\u001b[31mred', '\uFFFD[31mred'],
    ['an unpaired surrogate', 'x\uD800y', 'x\uFFFDy'],
    ['U+FFFE', '\uFFFE', '\uFFFD'],
  ])('replaces %s, which XML cannot hold even escaped, with U+FFFD', (_, text, read) => {
    expect(roundTrip(text)).toEqual({ attribute: read, content: read });
  });

  it('keeps a character beyond the Basic Multilingual Plane', () => {
    expect(roundTrip('pool 🚀')).toEqual({ attribute: 'pool 🚀', content: 'pool 🚀' });
  });
});

function child(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((item) => item.name === name);
}

describe('junitReport', () => {
  let report: XmlElement;

  beforeAll(async () => {
    const results: TestFileResult[] = [];
    for (const name of ['wrong-applied', 'invalid-rules', 'malformed'])
      results.push(await runTestFile(fixturePath(`rule-tests/${name}/podmutation-test.yaml`)));
    report = parseXml(junitReport(results, caseDiff));
  });

  it('writes a testsuite per test file and a testcase per result, counted', () => {
    expect(report.name).toBe('testsuites');
    expect(report.attributes).toMatchObject({ name: 'podmutation test', tests: '5', failures: '2', errors: '1' });
    expect(
      child(report, 'testsuite').map((suite) => [
        suite.attributes.name,
        suite.attributes.tests,
        suite.attributes.failures,
        suite.attributes.errors,
      ]),
    ).toEqual([
      ['wrong-applied', '2', '1', '0'],
      ['invalid-rules', '2', '1', '0'],
      [fixturePath('rule-tests/malformed/podmutation-test.yaml'), '1', '0', '1'],
    ]);
  });

  it('names each testcase by its resource, with the test file as its class and file', () => {
    const [suite] = child(report, 'testsuite');
    const file = fixturePath('rule-tests/wrong-applied/podmutation-test.yaml');

    expect(child(suite!, 'testcase').map((item) => item.attributes)).toEqual([
      {
        classname: file,
        name: 'Deployment/production/checkout',
        file,
        time: expect.stringMatching(/^\d+\.\d{3}$/) as unknown,
      },
      {
        classname: file,
        name: 'Deployment/staging/checkout',
        file,
        time: expect.stringMatching(/^\d+\.\d{3}$/) as unknown,
      },
    ]);
    expect(child(suite!, 'testcase')[0]!.children).toEqual([]);
  });

  it("carries a failure's summary in its message and the diff in its content, which GitLab shows", () => {
    const failed = child(child(report, 'testsuite')[0]!, 'testcase')[1]!;
    const [failure] = child(failed, 'failure');

    expect(failure!.attributes).toEqual({
      message: 'applied: expected [migrate-legacy-pool], got []',
      type: 'mismatch',
    });
    expect(failure!.text.split('\n')).toEqual([
      `Deployment/staging/checkout (${CHECKOUT}: document 3 (Deployment checkout))`,
      'applied: expected [migrate-legacy-pool], got []',
      '  - applied:',
      '  -   - migrate-legacy-pool',
      '  + applied: []',
    ]);
  });

  it('reports invalid rules as a failing testcase, and a file that cannot be run as an error listing its fields', () => {
    const [, invalid, malformed] = child(report, 'testsuite');

    expect(child(child(invalid!, 'testcase')[0]!, 'failure')[0]!.text).toMatch(
      /^PodMutation "force-spot": spec\.mutationAdd\.nodeSelector\.karpenter\.sh\/capacity-type: /,
    );
    const error = child(child(malformed!, 'testcase')[0]!, 'error')[0]!;
    expect(error.attributes.type).toBe('unreadable');
    expect(error.text.split('\n')).toContain(
      'results[0].aplied: unknown field; expected one of resource, applied, audited, denied, scheduling, patchedResource, fit, fitMessage, placement',
    );
  });
});
