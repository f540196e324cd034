/**
 * A strict reader of the XML subset the JUnit report uses (a declaration, elements, double-quoted attributes, text,
 * the five entities and character references), for tests: it refuses what an XML parser refuses there (a raw "<" or
 * "&", a character XML cannot hold, mismatched or duplicate names, content after the root) and normalizes attribute
 * values as XML does (a raw tab or line break reads as a space).
 */

/** An element: its name, attributes, child elements and its own text (the text between its children, joined). */
export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
  readonly text: string;
}

const NAME = /^[A-Za-z_][\w.-]*/;
const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const XML_CHARACTER = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

/** Parses a whole document; throws an Error naming the offset of the first thing that is not well-formed. */
export function parseXml(source: string): XmlElement {
  if (!XML_CHARACTER.test(source)) throw new Error('a character XML cannot hold');
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`${what} at offset ${at}`);
  };
  const skipSpace = () => {
    while (/\s/.test(source[at] ?? '')) at += 1;
  };
  const decode = (raw: string): string =>
    raw.replace(/&([^;]*);|&/g, (match: string, body: string | undefined) => {
      if (body === undefined) return fail('a raw "&"');
      if (Object.hasOwn(ENTITIES, body)) return ENTITIES[body]!;
      const code = /^#x([0-9A-Fa-f]+)$/.exec(body)?.[1] ?? /^#([0-9]+)$/.exec(body)?.[1];
      if (code === undefined) return fail(`an unknown entity ${match}`);
      return String.fromCodePoint(Number.parseInt(code, body.startsWith('#x') ? 16 : 10));
    });
  const name = (): string => {
    const found = NAME.exec(source.slice(at))?.[0] ?? fail('a name expected');
    at += found.length;
    return found;
  };
  const element = (): XmlElement => {
    if (source[at] !== '<') fail('"<" expected');
    at += 1;
    const tag = name();
    const attributes: Record<string, string> = {};
    for (;;) {
      skipSpace();
      if (source.startsWith('/>', at)) {
        at += 2;
        return { name: tag, attributes, children: [], text: '' };
      }
      if (source[at] === '>') break;
      const attribute = name();
      if (Object.hasOwn(attributes, attribute)) fail(`a second attribute ${attribute}`);
      if (!source.startsWith('="', at)) fail('=" expected');
      const end = source.indexOf('"', at + 2);
      if (end < 0) fail('an unterminated attribute');
      const raw = source.slice(at + 2, end);
      if (raw.includes('<')) fail('a raw "<" in an attribute');
      attributes[attribute] = decode(raw.replace(/[\t\n\r]/g, ' '));
      at = end + 1;
    }
    at += 1;
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      const next = source.indexOf('<', at);
      if (next < 0) fail(`no end tag for ${tag}`);
      text += decode(source.slice(at, next));
      at = next;
      if (source.startsWith('</', at)) {
        at += 2;
        if (name() !== tag) fail(`a mismatched end tag for ${tag}`);
        if (source[at] !== '>') fail('">" expected');
        at += 1;
        return { name: tag, attributes, children, text };
      }
      children.push(element());
    }
  };
  if (source.startsWith('<?xml')) {
    at = source.indexOf('?>') + 2;
    if (at < 2) fail('an unterminated declaration');
  }
  skipSpace();
  const root = element();
  skipSpace();
  if (at !== source.length) fail('content after the root element');
  return root;
}
