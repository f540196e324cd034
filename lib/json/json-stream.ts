/**
 * JSON read as it arrives: the top-level values of a text, and the `items` of a List one at a time, so that a
 * `kubectl get pods -A -o json` of a large cluster is never held whole (its text can be larger than the memory a
 * command may take). A scanner finds where each value ends (strings, nesting, the top-level object's keys); each
 * value found is parsed by parseJsonExact and its nesting checked, so the values are exactly what parsing the whole
 * text gives.
 */
import { MalformedInputError } from '../errors/index.ts';
import { checkNesting, parseJsonExact, type JsonObject } from './json.ts';

/** One value of a JSON stream. */
type StreamedJson =
  /** A top-level value (an object without streamed items, an array, a scalar), whole. */
  | { readonly type: 'value'; readonly document: number; readonly value: unknown }
  /** One element of a top-level object's `items` array, in order. */
  | { readonly type: 'item'; readonly document: number; readonly item: number; readonly value: unknown }
  /** The rest of an object whose items were streamed (kind, apiVersion, metadata), and how many items it had. */
  | { readonly type: 'envelope'; readonly document: number; readonly value: JsonObject; readonly items: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const NEWLINE = 0x0a;

function isSpace(code: number): boolean {
  return code === 0x20 || code === NEWLINE || code === 0x0d || code === 0x09;
}

/** Where the top-level object's scan stands between its members. */
type MemberState = 'key' | 'colon' | 'value' | 'comma';

/** The scanner's state between chunks; offsets are into `buffer`, which drops what no value still needs. */
class JsonScanner {
  private buffer = '';
  private position = 0;
  private line = 1;
  private readonly stack: number[] = [];
  private inString = false;
  private scalarStart = -1;
  private document = 0;
  // The value the top level is reading: its start, and (an object) its members so far.
  private topStart = -1;
  private members: Record<string, unknown> | undefined;
  private member: MemberState = 'key';
  private keyStart = -1;
  private key = '';
  private valueStart = -1;
  // The top-level object's items array, while it is streamed: the start of the element being read, and the count.
  private streaming = false;
  private itemStart = -1;
  private items = 0;
  private itemState: 'value' | 'comma' = 'value';
  private readonly out: StreamedJson[] = [];

  constructor(private readonly source: string) {}

  /** Scans one more chunk; returns the values it completed. */
  push(chunk: string): StreamedJson[] {
    this.buffer += chunk;
    this.scan();
    this.compact();
    return this.out.splice(0);
  }

  /** Ends the text: a value left open is malformed input. */
  end(): StreamedJson[] {
    if (this.scalarStart !== -1 && this.stack.length === 0) this.valueEnded(this.buffer.length);
    if (this.inString || this.stack.length > 0 || this.scalarStart !== -1)
      throw this.malformed('the text ends inside a JSON value');
    return this.out.splice(0);
  }

  private malformed(problem: string): MalformedInputError {
    return new MalformedInputError(`${this.source}:${this.line}: not valid JSON: ${problem}`, {
      context: { source: this.source, line: this.line },
    });
  }

  private parse(start: number, end: number, where: string, depth: number): unknown {
    let value: unknown;
    try {
      value = parseJsonExact(this.buffer.slice(start, end));
    } catch (error) {
      throw new MalformedInputError(`${where}: not valid JSON: ${(error as Error).message}`, {
        cause: error,
        context: { source: this.source },
      });
    }
    // The nesting of the whole document, as checkNesting counts it from the top.
    checkNesting(depth === 0 ? value : nestedIn(value, depth), where);
    return value;
  }

  private scan(): void {
    const { buffer } = this;
    let index = this.position;
    while (index < buffer.length) {
      if (this.inString) {
        const quote = buffer.indexOf('"', index);
        if (quote === -1) {
          index = buffer.length;
          break;
        }
        let backslashes = 0;
        while (buffer.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
        index = quote + 1;
        if (backslashes % 2 === 1) continue;
        this.inString = false;
        this.stringEnded(index);
        continue;
      }
      const code = buffer.charCodeAt(index);
      if (this.scalarStart !== -1) {
        if (!(isSpace(code) || code === COMMA || code === CLOSE_ARRAY || code === CLOSE_OBJECT)) {
          index += 1;
          continue;
        }
        this.valueEnded(index);
      }
      if (code === NEWLINE) this.line += 1;
      if (isSpace(code)) {
        index += 1;
        continue;
      }
      this.structural(code, index);
      index += 1;
    }
    this.position = index;
  }

  /** One character outside strings and scalars. */
  private structural(code: number, index: number): void {
    const depth = this.stack.length;
    if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      const open = this.stack.pop();
      if (open !== (code === CLOSE_OBJECT ? OPEN_OBJECT : OPEN_ARRAY))
        throw this.malformed(`unexpected ${String.fromCharCode(code)}`);
      if (depth === 1 && this.members !== undefined && this.member !== 'comma' && !this.emptyObject())
        throw this.malformed(`unexpected ${String.fromCharCode(code)}`);
      if (depth === 2 && this.streaming) {
        if (this.itemState === 'value' && this.items > 0) throw this.malformed('unexpected ]');
        this.streaming = false;
        this.members!['items'] = STREAMED;
        this.member = 'comma';
        return;
      }
      this.valueEnded(index + 1);
      return;
    }
    if (code === COMMA || code === COLON) {
      this.punctuation(code, depth);
      return;
    }
    if (depth === 1 && this.members !== undefined && this.member === 'key') {
      if (code !== QUOTE) throw this.malformed(`expected a member name, found ${String.fromCharCode(code)}`);
      this.keyStart = index;
      this.inString = true;
      return;
    }
    this.valueStarted(code, index, depth);
    if (code === OPEN_OBJECT || code === OPEN_ARRAY) this.stack.push(code);
    else if (code === QUOTE) this.inString = true;
    else this.scalarStart = index;
  }

  private punctuation(code: number, depth: number): void {
    if (depth === 1 && this.members !== undefined) {
      const wanted = code === COMMA ? 'comma' : 'colon';
      if (this.member !== wanted) throw this.malformed(`unexpected ${String.fromCharCode(code)}`);
      this.member = code === COMMA ? 'key' : 'value';
    } else if (depth === 2 && this.streaming) {
      if (code === COLON || this.itemState !== 'comma') throw this.malformed(`unexpected ${String.fromCharCode(code)}`);
      this.itemState = 'value';
    } else if (depth === 0) throw this.malformed(`unexpected ${String.fromCharCode(code)}`);
  }

  private valueStarted(code: number, index: number, depth: number): void {
    if (depth === 0) {
      this.document += 1;
      this.topStart = index;
      this.members = code === OPEN_OBJECT ? {} : undefined;
      this.member = 'key';
      this.items = 0;
    } else if (depth === 1 && this.members !== undefined) {
      if (this.member !== 'value') throw this.malformed(`unexpected ${String.fromCharCode(code)}`);
      this.valueStart = index;
      const kind = this.members['kind'];
      // A List's items are streamed; a kind read before them that is no List keeps them a plain member.
      if (this.key === 'items' && code === OPEN_ARRAY && (typeof kind !== 'string' || kind.endsWith('List'))) {
        this.streaming = true;
        this.itemState = 'value';
        // The array is not parsed whole: its elements are, each on its own.
        this.valueStart = -1;
      }
    } else if (depth === 2 && this.streaming) {
      if (this.itemState !== 'value') throw this.malformed(`unexpected ${String.fromCharCode(code)}`);
      this.itemStart = index;
    }
  }

  private stringEnded(end: number): void {
    if (this.keyStart !== -1) {
      this.key = this.parse(this.keyStart, end, `${this.source}: document ${this.document}`, 0) as string;
      this.keyStart = -1;
      this.member = 'colon';
      return;
    }
    this.valueEnded(end);
  }

  /** A value ended at `end` (exclusive), at the depth the stack now has. */
  private valueEnded(end: number): void {
    this.scalarStart = -1;
    const depth = this.stack.length;
    const where = `${this.source}: document ${this.document}`;
    if (depth === 0) {
      if (this.members === undefined) {
        this.out.push({ type: 'value', document: this.document, value: this.parse(this.topStart, end, where, 0) });
      } else if (this.items > 0 || this.members['items'] === STREAMED) {
        const envelope = this.members;
        delete envelope['items'];
        this.out.push({ type: 'envelope', document: this.document, value: envelope, items: this.items });
      } else this.out.push({ type: 'value', document: this.document, value: this.members });
      this.topStart = -1;
      this.members = undefined;
    } else if (depth === 1 && this.members !== undefined) {
      this.members[this.key] = this.parse(this.valueStart, end, `${where}: ${this.key}`, 1);
      this.valueStart = -1;
      this.member = 'comma';
    } else if (depth === 2 && this.streaming) {
      const item = this.items;
      this.items += 1;
      this.itemState = 'comma';
      const value = this.parse(this.itemStart, end, `${where}: items[${item}]`, 2);
      this.out.push({ type: 'item', document: this.document, item, value });
      this.itemStart = -1;
    }
  }

  /** Whether the top-level object closing now has no member (`{}`), which is the one close without a member before it. */
  private emptyObject(): boolean {
    return this.member === 'key' && Object.keys(this.members ?? {}).length === 0;
  }

  /** Drops the text before the earliest start a value still needs. */
  private compact(): void {
    const needed = [this.keyStart, this.valueStart, this.itemStart, this.scalarStart, this.position];
    if (this.members === undefined && this.topStart !== -1) needed.push(this.topStart);
    const keep = Math.min(...needed.filter((start) => start !== -1));
    if (keep === 0) return;
    this.buffer = this.buffer.slice(keep);
    const shift = (start: number): number => (start === -1 ? -1 : start - keep);
    this.position -= keep;
    this.keyStart = shift(this.keyStart);
    this.valueStart = shift(this.valueStart);
    this.itemStart = shift(this.itemStart);
    this.scalarStart = shift(this.scalarStart);
    this.topStart = shift(this.topStart);
  }
}

// Marks the items member of an object whose items were streamed, in place of the array.
const STREAMED = Symbol('streamed items');

/** A value as deep inside a document as `depth` levels, for checkNesting's count from the top. */
function nestedIn(value: unknown, depth: number): unknown {
  let nested = value;
  for (let level = 0; level < depth; level += 1) nested = [nested];
  return nested;
}

/**
 * The values of JSON text read chunk by chunk: each top-level value, except that a top-level object's `items` array
 * (a List, as kubectl prints it) yields its elements one by one and then the object's other members. Throws
 * MalformedInputError naming the source and the line, or the item, of malformed JSON.
 */
async function* streamJson(chunks: AsyncIterable<string>, source: string): AsyncGenerator<StreamedJson> {
  const scanner = new JsonScanner(source);
  for await (const chunk of chunks) yield* scanner.push(chunk);
  yield* scanner.end();
}

export { streamJson };
export type { StreamedJson };
