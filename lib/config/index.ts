/**
 * Reading of environment variables, shared by every function's typed configuration. Each reader takes the
 * environment as a parameter (tests pass their own) and fails fast with a ConfigurationError naming the variable.
 */
import { ConfigurationError } from '../errors/index.ts';

/** The environment as a function sees it. */
type Environment = Readonly<Record<string, string | undefined>>;

/** The variable's trimmed value; empty counts as unset (templates often render an unset value as ""). */
function optionalSetting(env: Environment, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A whole number from `minimum` to `maximum`, or `fallback` when unset; `unit` names it in the error ("seconds"). */
function wholeNumberSetting(
  env: Environment,
  name: string,
  range: { readonly fallback: number; readonly minimum: number; readonly maximum: number; readonly unit: string },
): number {
  const text = optionalSetting(env, name);
  if (text === undefined) return range.fallback;
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < range.minimum || value > range.maximum) {
    throw new ConfigurationError(`${name} is "${text}"; expected a whole number of ${range.unit} from ${range.minimum} to ${range.maximum}`, {
      context: { variable: name },
    });
  }
  return value;
}

export { optionalSetting, wholeNumberSetting };
export type { Environment };
