import type { Readable, Writable } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { fileProblem, MalformedInputError } from '../errors/index.ts';
import { readTextFile } from '../rule-files/index.ts';

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
  if (path === undefined) checkInputPiped(streams);
  if (path === undefined || path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of streams.stdin)
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  }
  return readTextFile(path);
}

/** No INPUT given while standard input is a terminal: a usage error rather than a wait for typing nobody meant to do. */
export function checkInputPiped(streams: CliStreams): void {
  if ((streams.stdin as { isTTY?: boolean }).isTTY === true) {
    throw new MalformedInputError(
      'no INPUT given, and standard input is a terminal: give a file, or pipe the input in (- reads standard input)',
    );
  }
}

/** Writes a line to a stream. */
export function writeLine(stream: Writable, line: string): void {
  stream.write(`${line}\n`);
}

/** Reads the whole file a flag names (`--tls-cert FILE`); one that cannot be read is a usage error naming the flag and the path. */
export async function readFlagFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new MalformedInputError(`${flag} ${path} cannot be read: ${fileProblem(error)}`, {
      cause: error,
      context: { flag },
    });
  }
}
