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
  it.each(['0', '1', '1440'])('passes reportIntervalMinutes=%s through as the variable the sync reads', async (value) => {
    await expect(resolve('reportIntervalMinutes', { reportIntervalMinutes: value })).resolves.toEqual({ value });
  });

  it.each(['1441', '-1', '5m', '1.5', ''])('refuses reportIntervalMinutes=%j, naming the range', async (value) => {
    await expect(resolve('reportIntervalMinutes', { reportIntervalMinutes: value })).rejects.toThrow(
      `the reportIntervalMinutes parameter is "${value}"; expected a whole number from 0 to 1440`,
    );
  });

  it.each(['enforce', 'audit'])('passes enforcement=%s through', async (value) => {
    await expect(resolve('enforcement', { enforcement: value })).resolves.toEqual({ value });
  });

  it('refuses an enforcement other than enforce or audit', async () => {
    await expect(resolve('enforcement', { enforcement: 'Audit' })).rejects.toThrow('the enforcement parameter is "Audit"; expected enforce or audit');
  });
});
