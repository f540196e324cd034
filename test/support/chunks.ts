/** A text cut at these offsets (any order, any repeats), as a stream's chunks: for readers that take text as it arrives. */
export function chunksOf(text: string, offsets: readonly number[]): AsyncIterable<string> {
  const sorted = [...offsets].sort((left, right) => left - right);
  const chunks = [...sorted, text.length].map((offset, index) => text.slice(sorted[index - 1] ?? 0, offset));
  return (async function* chunked() {
    for (const chunk of chunks) yield await Promise.resolve(chunk);
  })();
}
