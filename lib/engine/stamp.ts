/**
 * The stamp: what the webhook records on each Pod it changes, so that a later review of that Pod (the Pod recreated
 * from its own spec, or copied by a controller) applies the rules to the Pod as its author sent it, with the same
 * draw of the managed steps. Under the same rules that later review reproduces the Pod exactly, so it changes nothing.
 *
 * The stamp holds the fields the review changed as they arrived and what the API server changes after admission as the
 * author sent it, a name left to generateName and the author's own BINDING_LABELS (`before`), the seed of the managed
 * steps (the request uid of the review that first changed the Pod), a SHA-256 `sum` of everything the stamp vouches
 * for, and an HMAC of that sum under a key only the deployed stack holds (`mac`). The sum covers the namespace and
 * workload, the labels, the scheduling fields and the changed annotations as the review left them, `before` and the
 * seed: any edit of them, or a copy into another namespace or workload, breaks it. A stamp that does not check is
 * dropped and the Pod reviewed as new. Pure: the digest functions come from the adapter layer (lib/stamp), so the
 * engine imports no crypto.
 */
import { PRODUCT_ANNOTATION_PREFIX } from '../api/index.ts';
import { LimitExceededError, MalformedInputError } from '../errors/index.ts';
import { jsonEqual } from '../patch/index.ts';
import { tolerationIdentity } from '../scheduling/index.ts';
import { canonicalJson, isJsonObject, parseJsonExact, textNestsDeeperThan, type JsonObject } from '../json/index.ts';
import { BINDING_LABELS } from './binding.ts';
import type { MutationContext } from './context.ts';
import type { Pod } from './pod-shape.ts';
import type { PodFacts } from './pod.ts';
import { currentNodeAffinity, withField, type SchedulingState } from './state.ts';

/** The annotation that carries the stamp. */
export const STAMP_ANNOTATION = `${PRODUCT_ANNOTATION_PREFIX}stamp`;

/** The digests a stamp is made and checked with (lib/stamp builds them on node:crypto). */
export interface StampDigest {
  /** SHA-256 of the text, in base64url: anyone can check a stamp's sum (the CLI and the sync's report do). */
  sum(text: string): string;
  /** The stack's stamp key: a MAC of a sum, and its check in constant time. Absent offline, where MACs are neither written nor checked. */
  readonly key?: { sign(sum: string): string; verify(sum: string, mac: string): boolean };
}

/** What a review made of the stamp its Pod arrived with: none, one that checked (the Pod was rebuilt from it), or one refused. */
export type StampVerdict = 'none' | 'checked' | 'refused';

/**
 * The fields a review changed, as they arrived: each annotation key's value (null: absent), the whole nodeSelector and
 * node affinity (null: absent), and for tolerations and spread constraints the number of entries the review kept in
 * front of those it appended, or the whole list when it did more than append. A field the review left alone is not
 * listed. Then what the API server changes after admission, as the author sent it: `name: null` when the name was left
 * to generateName, and the author's own BINDING_LABELS, which binding overwrites; listed only when there is one.
 */
interface StampRecord {
  readonly annotations?: Readonly<Record<string, string | null>>;
  readonly nodeSelector?: unknown;
  readonly tolerations?: unknown;
  readonly nodeAffinity?: unknown;
  readonly topologySpreadConstraints?: unknown;
  readonly name?: null;
  readonly labels?: Readonly<Record<string, string>>;
}

/** What a review starts from: the Pod the rules apply to, and what became of the incoming stamp. */
interface StampReading {
  /** The incoming Pod without its stamp; when the stamp checked, with the fields it records put back as they arrived. */
  readonly facts: PodFacts;
  readonly verdict: StampVerdict;
  /** The seed the stamp recorded, when it checked. */
  readonly seed?: string;
  /** The checked stamp's sum and text: kept byte for byte when the review would write the same stamp again. */
  readonly checked?: { readonly sum: string; readonly text: string };
}

