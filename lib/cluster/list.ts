import { ClusterError } from '../errors/index.ts';
import { isJsonObject } from '../json/index.ts';
import { hasReason } from './access.ts';
import { clusterError, type ClusterOperation } from './failure.ts';

/** A complete list of podmutations: every item of every page, and the list's resourceVersion. */
interface PodMutationList {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
}

/** One checked page of a paginated list; `continueToken` is undefined on the last page. */
interface ListPage {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
  readonly continueToken: string | undefined;
}

/** Fetches one page; rejects with a ClusterError (reason "gone" when the continue token expired). */
type PageFetcher = (continueToken: string | undefined) => Promise<unknown>;

interface ListLimits {
  /** How many times an expired continue token (410) restarts the list from the beginning. */
  readonly maxRestarts: number;
  /** Upper bound on pages in one list, so a server that keeps answering with a continue token cannot loop forever. */
  readonly maxPages: number;
}

/** Lists every page, restarting from the first page when a continue token expires; never returns a partial list. */
async function collectList(
  fetchPage: PageFetcher,
  limits: ListLimits,
  operation: ClusterOperation,
): Promise<PodMutationList> {
  let lastExpiry: ClusterError | undefined;
  for (let attempt = 0; attempt <= limits.maxRestarts; attempt += 1) {
    const outcome = await collectOnce(fetchPage, limits, operation);
    if (outcome.kind === 'complete') return outcome.list;
    lastExpiry = outcome.error;
  }
  throw clusterError(
    operation,
    'gone',
    `the list continue token expired ${limits.maxRestarts + 1} times in a row; gave up after ${limits.maxRestarts} restarts`,
    { cause: lastExpiry, context: { restarts: limits.maxRestarts } },
  );
}

type ListOutcome =
  | { readonly kind: 'complete'; readonly list: PodMutationList }
  | { readonly kind: 'expired'; readonly error: ClusterError };

async function collectOnce(
  fetchPage: PageFetcher,
  limits: ListLimits,
  operation: ClusterOperation,
): Promise<ListOutcome> {
  const items: unknown[] = [];
  let resourceVersion = '';
  let pages = 0;
  try {
    for await (const page of listPages(fetchPage, limits.maxPages, operation)) {
      pages += 1;
      items.push(...page.items);
      resourceVersion = page.resourceVersion;
    }
  } catch (error) {
    // A 410 on the first page is not an expired token; only a continued list can be restarted.
    if (pages > 0 && hasReason(error, 'gone')) return { kind: 'expired', error };
    throw error;
  }
  return { kind: 'complete', list: Object.freeze({ items: Object.freeze(items), resourceVersion }) };
}

/**
 * Yields each checked page as it arrives, following continue tokens to the last page. Rejects, before yielding it,
 * a page that repeats an earlier continue token, and rejects a list that runs past `maxPages`, so a misbehaving
 * server cannot make a list loop forever.
 */
async function* listPages(
  fetchPage: PageFetcher,
  maxPages: number,
  operation: ClusterOperation,
): AsyncGenerator<ListPage, void> {
  const seenTokens = new Set<string>();
  let continueToken: string | undefined;
  for (let pageIndex = 0; pageIndex < maxPages; pageIndex += 1) {
    const page = parseListPage(await fetchPage(continueToken), pageIndex, operation);
    if (page.continueToken !== undefined && seenTokens.has(page.continueToken)) {
      const detail = `page ${pageIndex + 1} repeats an earlier continue token; the list would never end`;
      throw clusterError(operation, 'malformed', detail);
    }
    yield page;
    if (page.continueToken === undefined) return;
    seenTokens.add(page.continueToken);
    continueToken = page.continueToken;
  }
  throw clusterError(operation, 'malformed', `the list did not end within ${maxPages} pages`, {
    context: { maxPages },
  });
}

/** Checks the shape the sync relies on: a list object, its metadata.resourceVersion, items with metadata.name. */
function parseListPage(body: unknown, pageIndex: number, operation: ClusterOperation): ListPage {
  const where = `page ${pageIndex + 1} of the list`;
  const malformed = (problem: string): ClusterError =>
    clusterError(operation, 'malformed', `${where} ${problem}`, { context: { page: pageIndex + 1 } });
  if (!isJsonObject(body)) throw malformed(`is not a JSON object (got ${kindOf(body)})`);
  const metadata = body['metadata'];
  if (!isJsonObject(metadata)) throw malformed('has no list metadata');
  const resourceVersion = metadata['resourceVersion'];
  if (typeof resourceVersion !== 'string' || resourceVersion === '') {
    throw malformed('has no metadata.resourceVersion');
  }
  const continueToken = metadata['continue'];
  if (continueToken !== undefined && typeof continueToken !== 'string') {
    throw malformed(`has a metadata.continue that is not a string (got ${kindOf(continueToken)})`);
  }
  const items = body['items'];
  if (!Array.isArray(items)) throw malformed(`has an items field that is not an array (got ${kindOf(items)})`);
  items.forEach((item: unknown, index) => {
    const name = isJsonObject(item) && isJsonObject(item['metadata']) ? item['metadata']['name'] : undefined;
    if (typeof name !== 'string' || name === '') throw malformed(`has items[${index}] without metadata.name`);
  });
  return { items, resourceVersion, continueToken: continueToken === '' ? undefined : continueToken };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

export { collectList, listPages };
export type { PodMutationList };
