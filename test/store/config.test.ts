import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../lib/errors/index.ts';
import { readStoreConfig } from '../../lib/store/index.ts';

describe('readStoreConfig', () => {
  it('applies the defaults when only RULES_TABLE is set', () => {
    expect(readStoreConfig({ RULES_TABLE: 'podmutation-rules' })).toEqual({
      tableName: 'podmutation-rules',
      clusterId: 'default',
      refreshSeconds: 30,
      maxStaleSeconds: 300,
    });
  });

  it('reads every variable when all are set', () => {
    const config = readStoreConfig({
      RULES_TABLE: 'rules',
      CLUSTER_ID: 'prod-eu-1',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      RULES_REFRESH_SECONDS: '10',
      RULES_MAX_STALE_SECONDS: '120',
    });

    expect(config).toEqual({
      tableName: 'rules',
      clusterId: 'prod-eu-1',
      endpoint: 'http://127.0.0.1:8000',
      refreshSeconds: 10,
      maxStaleSeconds: 120,
    });
  });

  it('treats empty optional variables as unset', () => {
    expect(readStoreConfig({ RULES_TABLE: 'rules', CLUSTER_ID: '', RULES_REFRESH_SECONDS: '' })).toMatchObject({
      clusterId: 'default',
      refreshSeconds: 30,
    });
  });

  it('fails naming RULES_TABLE when it is missing', () => {
    expect(() => readStoreConfig({})).toThrow(/^RULES_TABLE is not set; expected a DynamoDB table name/);
  });

  it('fails naming RULES_REFRESH_SECONDS and the expected form when it is not a whole number', () => {
    expect(() => readStoreConfig({ RULES_TABLE: 'rules', RULES_REFRESH_SECONDS: '2.5' })).toThrow(
      'RULES_REFRESH_SECONDS is "2.5"; expected a whole number of seconds from 1 to 86400',
    );
  });

  it('fails when RULES_MAX_STALE_SECONDS is shorter than the refresh interval', () => {
    expect(() =>
      readStoreConfig({ RULES_TABLE: 'rules', RULES_REFRESH_SECONDS: '60', RULES_MAX_STALE_SECONDS: '30' }),
    ).toThrow('RULES_MAX_STALE_SECONDS is "30"; expected a whole number of seconds from 60 to 86400');
  });

  it('fails with a ConfigurationError when DYNAMODB_ENDPOINT is not an http URL', () => {
    expect(() => readStoreConfig({ RULES_TABLE: 'rules', DYNAMODB_ENDPOINT: 'localhost:8000' })).toThrow(
      ConfigurationError,
    );
  });

  it('fails naming CLUSTER_ID when it cannot be used in a key', () => {
    expect(() => readStoreConfig({ RULES_TABLE: 'rules', CLUSTER_ID: 'a#b' })).toThrow(/^CLUSTER_ID is "a#b"/);
  });
});
