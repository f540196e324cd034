import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { MalformedInputError } from '../errors/index.ts';
import { checkNesting } from '../values/index.ts';
import { parseYamlDocuments } from '../rule-files/index.ts';

/** The streams a command reads and writes; tests pass their own. */
export interface CliStreams {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/**
 * Reads a whole file, or standard input for "-" or no path. No path while standard input is a terminal is a usage
 * error rather than a wait for typing nobody meant to do.
 */
export async function readInput(path: string | undefined, streams: CliStreams): Promise<string> {
  if (path === undefined && (streams.stdin as { isTTY?: boolean }).isTTY === true) {
    throw new MalformedInputError('no INPUT given, and standard input is a terminal: give a file, or pipe the input in (- reads standard input)');
  }
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

/**
 * Parses one YAML or JSON document, nested at most MAX_JSON_DEPTH levels; more than one document, a syntax error or
 * deeper nesting is malformed input.
 */
export function parseSingleDocument(text: string, source: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: read it as YAML below.
  }
  if (json !== undefined) {
    checkNesting(json, source);
    return json;
  }
  const documents = parseYamlDocuments(text, source);
  if (documents.length === 0) throw new MalformedInputError(`${source}: input is empty`);
  if (documents.length > 1) throw new MalformedInputError(`${source}: expected one document, found ${documents.length}`);
  return documents[0];
}

/** Writes a line to a stream. */
export function writeLine(stream: Writable, line: string): void {
  stream.write(`${line}\n`);
}
