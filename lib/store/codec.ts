/** Pure encoding of snapshot content: canonical JSON, content hash, gzip parts, and the shape check on read. */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { SnapshotContent } from './types.ts';

/** Upper bound of the uncompressed snapshot JSON; also caps gunzip output so a corrupted part cannot exhaust memory. */
const MAX_CONTENT_BYTES = 64 * 1024 * 1024;

type Json = Readonly<Record<string, unknown>>;

/** A decoded part set: the content, or what was wrong with it. */
type DecodedContent = { readonly content: SnapshotContent } | { readonly problem: string; readonly cause?: unknown };

/** JSON with object keys sorted at every depth; undefined object fields are dropped as JSON.stringify does. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Json)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`).join(',')}}`;
  }
  const scalar = JSON.stringify(value);
  if (scalar === undefined) throw new TypeError(`a ${typeof value} cannot be stored as JSON`);
  return scalar;
}

function sha256Hex(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** `sha256:<hex>` over the canonical JSON of rules and invalid: equal content gives equal hashes. */
function contentHashOf(content: Pick<SnapshotContent, 'rules' | 'invalid'>): string {
  return `sha256:${sha256Hex(canonicalJson({ rules: content.rules, invalid: content.invalid }))}`;
}

/** Digest of one stored part, so a reader names the corrupted part rather than just a hash mismatch. */
function partDigestOf(part: Uint8Array): string {
  return `sha256:${sha256Hex(part)}`;
}

/** Gzipped canonical JSON of the content cut into parts of at most partBytes bytes (at least one part). */
function encodeContent(content: SnapshotContent, partBytes: number): readonly Uint8Array[] {
  const json = Buffer.from(
    canonicalJson({
      rules: content.rules,
      invalid: content.invalid,
      resourceVersion: content.resourceVersion,
      syncedAt: content.syncedAt,
    }),
    'utf8',
  );
  if (json.byteLength > MAX_CONTENT_BYTES) {
    throw new RangeError(`snapshot JSON is ${json.byteLength} bytes, above the limit of ${MAX_CONTENT_BYTES}`);
  }
  const compressed = gzipSync(json);
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < compressed.byteLength; offset += partBytes) {
    parts.push(compressed.subarray(offset, offset + partBytes));
  }
  return parts;
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
    value = JSON.parse(json);
  } catch (cause) {
    return { problem: 'the decompressed content is not valid JSON', cause };
  }
  const problem = contentProblem(value);
  return problem === undefined ? { content: value as SnapshotContent } : { problem };
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function ruleProblem(rule: unknown, path: string): string | undefined {
  if (!isObject(rule)) return `${path} must be an object`;
  if (typeof rule.name !== 'string' || rule.name === '') return `${path}.name must be a non-empty string`;
  if (typeof rule.enable !== 'boolean') return `${path}.enable must be a boolean`;
  if (typeof rule.priority !== 'number') return `${path}.priority must be a number`;
  for (const field of ['workloadSelector', 'mutationRemove', 'mutationAdd'] as const) {
    if (!isObject(rule[field])) return `${path}.${field} must be an object`;
  }
  return undefined;
}

function invalidRuleProblem(invalid: unknown, path: string): string | undefined {
  if (!isObject(invalid)) return `${path} must be an object`;
  if (typeof invalid.name !== 'string') return `${path}.name must be a string`;
  if (!Array.isArray(invalid.issues)) return `${path}.issues must be an array`;
  const badIssue = invalid.issues.findIndex(
    (issue: unknown) => !isObject(issue) || typeof issue.field !== 'string' || typeof issue.reason !== 'string',
  );
  return badIssue === -1 ? undefined : `${path}.issues[${badIssue}] must be an object with string field and reason`;
}

/** Structural check of decoded content: the hash proves integrity, this proves it is a snapshot at all. */
function contentProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'content must be a JSON object';
  if (!Array.isArray(value.rules)) return 'content.rules must be an array';
  if (!Array.isArray(value.invalid)) return 'content.invalid must be an array';
  if (typeof value.resourceVersion !== 'string') return 'content.resourceVersion must be a string';
  if (typeof value.syncedAt !== 'string') return 'content.syncedAt must be a string';
  for (const [index, rule] of (value.rules as readonly unknown[]).entries()) {
    const problem = ruleProblem(rule, `content.rules[${index}]`);
    if (problem !== undefined) return problem;
  }
  for (const [index, rule] of (value.invalid as readonly unknown[]).entries()) {
    const problem = invalidRuleProblem(rule, `content.invalid[${index}]`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

export { canonicalJson, contentHashOf, partDigestOf, encodeContent, decodeContent };
