/**
 * The objects of an input file or standard input, read as they arrive: JSON through streamJson, YAML through streamYaml
 * (a List's items one at a time, so that `kubectl get pods -A -o json` or `-o yaml` of a large cluster is never held
 * whole; a YAML stream document by document). explain and report --objects read their inputs here.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { fileProblem, MalformedInputError } from '../errors/index.ts';
import { streamYaml } from '../rule-files/index.ts';
import { streamJson, type StreamedJson } from '../json/index.ts';
import type { CliStreams } from './io.ts';

/** The text of a readable stream chunk by chunk, as UTF-8; a file that cannot be read names the path. */
async function* textChunks(stream: Readable, path: string): AsyncGenerator<string> {
  stream.setEncoding('utf8');
  try {
    for await (const chunk of stream) yield chunk as string;
  } catch (error) {
    throw new MalformedInputError(`cannot read ${path}: ${fileProblem(error)}`, {
      cause: error,
      context: { source: path },
    });
  }
}

/** The chunks of `chunks` with `first` (already read) before them. */
async function* withFirst(first: string, chunks: AsyncIterator<string>): AsyncGenerator<string> {
  yield first;
  for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) yield next.value;
}

/**
 * The objects of one input: a file, or "-" for standard input, JSON (the first character `{` or `[`) or YAML. Yields each top-level value, and for a List each item and then the rest of the List (`envelope`). `source`
 * names the input in messages (a temporary copy of standard input is named "-").
 */
export async function* inputObjects(path: string, streams: CliStreams, source = path): AsyncGenerator<StreamedJson> {
  const stream = path === '-' ? streams.stdin : createReadStream(path);
  const chunks = textChunks(stream, source)[Symbol.asyncIterator]();
  let first = '';
  for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) {
    first += next.value;
    if (first.trimStart() !== '') break;
  }
  const start = first.trimStart()[0];
  if (start === '{' || start === '[') {
    yield* streamJson(withFirst(first, chunks), source);
    return;
  }
  yield* streamYaml(withFirst(first, chunks), source);
}
