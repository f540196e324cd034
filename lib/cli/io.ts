import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { parseAllDocuments } from 'yaml';
import { MalformedInputError } from '../errors/index.ts';

/** The streams a command reads and writes; tests pass their own. */
export interface CliStreams {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** Reads a whole file, or standard input for "-" or no path. */
export async function readInput(path: string | undefined, streams: CliStreams): Promise<string> {
  if (path === undefined || path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of streams.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new MalformedInputError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
}

/** Parses one YAML or JSON document; more than one document or a syntax error is malformed input. */
export function parseSingleDocument(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: read it as YAML below.
  }
  const documents = parseAllDocuments(text, { prettyErrors: false });
  const list = Array.isArray(documents) ? documents : [documents];
  const nonEmpty = list.filter((document) => document.contents !== null || document.errors.length > 0);
  if (nonEmpty.length === 0) throw new MalformedInputError(`${source}: input is empty`);
  const first = nonEmpty[0]!;
  if (first.errors.length > 0) throw new MalformedInputError(`${source}: not valid JSON or YAML: ${first.errors[0]!.message}`);
  if (nonEmpty.length > 1) throw new MalformedInputError(`${source}: expected one document, found ${nonEmpty.length}`);
  return first.toJS({ maxAliasCount: 100 });
}

/** Writes a line to a stream. */
export function writeLine(stream: Writable, line: string): void {
  stream.write(`${line}\n`);
}
