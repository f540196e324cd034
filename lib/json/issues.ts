/**
 * The one validation style of every boundary: issues collected, each at its path (a field path, a variable, a flag),
 * and reported together. A check adds to an IssueSink; a reader that throws for one field is gathered by `readAll`.
 */
import { PodMutationError } from '../errors/index.ts';

/** One problem of an input: where it is and what is wrong there. */
interface Issue {
  readonly field: string;
  readonly reason: string;
}

/** Where a check reports: one issue at a field path. */
interface IssueSink {
  add(field: string, reason: string): void;
}

/** Collects issues; past `capacity` it only counts them, so a hostile input cannot grow a report without bound. */
class IssueList implements IssueSink {
  readonly issues: Issue[] = [];
  private dropped = 0;

  constructor(private readonly capacity: number) {}

  add(field: string, reason: string): void {
    if (this.issues.length < this.capacity) this.issues.push({ field, reason });
    else this.dropped += 1;
  }

  get count(): number {
    return this.issues.length + this.dropped;
  }

  /** The issues, the last one saying how many more were found when some were dropped. */
  reported(): readonly Issue[] {
    return this.dropped === 0
      ? this.issues
      : [...this.issues, { field: '', reason: `and ${this.dropped} more issues` }];
  }
}

/** The issues an error reports: those it gathered (context.issues), else itself at its field, variable or flag. */
function issuesOf(error: PodMutationError): readonly Issue[] {
  const gathered = error.context.issues;
  if (Array.isArray(gathered)) return gathered as Issue[];
  const where = error.context.field ?? error.context.variable ?? error.context.flag;
  return [{ field: typeof where === 'string' ? where : '', reason: error.message }];
}

/** The error classes `readAll` can throw (ConfigurationError for the environment, MalformedInputError for flags). */
type IssueError = new (message: string, options: { context: Record<string, unknown> }) => PodMutationError;

/**
 * Runs every reader, so one wrong setting does not hide the next, and throws once: the only error as it was, or one
 * `Failure` listing every message, with the issues in context.issues. Errors that are not the project's own (a bug)
 * pass through at once.
 */
function readAll<T extends object>(readers: { readonly [K in keyof T]: () => T[K] }, Failure: IssueError): T {
  const result: Partial<T> = {};
  const failures: PodMutationError[] = [];
  for (const key of Object.keys(readers) as (keyof T)[]) {
    try {
      result[key] = readers[key]();
    } catch (error) {
      if (!(error instanceof PodMutationError)) throw error;
      failures.push(error);
    }
  }
  const [first] = failures;
  if (first === undefined) return result as T;
  if (failures.length === 1) throw first;
  const issues = failures.flatMap(issuesOf);
  throw new Failure(`${issues.length} problems: ${issues.map((issue) => issue.reason).join('; ')}`, {
    context: { issues },
  });
}

export { IssueList, readAll, issuesOf };
export type { Issue, IssueSink };