// A stamp's seed: the request uid, and `#seq=<n>` after it when the review had a sequence number. API servers make
// request uids as UUIDs (k8s.io/apiserver pkg/admission/plugin/webhook/request/admissionreview.go), which hold no `#`.
const SEQUENCE_IN_SEED = /^(.+)#seq=(\d{1,15})$/;

/** The seed a stamp records for the review's managed steps. */
function seedOf(context: MutationContext): string {
  return context.sequence === undefined ? context.requestUid : `${context.requestUid}#seq=${context.sequence}`;
}

/** The managed steps' context of a review: that of the review that stamped the Pod, when its stamp checked. */
export function stampedContext(context: MutationContext, reading: StampReading): MutationContext {
  if (reading.seed === undefined) return context;
  const withSequence = SEQUENCE_IN_SEED.exec(reading.seed);
  return withSequence === null
    ? { requestUid: reading.seed }
    : { requestUid: withSequence[1]!, sequence: Number(withSequence[2]) };
}

const STAMP_VERSION = 1;
const RECORD_FIELDS: ReadonlySet<string> = new Set([
  'annotations',
  'nodeSelector',
  'tolerations',
  'nodeAffinity',
  'topologySpreadConstraints',
  'name',
  'labels',
]);
// The lists a review appends to (rules' tolerations, Diversity's spread constraint), recorded as a count when it only appended.
const LIST_FIELDS = ['tolerations', 'topologySpreadConstraints'] as const;
const STAMP_FIELDS: ReadonlySet<string> = new Set(['v', 'seed', 'before', 'sum', 'mac']);
/**
 * Kubernetes' limit on the annotations of one object, keys and values together, in bytes (TotalAnnotationSizeLimitB).
 * @internal Exported for tests: the tests build a Pod at the limit.
 */
export const MAX_ANNOTATION_BYTES = 256 * 1024;
/** What a stamp's sum covers, as the engine reads a Pod (PodFacts has every field; a review's result is given as the same view). */
type CoveredFields = Pick<
  PodFacts,
  | 'workload'
  | 'generateName'
  | 'labels'
  | 'nodeSelector'
  | 'tolerations'
  | 'nodeAffinity'
  | 'topologySpreadConstraints'
  | 'annotations'
>;

/**
 * The workload as the sum covers it: a bare Pod created with generateName by its generateName, which it has from
 * admission on, where its name is generated after the webhook (k8s.io/apiserver registry/rest BeforeCreate).
 */
function coveredWorkload({ workload, generateName }: CoveredFields): string {
  const name = workload.kind === 'Pod' && generateName !== '' ? generateName : workload.name;
  return JSON.stringify([workload.namespace, workload.kind, name]);
}

/** A string map's entries sorted by key, as JSON, less the keys in `without`. */
function sortedEntries(map: Readonly<Record<string, string>>, without: readonly string[] = []): string {
  return JSON.stringify(
    Object.keys(map)
      .filter((key) => !without.includes(key))
      .sort()
      .map((key) => [key, map[key]]),
  );
}

/**
 * The text the sum is taken of, one field a line: the workload, the labels, the scheduling fields as Kubernetes reads
 * them (tolerations, terms and preferences by their identities, as sets: what the API server's storage reorders or
 * drops, such as a toleration's empty value, changes none of them), the appended spread constraints, the changed
 * annotations as they are now; then the record exactly as written (what is put back must be what was vouched for) and
 * the seed. Identities are what the engine computes anyway, so a review's stamp costs little more than its hashes.
 */
