/**
 * The project's error tree. Every error carries a stable `name`, an optional `cause`
 * and context fields, and a message that says what was wrong, where, and what was expected.
 */

/** Base class of every error this project throws on purpose. */
class PodMutationError extends Error {
  override readonly name: string = 'PodMutationError';
  /** Structured context for logs (never secrets or whole Pod bodies). */
  readonly context: Readonly<Record<string, unknown>>;

  constructor(message: string, options: { cause?: unknown; context?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.context = Object.freeze({ ...(options.context ?? {}) });
  }
}

/** Input that cannot be parsed or has the wrong shape (a file, an AdmissionReview, a CLI argument). */
class MalformedInputError extends PodMutationError {
  override readonly name: string = 'MalformedInputError';
}

/** Two rules in one rule set share a name; names are the identity of a rule. */
class DuplicateRuleError extends PodMutationError {
  override readonly name: string = 'DuplicateRuleError';
  readonly rule: string;
  /** What is wrong, without the rule's name: `is defined more than once (a.yaml, b.yaml); rule names must be unique`. */
  readonly reason: string;

  /** `kind` is the resource's kind: a PodMutation (a rule) unless said, or a PodPlacement. */
  constructor(rule: string, sources: readonly string[], kind = 'PodMutation') {
    const noun = kind === 'PodMutation' ? 'rule' : kind;
    const reason = `is defined more than once (${sources.join(', ')}); ${noun} names must be unique`;
    super(`${kind} "${rule}" ${reason}`, { context: { rule, sources, kind } });
    this.rule = rule;
    this.reason = reason;
  }
}

/** Which limit who would exceed, and by how much. */
interface ExceededLimit {
  readonly rule: string;
  readonly limit: string;
  readonly actual: number;
  readonly maximum: number;
  /** Who exceeded the limit, as the message names it: the rule by default, or a managed step. */
  readonly subject?: string;
}

/** A matching rule would exceed a runtime safety limit; admission is denied. */
class LimitExceededError extends PodMutationError {
  override readonly name: string = 'LimitExceededError';
  readonly rule: string;
  readonly limit: string;
  readonly actual: number;
  readonly maximum: number;

  constructor({ rule, limit, actual, maximum, subject = `PodMutation "${rule}"` }: ExceededLimit) {
    super(`${subject}: ${limit} would be ${actual}, above the limit of ${maximum}`, {
      context: { rule, limit, actual, maximum },
    });
    this.rule = rule;
    this.limit = limit;
    this.actual = actual;
    this.maximum = maximum;
  }
}

/** Configuration (environment or flags) is missing or invalid. */
class ConfigurationError extends PodMutationError {
  override readonly name: string = 'ConfigurationError';
}

/** The rule store could not be read or written, or holds a corrupted snapshot. */
class StoreError extends PodMutationError {
  override readonly name: string = 'StoreError';
}

/** The Kubernetes API could not be reached or answered with an error. */
class ClusterError extends PodMutationError {
  override readonly name: string = 'ClusterError';
}

// What the file system's codes mean to someone who typed a path (Node's fs errors, from errno).
const FILE_PROBLEMS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or folder',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is a file, not a folder',
  // From mkdir: the path (or a part of it) is there, and is no folder.
  EEXIST: 'it exists, and is not a folder',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
};

/** The message of anything thrown: an Error's message, else the value as text. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The fields a log line gives an error: its name, its message and, when its context has one, its reason. */
interface ErrorLogFields {
  readonly errorName: string;
  readonly errorMessage: string;
  readonly errorReason?: unknown;
}

/** An error as log fields; never its stack or its context beyond the reason (a context may hold what a log must not). */
function errorLogFields(error: unknown): ErrorLogFields {
  const name = error instanceof Error ? error.name : typeof error;
  const reason = error instanceof PodMutationError ? error.context['reason'] : undefined;
  return { errorName: name, errorMessage: messageOf(error), ...(reason === undefined ? {} : { errorReason: reason }) };
}

/** Why a file operation failed, in words with the system's code: `no such file or folder (ENOENT)`. */
function fileProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined) return messageOf(error);
  const words = FILE_PROBLEMS[code];
  return words === undefined ? code : `${words} (${code})`;
}

export {
  errorLogFields,
  fileProblem,
  messageOf,
  PodMutationError,
  MalformedInputError,
  DuplicateRuleError,
  LimitExceededError,
  ConfigurationError,
  StoreError,
  ClusterError,
};
