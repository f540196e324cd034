/**
 * The `${podmutation:...}` variables of serverless/plugin.mjs that check a parameter's value at packaging, resolved
 * through the plugin's own resolver (no osls process): a typo fails the package, not every cold start.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error The plugin is the plain ESM module osls loads; it has no type declarations.
import PodMutationPlugin from '../../serverless/plugin.mjs';

class ServerlessError extends Error {}

/** The part of the plugin class these tests use. */
type PluginClass = new (
  serverless: unknown,
  options: unknown,
  utils: unknown,
) => { readonly configurationVariablesSources: { readonly podmutation: Resolver } };
const Plugin = PodMutationPlugin as unknown as PluginClass;

interface Resolver {
  resolve(input: { address: string; resolveVariable: (name: string) => Promise<unknown> }): Promise<{ value: unknown }>;
}

/** Resolves `${podmutation:address}` with the given parameters, as osls would. */
function resolve(address: string, params: Readonly<Record<string, string>>): Promise<{ value: unknown }> {
  const serverless = { classes: { Error: ServerlessError }, serviceDir: '.', service: { provider: { stage: 'test' } } };
  const plugin = new Plugin(serverless, {}, { log: { notice: () => undefined, info: () => undefined } });
  return plugin.configurationVariablesSources.podmutation.resolve({
    address,
    resolveVariable: (name) => Promise.resolve(params[name.replace(/^param:/, '')]),
  });
}

describe('the plugin variables that check parameters', () => {
  it.each(['0', '1', '1440'])(
    'passes reportIntervalMinutes=%s through as the variable the sync reads',
    async (value) => {
      await expect(resolve('reportIntervalMinutes', { reportIntervalMinutes: value })).resolves.toEqual({ value });
    },
  );

  it.each(['1441', '-1', '5m', '1.5', ''])('refuses reportIntervalMinutes=%j, naming the range', async (value) => {
    await expect(resolve('reportIntervalMinutes', { reportIntervalMinutes: value })).rejects.toThrow(
      `the reportIntervalMinutes parameter is "${value}"; expected a whole number from 0 to 1440`,
    );
  });

  it.each(['enforce', 'audit'])('passes enforcement=%s through', async (value) => {
    await expect(resolve('enforcement', { enforcement: value })).resolves.toEqual({ value });
  });

  it('refuses an enforcement other than enforce or audit', async () => {
    await expect(resolve('enforcement', { enforcement: 'Audit' })).rejects.toThrow(
      'the enforcement parameter is "Audit"; expected enforce or audit',
    );
  });

  it.each([
    ['0', 0],
    ['1', 1],
    ['1000', 1000],
  ])('passes provisionedConcurrency=%s through as the number the function schema takes', async (value, number) => {
    await expect(resolve('provisionedConcurrency', { provisionedConcurrency: value })).resolves.toEqual({
      value: number,
    });
  });

  it.each(['1001', '-1', '2.5', 'five', ''])('refuses provisionedConcurrency=%j, naming the range', async (value) => {
    await expect(resolve('provisionedConcurrency', { provisionedConcurrency: value })).rejects.toThrow(
      `the provisionedConcurrency parameter is "${value}"; expected a whole number from 0 to 1000`,
    );
  });

  it.each([
    ['1000', 800],
    ['3000', 2400],
    ['125', 100],
  ])('sets the concurrency alarm at 80%% of concurrencyQuota=%s', async (quota, threshold) => {
    await expect(resolve('concurrencyAlarmThreshold', { concurrencyQuota: quota })).resolves.toEqual({
      value: threshold,
    });
  });

  it.each(['99', '1000001', '1e3', 'lots'])('refuses concurrencyQuota=%j, naming the range', async (quota) => {
    await expect(resolve('concurrencyAlarmThreshold', { concurrencyQuota: quota })).rejects.toThrow(
      `the concurrencyQuota parameter is "${quota}"; expected a whole number from 100 to 1000000`,
    );
  });

  it("sets the slow-admission alarm at 80% of the admission function's timeout, in milliseconds", async () => {
    await expect(resolve('admissionSlowMs', { 'self:functions.admission.timeout': '3' })).resolves.toEqual({
      value: 2400,
    });
  });
});