function coveredText(fields: CoveredFields, record: StampRecord, recordJson: string, seed: string): string {
  const { nodeAffinity, annotations } = fields;
  const kept = record.topologySpreadConstraints;
  const spread = fields.topologySpreadConstraints;
  // Only the constraints the review appended: the API server merges matchLabelKeys into a Pod's own ones after admission.
  const appended =
    kept === undefined
      ? 'null'
      : typeof kept === 'number'
        ? `${kept} ${canonicalJson(spread.slice(kept))}`
        : canonicalJson(spread);
  const changedAnnotations =
    record.annotations === undefined
      ? []
      : Object.keys(record.annotations)
          .sort()
          .map((key) => [key, annotations[key] ?? null]);
  return [
    `v${STAMP_VERSION}`,
    coveredWorkload(fields),
    // Binding may overwrite them (BINDING_LABELS): the author's own are in the record.
    sortedEntries(fields.labels, BINDING_LABELS),
    sortedEntries(fields.nodeSelector),
    // Each identity is a JSON list already: the list of them is written without quoting them again.
    `[${fields.tolerations.map(tolerationIdentity).sort().join(',')}]`,
    // A required selector without terms is no selector (it is never emitted).
    JSON.stringify(
      nodeAffinity.required === undefined || nodeAffinity.required.length === 0
        ? null
        : nodeAffinity.required.map((term) => term.id).sort(),
    ),
    JSON.stringify(nodeAffinity.preferred.map((item) => item.id).sort()),
    appended,
    JSON.stringify(changedAnnotations),
    recordJson,
    JSON.stringify(seed),
  ].join('\n');
}

/** A stamp as its annotation holds it. */
interface ParsedStamp {
  readonly seed: string;
  readonly sum: string;
  readonly mac?: string;
  readonly record: StampRecord;
  readonly recordJson: string;
}

