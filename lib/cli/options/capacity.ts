/** The `--capacity FILE` option (repeatable) of validate, explain, review, test and serve, and the capacity it reads. */
import { Option } from 'commander';
import { Capacity, FIT_CAVEAT, readCapacityObjects, type Verdict } from '../../capacity/index.ts';
import { MalformedInputError } from '../../errors/index.ts';
import { parseYamlDocuments } from '../../rule-files/index.ts';
import { collect } from '../command.ts';
import { readInput, writeLine, type CliStreams } from '../io.ts';

/** The parsed value of the option. */
export interface CapacityFlags {
  readonly capacity?: string[];
}

/** `--capacity FILE`, repeatable: Nodes and NodePools as `kubectl get nodes,nodepools -o yaml` prints them. */
export function capacityOption(what: string): Option {
  return new Option(
    '--capacity <file>',
    `Nodes and NodePools (kubectl get nodes,nodepools -o yaml; - for standard input) to judge ${what} against; repeatable`,
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
  for (const path of paths) {
    const source = path === '-' ? '(stdin)' : path;
    read.push(readCapacityObjects(parseYamlDocuments(await readInput(path, streams), source), source));
  }
  for (const { where, kind, name } of read.flatMap((objects) => objects.skipped))
    writeLine(
      streams.stderr,
      `${where}: kind ${kind}${name === '' ? '' : ` ${name}`}, not a Node or NodePool; skipped`,
    );
  const nodes = read.flatMap((objects) => objects.nodes);
  const nodePools = read.flatMap((objects) => objects.nodePools);
  if (nodes.length === 0 && nodePools.length === 0)
    throw new MalformedInputError(
      `--capacity ${paths.join(' ')}: no Node and no NodePool found; expected kubectl get nodes,nodepools -o yaml output`,
      { context: { flag: '--capacity' } },
    );
  return Capacity.of({ nodes, nodePools });
}

/**
 * True when a changed Pod's fit is worth showing: always with a capacity; without one only when it fits nowhere before
 * or after (its own contradiction), since "not judged" before and after says nothing.
 */
export function fitShown(fit: { readonly before: Verdict; readonly after: Verdict } | undefined, capacity: Capacity) {
  if (fit === undefined) return false;
  return capacity.known || fit.after.kind === 'nowhere' || fit.before.kind === 'nowhere';
}

/** The note printed once under verdicts for people: what "fits" judges and leaves out. */
export function fitCaveatLine(): string {
  return `note: where a Pod fits is ${FIT_CAVEAT}`;
}

/** A verdict as the JSON outputs show it: its kind and one-line text, and the closest candidates when it fits nowhere. */
export function verdictDocument(verdict: Verdict) {
  return {
    kind: verdict.kind,
    text: verdict.text(),
    nodes: verdict.nodes,
    nodePools: verdict.nodePools,
    closest: verdict.closest.map(({ kind, name, nodes, reasons }) => ({ kind, name, nodes, reasons })),
  };
}
