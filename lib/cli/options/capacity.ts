/** The `--capacity FILE` option (repeatable) of validate, explain, review, test and serve, and the capacity it reads. */
import { Option } from 'commander';
import { Capacity, FIT_CAVEAT, readCapacityObjects, type Verdict } from '../../capacity/index.ts';
import type { MutationOutcome } from '../../engine/index.ts';
import { MalformedInputError } from '../../errors/index.ts';
import { parseYamlDocuments, readTextFile } from '../../rule-files/index.ts';
import { collect } from '../command.ts';
import { writeLine, type CliStreams } from '../io.ts';

/** The parsed value of the option. */
export interface CapacityFlags {
  readonly capacity?: string[];
}

/** `--capacity FILE`, repeatable: Nodes and NodePools as `kubectl get nodes,nodepools -o yaml` prints them. */
export function capacityOption(what: string): Option {
  return new Option(
    '--capacity <file>',
    `Nodes and NodePools (kubectl get nodes,nodepools -o yaml) to judge ${what} against; repeatable`,
  ).argParser(collect);
}

/**
 * The capacity of the `--capacity` files, every object of another kind reported on stderr; Capacity.unknown() when no
 * file is given (a judgment then finds contradictions only). Files that hold no Node and no NodePool at all are a usage
 * error: every Pod would fit nowhere, and a wrong path or an empty `kubectl get` must not read as a finding.
 */
export async function readCapacityFiles(paths: readonly string[], streams: CliStreams): Promise<Capacity> {
  if (paths.length === 0) return Capacity.unknown();
  const read = [];
  for (const path of paths) read.push(readCapacityObjects(parseYamlDocuments(await readTextFile(path), path), path));
  for (const { where, kind, name } of read.flatMap((objects) => objects.skipped))
    writeLine(
      streams.stderr,
      `${where}: kind ${kind}${name === '' ? '' : ` ${name}`}, not a Node or NodePool; skipped`,
    );
  const nodes = read.flatMap((objects) => objects.nodes);
  const nodePools = read.flatMap((objects) => objects.nodePools);
  if (nodes.length === 0 && nodePools.length === 0)
    throw new MalformedInputError(
      `capacity ${paths.join(', ')}: no Node and no NodePool found; expected the output of kubectl get nodes,nodepools -o yaml`,
      { context: { source: paths.join(', ') } },
    );
  return Capacity.of({ nodes, nodePools });
}

/** Where a changed Pod fitted and fits, as the engine judges it (MutationOutcome.fit). */
type FitPair = NonNullable<MutationOutcome['fit']>;

/**
 * True when a changed Pod's fit is worth showing: always with a capacity (`known`); without one only when it fits
 * nowhere before or after (its own contradiction), since "not judged" before and after says nothing.
 */
export function fitShown(fit: FitPair | undefined, known: boolean): fit is FitPair {
  if (fit === undefined) return false;
  return known || fit.after.kind === 'nowhere' || fit.before.kind === 'nowhere';
}

/** Where a changed Pod can run in the JSON outputs (explain, test): before and after, and whether the rules stranded it. */
export function fitDocument(fit: FitPair) {
  return { before: verdictDocument(fit.before), after: verdictDocument(fit.after), unschedulable: fit.stranded };
}

/** The fit for people: before and after, each verdict with its closest candidates, and the stranding said plainly. */
export function fitLines(fit: FitPair): string[] {
  const verdict = (label: string, lines: readonly string[]) =>
    lines.map((line, index) => (index === 0 ? `${label} ${line}` : `        ${line}`));
  return [
    ...verdict('before:', fit.before.lines()),
    ...verdict('after: ', fit.after.lines()),
    ...(fit.stranded ? ['unschedulable: the rules turned a Pod that fit somewhere into one that fits nowhere'] : []),
  ];
}

/** The note printed once under verdicts for people: what "fits" judges and leaves out. */
export function fitCaveatLine(): string {
  return `note: where a Pod fits is ${FIT_CAVEAT}`;
}

/** A verdict as the JSON outputs show it: its kind and one-line text, and the closest candidates when it fits nowhere. */
function verdictDocument(verdict: Verdict) {
  return {
    kind: verdict.kind,
    text: verdict.text(),
    nodes: verdict.nodes,
    nodePools: verdict.nodePools,
    closest: verdict.closest.map(({ kind, name, nodes, reasons }) => ({ kind, name, nodes, reasons })),
  };
}