/** A stamp read from its annotation, or undefined when the text is not one. */
function parseStamp(text: string): ParsedStamp | undefined {
  if (textNestsDeeperThan(text)) return undefined;
  let value: unknown;
  try {
    // Exact integers, as the review itself is read: what is put back must keep its digits (tolerationSeconds).
    value = parseJsonExact(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(value) || value.v !== STAMP_VERSION || Object.keys(value).some((key) => !STAMP_FIELDS.has(key)))
    return undefined;
  const { seed, sum, mac, before } = value;
  if (
    typeof seed !== 'string' ||
    seed === '' ||
    typeof sum !== 'string' ||
    (mac !== undefined && typeof mac !== 'string')
  )
    return undefined;
  if (!isJsonObject(before) || Object.keys(before).some((key) => !RECORD_FIELDS.has(key))) return undefined;
  const { annotations } = before;
  if (
    annotations !== undefined &&
    !(
      isJsonObject(annotations) && Object.values(annotations).every((item) => item === null || typeof item === 'string')
    )
  )
    return undefined;
  for (const field of LIST_FIELDS) {
    const list = before[field];
    if (
      list !== undefined &&
      list !== null &&
      !Array.isArray(list) &&
      !(typeof list === 'number' && Number.isSafeInteger(list) && list >= 0)
    )
      return undefined;
  }
  const { name, labels } = before;
  if (name !== undefined && name !== null) return undefined;
  if (
    labels !== undefined &&
    !(
      isJsonObject(labels) &&
      Object.entries(labels).every(([key, value]) => BINDING_LABELS.includes(key) && typeof value === 'string')
    )
  )
    return undefined;
  return { seed, sum, ...(mac === undefined ? {} : { mac }), record: before, recordJson: JSON.stringify(before) };
}

/** The Pod without its stamp annotation. */
function withoutStamp(pod: Pod): Pod {
  const annotations = { ...pod.metadata?.annotations };
  delete annotations[STAMP_ANNOTATION];
  return { ...pod, metadata: { ...pod.metadata, annotations } };
}

/** The labels without those the API server adds at binding (BINDING_LABELS); `labels` itself when it has none. */
function withoutBindingLabels(
  labels: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> | undefined {
  if (labels === undefined || !BINDING_LABELS.some((key) => Object.hasOwn(labels, key))) return labels;
  const kept = { ...labels };
  for (const key of BINDING_LABELS) delete kept[key];
  return kept;
}

/** The Pod with the fields a record lists put back as they arrived; undefined when the Pod cannot have come from them. */
function preImage(pod: Pod, record: StampRecord): Pod | undefined {
  const stripped = withoutStamp(pod);
  const annotations: Record<string, string> = { ...stripped.metadata?.annotations };
  for (const [key, value] of Object.entries(record.annotations ?? {})) {
    if (value === null) delete annotations[key];
    else annotations[key] = value;
  }
  let spec = pod.spec ?? {};
  // An absent field is recorded as null; JSON has no undefined.
  if (Object.hasOwn(record, 'nodeSelector')) spec = withField(spec, 'nodeSelector', record.nodeSelector ?? undefined);
  if (Object.hasOwn(record, 'nodeAffinity')) {
    const affinity = withField(
      isJsonObject(spec.affinity) ? spec.affinity : {},
      'nodeAffinity',
      record.nodeAffinity ?? undefined,
    );
    spec = withField(spec, 'affinity', Object.keys(affinity).length === 0 ? undefined : affinity);
  }
  for (const field of LIST_FIELDS) {
    const kept = record[field];
    if (typeof kept === 'number') {
      const list: unknown = spec[field];
      if (!Array.isArray(list) || list.length < kept) return undefined;
      spec = withField(spec, field, list.slice(0, kept));
    } else if (kept !== undefined) spec = withField(spec, field, kept ?? undefined);
  }
  const metadata: Record<string, unknown> = { ...stripped.metadata, annotations };
  if (record.name === null) {
    // The name was generated after admission: only from a generateName, which the Pod still has.
    if (typeof metadata.generateName !== 'string' || metadata.generateName === '') return undefined;
    delete metadata.name;
  }
  const stored = stripped.metadata?.labels;
  const labels =
    record.labels === undefined ? withoutBindingLabels(stored) : { ...withoutBindingLabels(stored), ...record.labels };
  if (labels !== undefined) metadata.labels = labels;
  return { ...stripped, metadata, spec };
}

/**
 * Reads the stamp of the incoming Pod. Without one, the Pod is reviewed as it is. A stamp whose sum (and, with the key,
 * whose MAC) checks gives the Pod as it arrived at the review that stamped it; any other is refused, and the Pod is
 * reviewed as new without it. `read` is the Pod boundary (podFacts with the review's namespace and source). Pure.
 */
export function readStamp(incoming: PodFacts, digest: StampDigest, read: (pod: Pod) => PodFacts): StampReading {
  const text = incoming.annotations[STAMP_ANNOTATION];
  if (text === undefined) return { facts: incoming, verdict: 'none' };
  const refused = (): StampReading => ({ facts: read(withoutStamp(incoming.pod)), verdict: 'refused' });
  const stamp = parseStamp(text);
  if (
    stamp === undefined ||
    digest.sum(coveredText(incoming, stamp.record, stamp.recordJson, stamp.seed)) !== stamp.sum
  )
    return refused();
  if (digest.key !== undefined && (stamp.mac === undefined || !digest.key.verify(stamp.sum, stamp.mac)))
    return refused();
  const rebuilt = preImage(incoming.pod, stamp.record);
  if (rebuilt === undefined) return refused();
  let facts: PodFacts;
  try {
    // Without the key (offline) a stamp can be forged by hand: what it records is read through the boundary again.
    facts = read(rebuilt);
  } catch (error) {
    if (error instanceof MalformedInputError) return refused();
    throw error;
  }
  return { facts, verdict: 'checked', seed: stamp.seed, checked: { sum: stamp.sum, text } };
}

/**
 * The Pod as it arrived at the review that stamped it, when its stamp checks; undefined when it has no stamp or one
 * that does not check. `read` is the Pod boundary, as for readStamp. Pure.
 */
export function arrivalFromStamp(
  pod: PodFacts,
  digest: StampDigest,
  read: (pod: Pod) => PodFacts,
): PodFacts | undefined {
  const reading = readStamp(pod, digest, read);
  return reading.verdict === 'checked' ? reading.facts : undefined;
}

/** The annotations of `after` that differ from `before`'s, with `before`'s values (null: absent). */
function changedAnnotations(before: Pod, after: Pod): Record<string, string | null> | undefined {
  const old = before.metadata?.annotations ?? {};
  const now = after.metadata?.annotations ?? {};
  if (old === now) return undefined;
  const changed: Record<string, string | null> = {};
  let any = false;
  for (const key of Object.keys(now)) {
    if (old[key] === now[key]) continue;
    changed[key] = Object.hasOwn(old, key) ? old[key]! : null;
    any = true;
  }
  for (const key of Object.keys(old)) {
    if (Object.hasOwn(now, key)) continue;
    changed[key] = old[key]!;
    any = true;
  }
  return any ? changed : undefined;
}

/** What a review changed from `before` to `after`, as a record; undefined when it changed nothing. */
function recordOf(before: Pod, after: Pod): StampRecord | undefined {
  const record: Record<string, unknown> = {};
  const annotations = changedAnnotations(before, after);
  if (annotations !== undefined) record.annotations = annotations;
  const old = before.spec;
  const now = after.spec;
  if (old !== now) {
    if (!jsonEqual(old?.nodeSelector, now?.nodeSelector)) record.nodeSelector = old?.nodeSelector ?? null;
    const oldAffinity = old?.affinity?.nodeAffinity;
    if (!jsonEqual(oldAffinity, now?.affinity?.nodeAffinity)) record.nodeAffinity = oldAffinity ?? null;
    for (const field of LIST_FIELDS) {
      const oldList: unknown = old?.[field];
      const newList: unknown = now?.[field];
      // Strictly: a review that writes an empty list where there was none changes the Pod's bytes too.
      if (oldList === newList || jsonEqual(oldList, newList)) continue;
      // A list the review only appended to is recorded by the number of entries it kept: the stamp stays small.
      const prior: readonly unknown[] = Array.isArray(oldList) ? oldList : [];
      const appended =
        Array.isArray(newList) &&
        newList.length > prior.length &&
        prior.every((item, index) => item === newList[index] || jsonEqual(item, newList[index]));
      // A list that was absent is recorded as null, not as 0: its absence is put back, not an empty list.
      record[field] = appended && Array.isArray(oldList) ? prior.length : (oldList ?? null);
    }
  }
  if (Object.keys(record).length === 0) return undefined;
  const metadata = before.metadata;
  if (!metadata?.name && typeof metadata?.generateName === 'string' && metadata.generateName !== '') record.name = null;
  const labels = metadata?.labels ?? {};
  const own = BINDING_LABELS.filter((key) => Object.hasOwn(labels, key));
  if (own.length > 0) record.labels = Object.fromEntries(own.map((key) => [key, labels[key]]));
  return record;
}

/** Bytes of a Pod's annotations as Kubernetes counts them: the UTF-8 of every key and value. */
function annotationBytes(annotations: Readonly<Record<string, string>>): number {
  let units = 0;
  for (const key of Object.keys(annotations)) units += key.length + annotations[key]!.length;
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most Pods are settled without counting bytes.
  if (units * 3 <= MAX_ANNOTATION_BYTES) return units;
  let bytes = 0;
  for (const text of Object.entries(annotations).flat()) {
    for (let index = 0; index < text.length; index += 1) {
      const code = text.charCodeAt(index);
      if (code < 0x80) bytes += 1;
      else if (code < 0x800) bytes += 2;
      else if (code >= 0xd800 && code <= 0xdbff) {
        // A surrogate pair is one code point of 4 bytes.
        bytes += 4;
        index += 1;
      } else bytes += 3;
    }
  }
  return bytes;
}

/** What the rule pass left: the facts it matched, its state, and the Pod that state makes. */
interface PassResult {
  readonly facts: PodFacts;
  readonly state: SchedulingState;
  readonly pod: Pod;
}

/** What a review stamps with: the Pod as it arrived, what became of its stamp, the digests, and the managed steps' context. */
interface Stamping {
  readonly incoming: Pod;
  readonly reading: StampReading;
  readonly digest: StampDigest;
  readonly context: MutationContext;
}

/** The rule pass's result as the engine reads a Pod, the view the sum covers. */
function coveredFields({ facts, state }: PassResult): CoveredFields {
  return {
    workload: facts.workload,
    generateName: facts.generateName,
    labels: facts.labels,
    nodeSelector: state.nodeSelector ?? facts.nodeSelector,
    tolerations: state.tolerations ?? facts.tolerations,
    nodeAffinity: currentNodeAffinity(state, facts),
    topologySpreadConstraints:
      (state.topologySpreadConstraints as readonly JsonObject[] | undefined) ?? facts.topologySpreadConstraints,
    annotations: state.annotations ?? facts.annotations,
  };
}

/**
 * The rule pass's Pod with the stamp of what it changed on the Pod it was applied to, or as it is when it changed
 * nothing. A denial when the stamp would take the Pod's annotations past Kubernetes' limit, which the API server would
 * refuse. Pure.
 */
function stampPod(pass: PassResult, { digest, reading, context }: Stamping): Pod | LimitExceededError {
  const after = pass.pod;
  const record = recordOf(pass.facts.pod, after);
  if (record === undefined) return after;
  const seed = seedOf(context);
  // JSON.stringify, not canonical JSON: the record's text parses back to an object that stringifies to the same text.
  const recordJson = JSON.stringify(record);
  const sum = digest.sum(coveredText(coveredFields(pass), record, recordJson, seed));
  // Canonical JSON of { v, seed, before, sum, mac }, its members in code-unit order, written out: the record is serialised once.
  const mac = digest.key === undefined ? '' : `"mac":${JSON.stringify(digest.key.sign(sum))},`;
  const text =
    reading.checked?.sum === sum
      ? reading.checked.text
      : `{"before":${recordJson},${mac}"seed":${JSON.stringify(seed)},"sum":${JSON.stringify(sum)},"v":${STAMP_VERSION}}`;
  const annotations = { ...after.metadata?.annotations, [STAMP_ANNOTATION]: text };
  const bytes = annotationBytes(annotations);
  if (bytes > MAX_ANNOTATION_BYTES) {
    return new LimitExceededError({
      rule: STAMP_ANNOTATION,
      limit: "bytes of the Pod's annotations with the stamp of the fields it changes",
      actual: bytes,
      maximum: MAX_ANNOTATION_BYTES,
      subject: 'admission',
    });
  }
  return { ...after, metadata: { ...after.metadata, annotations } };
}

/** The Pod a stamped review sends: the rule pass's Pod stamped, or the denial of a stamp over its limit. Pure. */
export function writeStamp(pass: PassResult, stamping: Stamping): Pod | LimitExceededError {
  const pod = stampPod(pass, stamping);
  if (pod instanceof LimitExceededError) return pod;
  // A Pod rebuilt from its stamp arrives as the API server stored the first review's result.
  return stamping.reading.verdict === 'checked' ? keptAsStored(stamping.incoming, pod) : pod;
}

/**
 * `result`, the review of a Pod rebuilt from its stamp, with what the API server gave the incoming Pod after the review
 * that stamped it: its generated name, its labels as binding left them (rules never write labels, and the sum covers
 * every other), and the incoming tolerations when they are the same tolerations in the same order (a rule's toleration
 * written with `value: ""` comes back without it, which is the same toleration, and is not written again). Pure.
 */
function keptAsStored(incoming: Pod, result: Pod): Pod {
  let kept = result;
  const { name, labels } = incoming.metadata ?? {};
  if (name !== kept.metadata?.name || labels !== kept.metadata?.labels) {
    const metadata: Record<string, unknown> = { ...kept.metadata, name, labels };
    if (name === undefined) delete metadata.name;
    if (labels === undefined) delete metadata.labels;
    kept = { ...kept, metadata };
  }
  const arrived = incoming.spec?.tolerations;
  const sent = kept.spec?.tolerations;
  if (arrived === undefined || sent === undefined || arrived === sent || arrived.length !== sent.length) return kept;
  if (!arrived.every((item, index) => tolerationIdentity(item) === tolerationIdentity(sent[index]!))) return kept;
  return { ...kept, spec: { ...kept.spec, tolerations: arrived } };
}
