/** The readers of untrusted JSON, whole or as it arrives, and the one style of reporting what is wrong in it. */
export {
  canonicalJson,
  checkNesting,
  isJsonObject,
  MAX_JSON_DEPTH,
  memberPath,
  objectList,
  optionalBoolean,
  optionalInt64,
  optionalInteger,
  optionalObject,
  optionalString,
  parseJsonExact,
  exactInteger,
  isRawInteger,
  previewInput,
  stringList,
  stringMap,
  textNestsDeeperThan,
  truncateInput,
  typeMismatch,
} from './json.ts';
export type { JsonObject, RawInteger } from './json.ts';
export { streamJson } from './json-stream.ts';
export type { StreamedJson } from './json-stream.ts';
export { IssueList, issuesOf, readAll } from './issues.ts';
export type { Issue, IssueSink } from './issues.ts';
