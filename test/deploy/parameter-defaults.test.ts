/** The stack parameters' defaults in serverless.yml are the code's defaults, so a deployment that names none behaves as a local run. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_ENFORCEMENT } from '../../lib/api/index.ts';
import { DEFAULT_CAPACITY_FLAVOUR } from '../../lib/placement/index.ts';
import { ROOT } from '../support/source-files.ts';

// As written, CloudFormation tags unresolved: only params.default is read.
const config = parse(readFileSync(join(ROOT, 'serverless.yml'), 'utf8'), { logLevel: 'error' }) as {
  readonly params: { readonly default: Readonly<Record<string, unknown>> };
};

describe('the stack parameters of serverless.yml', () => {
  it.each([
    ['enforcement', DEFAULT_ENFORCEMENT],
    ['capacityFlavour', DEFAULT_CAPACITY_FLAVOUR],
  ])('default %s to the code’s default, %s', (parameter, expected) => {
    expect(config.params.default[parameter]).toBe(expected);
  });
});
