import { describe, expect, it } from 'vitest';
import { ConfigurationError, MalformedInputError } from '../../lib/errors/index.ts';
import { readAdmissionConfig } from '../../lib/endpoint/index.ts';
import { readStoreConfig } from '../../lib/store/index.ts';
import { readSyncConfig } from '../../lib/sync/index.ts';
import { storeTarget } from '../../lib/cli/options/store-target.ts';
import { IssueList, readAll, type Issue } from '../../lib/json/index.ts';

const TOKEN = 'a'.repeat(40);

function thrown(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    return error;
  }
  throw new Error('expected the reader to throw');
}

function issuesIn(error: unknown): readonly Issue[] {
  expect(error).toBeInstanceOf(Error);
  return (error as ConfigurationError).context.issues as readonly Issue[];
}

describe('IssueList', () => {
  it('keeps issues up to its capacity and counts the rest in a last line', () => {
    const issues = new IssueList(2);
    for (const field of ['a', 'b', 'c', 'd']) issues.add(field, 'is wrong');

    expect(issues.count).toBe(4);
    expect(issues.reported()).toEqual([
      { field: 'a', reason: 'is wrong' },
      { field: 'b', reason: 'is wrong' },
      { field: '', reason: 'and 2 more issues' },
    ]);
  });
});

describe('readAll', () => {
  it('returns every value when no reader fails', () => {
    expect(readAll({ one: () => 1, two: () => 'two' }, ConfigurationError)).toEqual({ one: 1, two: 'two' });
  });

  it('rethrows a single failure unchanged', () => {
    const only = new ConfigurationError('X is wrong', { context: { variable: 'X' } });

    expect(
      thrown(() =>
        readAll(
          {
            one: () => 1,
            two: (): number => {
              throw only;
            },
          },
          ConfigurationError,
        ),
      ),
    ).toBe(only);
  });

  it("lets an error that is not the project's own through at once", () => {
    expect(() =>
      readAll(
        {
          bug: (): number => {
            throw new TypeError('a bug');
          },
        },
        ConfigurationError,
      ),
    ).toThrow(TypeError);
  });
});

describe('one error names every wrong setting', () => {
  it('readStoreConfig reports a bad table, cluster id and endpoint together', () => {
    const error = thrown(() =>
      readStoreConfig({ RULES_TABLE: 'no spaces allowed', CLUSTER_ID: 'a/b', DYNAMODB_ENDPOINT: 'ftp://x' }),
    );

    expect(error).toBeInstanceOf(ConfigurationError);
    expect(issuesIn(error).map((issue) => issue.field)).toEqual(['RULES_TABLE', 'CLUSTER_ID', 'DYNAMODB_ENDPOINT']);
    expect((error as Error).message).toMatch(
      /^3 problems: RULES_TABLE is "no spaces allowed".*; CLUSTER_ID is "a\/b".*; DYNAMODB_ENDPOINT is "ftp:\/\/x"/,
    );
  });

  it("readAdmissionConfig flattens the store's issues beside its own", () => {
    const error = thrown(() =>
      readAdmissionConfig({
        RULES_TABLE: 'bad table',
        CLUSTER_ID: 'a/b',
        WEBHOOK_TOKEN: TOKEN,
        CAPACITY_FLAVOUR: 'azure',
      }),
    );

    expect(issuesIn(error).map((issue) => issue.field)).toEqual(['RULES_TABLE', 'CLUSTER_ID', 'CAPACITY_FLAVOUR']);
  });

  it('readSyncConfig reports the store and the cluster access together', () => {
    const error = thrown(() => readSyncConfig({ SYNC_INTERVAL_SECONDS: '1', RULES_TABLE: 'podmutation-rules' }));

    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(
      /^2 problems: SYNC_INTERVAL_SECONDS is "1".*; neither CLUSTER_NAME nor KUBECONFIG_SECRET_ARN is set/,
    );
  });

  it('keeps the message of a single wrong variable as it was', () => {
    expect(() => readStoreConfig({ RULES_TABLE: 'podmutation-rules', CLUSTER_ID: 'a/b' })).toThrow(
      /^CLUSTER_ID is "a\/b"; expected/,
    );
  });

  it('storeTarget names every wrong flag in one MalformedInputError', () => {
    const error = thrown(() => storeTarget({ table: 'x y', region: 'moon-1' }));

    expect(error).toBeInstanceOf(MalformedInputError);
    expect(issuesIn(error).map((issue) => issue.field)).toEqual(['--table', '--region']);
  });
});
