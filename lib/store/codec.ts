/** Pure encoding of snapshot content: the content hash, gzip parts of its canonical JSON, and the shape check on read. */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ENFORCEMENTS, IF_UNSCHEDULABLE, isEnforcement, type RuleSnapshot } from '../api/index.ts';
import { canonicalJson, isJsonObject, IssueList, parseJsonExact, type IssueSink } from '../json/index.ts';

/** What a publisher hands the store: a RuleSnapshot without the hash and version the store assigns. */
type SnapshotContent = Omit<RuleSnapshot, 'contentHash' | 'version'>;

/** Upper bound of the uncompressed snapshot JSON; also caps gunzip output so a corrupted part cannot exhaust memory. */
const MAX_CONTENT_BYTES = 64 * 1024 * 1024;

/** A decoded part set: the content and the text it was parsed from, or what was wrong with it. */
type DecodedContent =
  { readonly content: SnapshotContent; readonly text: string } | { readonly problem: string; readonly cause?: unknown };

function sha256Hex(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Content serialized once, for both its hash and its stored parts: a publish needs the hash, and the parts only when it changed. */
interface SerializedContent {
  /** `sha256:<hex>` over the canonical JSON of { capacity, invalid, placements, rules }: equal content gives equal hashes. */
  readonly contentHash: string;
  /** Gzipped canonical JSON of { capacity, invalid, placements, resourceVersion, rules, syncedAt } cut into parts of at most partBytes bytes (at least one). */
  encode(partBytes: number): readonly Uint8Array[];
}

/**
 * The stored text around the rules' canonical JSON: the canonical JSON of { capacity, invalid, placements, resourceVersion, rules,
 * syncedAt } (keys in code-unit order, capacity only when published) is `before` + rules + `after`. One definition for
 * the publisher and the reader.
 */
function storedFrame(
  head: string,
  content: Pick<SnapshotContent, 'resourceVersion' | 'syncedAt'>,
): { readonly before: string; readonly after: string } {
  return {
    before: `${head},"resourceVersion":${canonicalJson(content.resourceVersion)},"rules":`,
    after: `,"syncedAt":${canonicalJson(content.syncedAt)}}`,
  };
}

/**
 * The PodPlacements' member of the canonical JSON (`,"placements":…`), after invalid; none without PodPlacements, so
 * that a snapshot without them hashes and is stored as before PodPlacements existed.
 */
function placementsMember(content: Pick<SnapshotContent, 'placements'>): string {
  const { placements } = content;
  return placements === undefined || placements.length === 0 ? '' : `,"placements":${canonicalJson(placements)}`;
}

/** The canonical JSON that opens both the hashed and the stored text: `{"capacity":…,"invalid":…[,"placements":…]`. */
function headOf(content: Pick<SnapshotContent, 'capacity' | 'invalid' | 'placements'>): string {
  const capacity = content.capacity === undefined ? '' : `"capacity":${canonicalJson(content.capacity)},`;
  return `{${capacity}"invalid":${canonicalJson(content.invalid)}${placementsMember(content)}`;
}

/**
 * `sha256:<hex>` over the canonical JSON of { capacity, invalid, placements, rules } (capacity only when published, so that a
 * snapshot without one hashes as before capacities were published): equal content, equal hashes.
 */
function hashOf(head: string, rules: string): string {
  return `sha256:${createHash('sha256').update(`${head},"rules":`).update(rules).update('}').digest('hex')}`;
}

/** Serializes rules and invalid once, for the hash and for the stored parts. */
function serializeContent(content: SnapshotContent): SerializedContent {
  const head = headOf(content);
  const rules = canonicalJson(content.rules);
  return {
    contentHash: hashOf(head, rules),
    encode(partBytes) {
      const { before, after } = storedFrame(head, content);
      const json = Buffer.from(`${before}${rules}${after}`, 'utf8');
      if (json.byteLength > MAX_CONTENT_BYTES) {
        throw new RangeError(`snapshot JSON is ${json.byteLength} bytes, above the limit of ${MAX_CONTENT_BYTES}`);
      }
      const compressed = gzipSync(json);
      const parts: Uint8Array[] = [];
      for (let offset = 0; offset < compressed.byteLength; offset += partBytes) {
        parts.push(compressed.subarray(offset, offset + partBytes));
      }
      return parts;
    },
  };
}

/**
 * `sha256:<hex>` over the canonical JSON of capacity, invalid, placements and rules (see hashOf).
 * @internal Exported for tests: the tests check the hash is stable across key order.
 */
function contentHashOf(content: SnapshotContent): string {
  return serializeContent(content).contentHash;
}

/** The text of the capacity member as the stored text holds it (`"capacity":…,`), or undefined when it is not framed so. */
function storedCapacityText(text: string, content: SnapshotContent, rest: string): string | undefined {
  if (content.capacity === undefined) return text.startsWith(`{${rest}`) ? '' : undefined;
  const open = '{"capacity":';
  if (!text.startsWith(open)) return undefined;
  // The first `,"invalid":…,"rules":` after the opening; one inside a string of the capacity splits it wrongly, and
  // the hash of a wrong split cannot match the publisher's (it is not their canonical JSON), so the slow way decides.
  const end = text.indexOf(`,${rest}`, open.length);
  return end < 0 ? undefined : text.slice(1, end + 1);
}

/**
 * The content hash of decoded content, as contentHashOf computes it, without serialising the rules or the capacity
 * again when the text is in the frame serializeContent writes: their texts are then their canonical JSON (a third of a
 * cold load was recomputing the rules', and 240 KiB of capacity takes 5 to 9 ms). Sound for any text: the hashed bytes
 * with the resourceVersion and syncedAt parsed from the same text are the whole text, so the hash matches the
 * pointer's only if the text is the publisher's canonical JSON, and then it parses to the published content. Any
 * other text is hashed the slow way.
 */
function decodedContentHash(decoded: { readonly content: SnapshotContent; readonly text: string }): string {
  const { content, text } = decoded;
  const invalid = canonicalJson(content.invalid);
  const placements = placementsMember(content);
  const rest = `"invalid":${invalid}${placements},"resourceVersion":${canonicalJson(content.resourceVersion)},"rules":`;
  const after = `,"syncedAt":${canonicalJson(content.syncedAt)}}`;
  const capacity = storedCapacityText(text, content, rest);
  if (capacity === undefined) return contentHashOf(content);
  const start = 1 + capacity.length + rest.length;
  if (!text.endsWith(after) || text.length < start + after.length) return contentHashOf(content);
  return hashOf(`{${capacity}"invalid":${invalid}${placements}`, text.slice(start, text.length - after.length));
}

/** Digest of one stored part, so a reader names the corrupted part rather than just a hash mismatch. */
function partDigestOf(part: Uint8Array): string {
  return `sha256:${sha256Hex(part)}`;
}

/** Reassembled parts back to content, or the problem: undecodable gzip, bad JSON, or not a snapshot's shape. */
function decodeContent(parts: readonly Uint8Array[]): DecodedContent {
  let json: string;
  try {
    json = gunzipSync(Buffer.concat(parts), { maxOutputLength: MAX_CONTENT_BYTES }).toString('utf8');
  } catch (cause) {
    return { problem: 'the reassembled parts are not valid gzip data', cause };
  }
  let value: unknown;
  try {
    // Exact integers, as the rules were read: tolerationSeconds beyond 2^53 is published and served with its digits.
    value = parseJsonExact(json);
  } catch (cause) {
    return { problem: 'the decompressed content is not valid JSON', cause };
  }
  const problem = contentProblem(value);
  return problem === undefined ? { content: value as SnapshotContent, text: json } : { problem };
}

/** Issues kept when content is misshapen: the first few name the damage; the count says how much there is. */
const MAX_CONTENT_ISSUES = 8;

function checkRule(rule: unknown, path: string, issues: IssueSink): void {
  if (!isJsonObject(rule)) return issues.add(path, 'must be an object');
  if (typeof rule.name !== 'string' || rule.name === '') issues.add(`${path}.name`, 'must be a non-empty string');
  if (typeof rule.enable !== 'boolean') issues.add(`${path}.enable`, 'must be a boolean');
  if (typeof rule.priority !== 'number') issues.add(`${path}.priority`, 'must be a number');
  // Absent in snapshots published before rules carried an enforcement (every rule enforced); revalidation at compile reads it as enforce.
  if (rule.enforcement !== undefined && !isEnforcement(rule.enforcement))
    issues.add(`${path}.enforcement`, `must be ${ENFORCEMENTS.join(' or ')}`);
  // Absent for warn (the default), and in snapshots published before rules carried it.
  if (rule.ifUnschedulable !== undefined && !(IF_UNSCHEDULABLE as readonly unknown[]).includes(rule.ifUnschedulable))
    issues.add(`${path}.ifUnschedulable`, `must be ${IF_UNSCHEDULABLE.join(' or ')}`);
  for (const field of ['workloadSelector', 'mutationRemove', 'mutationAdd'] as const) {
    if (!isJsonObject(rule[field])) issues.add(`${path}.${field}`, 'must be an object');
  }
}

function checkInvalidRule(invalid: unknown, path: string, issues: IssueSink): void {
  if (!isJsonObject(invalid)) return issues.add(path, 'must be an object');
  if (typeof invalid.name !== 'string') issues.add(`${path}.name`, 'must be a string');
  if (!Array.isArray(invalid.issues)) return issues.add(`${path}.issues`, 'must be an array');
  (invalid.issues as readonly unknown[]).forEach((issue, index) => {
    if (!isJsonObject(issue) || typeof issue.field !== 'string' || typeof issue.reason !== 'string') {
      issues.add(`${path}.issues[${index}]`, 'must be an object with string field and reason');
    }
  });
}

/** Structural check of decoded content: the hash proves integrity, this proves it is a snapshot at all. */
function checkContent(value: unknown, issues: IssueSink): void {
  if (!isJsonObject(value)) return issues.add('content', 'must be a JSON object');
  const { rules, invalid } = value;
  if (!Array.isArray(rules)) issues.add('content.rules', 'must be an array');
  if (!Array.isArray(invalid)) issues.add('content.invalid', 'must be an array');
  if (typeof value.resourceVersion !== 'string') issues.add('content.resourceVersion', 'must be a string');
  if (typeof value.syncedAt !== 'string') issues.add('content.syncedAt', 'must be a string');
  // Read through lib/capacity's boundary by the endpoint; here only its place is checked.
  if (value.capacity !== undefined && !isJsonObject(value.capacity))
    issues.add('content.capacity', 'must be an object');
  // Each PodPlacement is validated again when admission compiles the snapshot (lib/placement revalidatePlacements).
  if (value.placements !== undefined && !Array.isArray(value.placements))
    issues.add('content.placements', 'must be an array');
  if (Array.isArray(rules))
    (rules as readonly unknown[]).forEach((rule, index) => checkRule(rule, `content.rules[${index}]`, issues));
  if (Array.isArray(invalid))
    (invalid as readonly unknown[]).forEach((rule, index) =>
      checkInvalidRule(rule, `content.invalid[${index}]`, issues),
    );
}

/** The problems of decoded content in one sentence, or undefined for a snapshot's shape. */
function contentProblem(value: unknown): string | undefined {
  const issues = new IssueList(MAX_CONTENT_ISSUES);
  checkContent(value, issues);
  if (issues.count === 0) return undefined;
  return issues
    .reported()
    .map((issue) => (issue.field === '' ? issue.reason : `${issue.field} ${issue.reason}`))
    .join('; ');
}

export { contentHashOf, decodedContentHash, partDigestOf, serializeContent, decodeContent };
export type { SerializedContent, SnapshotContent };
