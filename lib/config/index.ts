/**
 * Reading of environment variables, shared by every function's typed configuration. Each reader takes the
 * environment as a parameter (tests pass their own) and fails fast with a ConfigurationError naming the variable.
 */
import { ConfigurationError } from '../errors/index.ts';
import { renderVariableTable } from './variables.ts';

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
    throw new ConfigurationError(
      `${name} is "${text}"; expected a whole number of ${range.unit} from ${range.minimum} to ${range.maximum}`,
      {
        context: { variable: name },
      },
    );
  }
  return value;
}

/** An integer option a caller passes, or `fallback` when absent; `name` says whose option it is ("sync option pollMs"). */
function integerOption(
  value: number | undefined,
  name: string,
  range: { readonly fallback: number; readonly minimum: number; readonly maximum?: number },
): number {
  if (value === undefined) return range.fallback;
  const { minimum, maximum } = range;
  if (!Number.isInteger(value) || value < minimum || (maximum !== undefined && value > maximum)) {
    const expected =
      maximum !== undefined
        ? `an integer from ${minimum} to ${maximum}`
        : minimum === 1
          ? 'a positive integer'
          : `an integer of at least ${minimum}`;
    throw new ConfigurationError(`${name} is ${value}; expected ${expected}`);
  }
  return value;
}

/** One of a few words, or `fallback` when unset; the error names the variable and every allowed word. */
function choiceSetting<T extends string>(env: Environment, name: string, choices: readonly T[], fallback: T): T {
  const text = optionalSetting(env, name) ?? fallback;
  if (!(choices as readonly string[]).includes(text)) {
    throw new ConfigurationError(`${name} is "${text}"; expected one of ${choices.join(', ')}`, {
      context: { variable: name },
    });
  }
  return text as T;
}

export { optionalSetting, wholeNumberSetting, choiceSetting, integerOption, renderVariableTable };
export type { Environment };
