/**
 * YAML read as it arrives, as streamJson reads JSON: each document of a stream (`---`) parsed on its own, and the items
 * of a List as `kubectl get -o yaml` prints it (a top-level `items:` whose entries are `- ` lines) one at a time, so
 * that neither a `helm template` stream nor a cluster's List is held whole. Each piece is read by parseYamlDocuments,
 * as kubectl reads YAML.
 */
import { isJsonObject, type StreamedJson } from '../json/index.ts';

const DOCUMENT_START = /^---(?:[ \t]+(.*))?$/;
const DOCUMENT_END = /^\.\.\.[ \t]*$/;
const ITEMS_KEY = /^items:[ \t]*(?:#.*)?$/;
const ITEM_MARKER = /^( *)- /;

/** The lines of a text read chunk by chunk, without their line ends. */
async function* lines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of chunks) {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    for (const part of parts) yield part.endsWith('\r') ? part.slice(0, -1) : part;
  }
  if (rest !== '') yield rest;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Whether a line carries nothing: blank, or a comment alone. */
function empty(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === '' || trimmed.startsWith('#');
}

/** How a piece of YAML is read (parseYamlDocuments, passed in by index.ts, which this file may not import). */
type YamlParser = (text: string, source: string) => unknown[];

/** One document's reading: its lines outside a List's items, and the item being gathered. */
class DocumentReader {
  private readonly outside: string[] = [];
  // Where `items:` stands among the outside lines: put back when no entry was read apart (`items:` of nothing).
  private itemsLine = -1;
  private item: string[] | undefined;
  private itemIndent = -1;
  private inItems = false;
  private items = 0;

  constructor(
    private readonly parseYamlDocuments: YamlParser,
    private readonly source: string,
    readonly document: number,
  ) {}

  /** Takes one line; returns the item it completed, if any. */
  line(line: string): StreamedJson | undefined {
    if (!this.inItems) {
      if (ITEMS_KEY.test(line) && this.itemsLine === -1) {
        this.itemsLine = this.outside.length;
        this.inItems = true;
      }
      this.outside.push(line);
      return undefined;
    }
    if (empty(line) && this.item !== undefined) {
      this.item.push(line);
      return undefined;
    }
    const marker = ITEM_MARKER.exec(line);
    if (marker !== null && (this.itemIndent === -1 || marker[1]!.length === this.itemIndent)) {
      const done = this.finishItem();
      this.itemIndent = marker[1]!.length;
      // The entry as a mapping of its own: its marker written as the spaces it stands for.
      this.item = [`${marker[1]!}  ${line.slice(marker[0].length)}`];
      return done;
    }
    if (this.item !== undefined && indentOf(line) > this.itemIndent) {
      this.item.push(line);
      return undefined;
    }
    if (empty(line)) return undefined;
    // A line back at the top: the items are over (kind: List follows them in kubectl's output).
    const done = this.finishItem();
    this.inItems = false;
    this.outside.push(line);
    return done;
  }

  private finishItem(): StreamedJson | undefined {
    if (this.item === undefined) return undefined;
    const where = `${this.source}: document ${this.document}: items[${this.items}]`;
    const values = this.parseYamlDocuments(this.item.join('\n'), where);
    this.item = undefined;
    const item = this.items;
    this.items += 1;
    return { type: 'item', document: this.document, item, value: values.length === 0 ? null : values[0] };
  }

  /** Ends the document: its last item, then the document (or, when items were read apart, the rest of the List). */
  end(): StreamedJson[] {
    const last = this.finishItem();
    const out: StreamedJson[] = last === undefined ? [] : [last];
    const where = `${this.source}: document ${this.document}`;
    if (this.itemIndent === -1) {
      for (const value of this.parseYamlDocuments(this.outside.join('\n'), where))
        out.push({ type: 'value', document: this.document, value });
      return out;
    }
    const rest = this.outside.filter((_line, index) => index !== this.itemsLine);
    const [envelope] = this.parseYamlDocuments(rest.join('\n'), where);
    const value = isJsonObject(envelope) ? envelope : {};
    out.push({ type: 'envelope', document: this.document, value, items: this.items });
    return out;
  }
}

/**
 * The values of YAML text read chunk by chunk, as streamJson gives JSON's: each document, except that a List's items
 * (a top-level `items:` of `- ` entries) come one by one, then the List's other members. Throws MalformedInputError
 * naming the source (and the item) of what does not parse.
 */
async function* streamYaml(
  chunks: AsyncIterable<string>,
  source: string,
  parse: YamlParser,
): AsyncGenerator<StreamedJson> {
  let document = 1;
  let reader = new DocumentReader(parse, source, document);
  let read = false;
  for await (const line of lines(chunks)) {
    const start = DOCUMENT_START.exec(line);
    if (start !== null || DOCUMENT_END.test(line)) {
      if (read) {
        yield* reader.end();
        document += 1;
      }
      reader = new DocumentReader(parse, source, document);
      read = false;
      // `--- value` starts a document with its first line.
      const rest = start?.[1];
      if (rest === undefined || empty(rest)) continue;
    }
    const text = start?.[1] ?? line;
    read ||= !empty(text);
    const item = reader.line(text);
    if (item !== undefined) yield item;
  }
  if (read) yield* reader.end();
}

export { streamYaml };
