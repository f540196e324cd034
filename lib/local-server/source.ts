/** Rule sources of the local server: where the published rules come from (files, or a cluster in cluster-source.ts). */
import { readdirSync, watch as watchFileSystem, type FSWatcher } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { listedInvalidRules, type InvalidRule, type NormalizedRule, type RuleSnapshot } from '../api/index.ts';
import { loadRuleFiles, searchedFolder, type LoadOptions, type SkippedDocument } from '../rule-files/index.ts';
import type { ClusterBindingStore, PublishOutcome, SnapshotStore, SyncRecordStore } from '../store/index.ts';

/** What one publication of a rule source did. */
interface RulePublication {
  readonly rules: number;
  readonly invalid: readonly InvalidRule[];
  /** The valid PodPlacements published with the rules, and the invalid ones left out (files only). */
  readonly placements?: { readonly valid: number; readonly invalid: readonly InvalidRule[] };
  readonly outcome: Pick<PublishOutcome, 'published' | 'version'>;
}

/** The embedded table a rule source publishes into: its snapshots, and its sync records and cluster binding (a cluster source's syncs). */
interface RuleTable {
  readonly snapshots: Pick<SnapshotStore, 'publish'>;
  readonly records: Pick<SyncRecordStore, 'recordSync'>;
  readonly bindings: Pick<ClusterBindingStore, 'bind' | 'rebind' | 'tableName'>;
}

/** Where the local server's rules come from; called at start and on every change it signals. */
interface RuleSource {
  /** For the start message, e.g. "files examples/". */
  readonly description: string;
  /** Reads the rules and publishes them as one snapshot of the cluster. */
  publishRules(table: RuleTable, clusterId: string): Promise<RulePublication>;
  /** Calls onChange (debounced) whenever the rules may have changed, until the returned stop function runs. */
  watch(onChange: () => void): () => void;
}

/** Options of a file rule source. */
interface FileRuleSourceOptions {
  /** Quiet time after the last file event before onChange runs (default 100 ms; editors write in bursts). */
  readonly debounceMs?: number;
  /** Epoch milliseconds, for syncedAt. */
  readonly clock?: () => number;
  /** How the files are loaded (allowEmpty: a folder with no PodMutation yet). */
  readonly load?: LoadOptions;
  /** Told of the documents of other kinds each load left out. */
  readonly onSkipped?: (skipped: readonly SkippedDocument[]) => void;
  /** The capacity to publish with the rules, in its published form (Capacity.published()); absent: none. */
  readonly capacity?: RuleSnapshot['capacity'];
}

function byName<T extends { readonly name: string }>(left: T, right: T): number {
  return left.name < right.name ? -1 : left.name > right.name ? 1 : 0;
}

/** The folders of a rule path that a load reads, itself included; none for a file or a gone path. */
function foldersUnder(folder: string, found: string[] = []): string[] {
  let entries;
  try {
    entries = readdirSync(folder, { withFileTypes: true });
  } catch {
    return found;
  }
  found.push(folder);
  for (const entry of entries)
    if (entry.isDirectory() && searchedFolder(entry.name)) foldersUnder(join(folder, entry.name), found);
  return found;
}

/** The watch of one rule path: `renew` watches its folders as they are now; `stop` ends every watch. */
interface RulePathWatch {
  renew(): void;
  stop(): void;
}

/**
 * Watches one rule path through the folders that hold its files: its parent (the path itself replaced, a file path's
 * every change) and, for a folder, each folder under it. Folders, not files: an editor's atomic save, `sed -i` and
 * `mv` replace a file's inode, and a watch held on the old inode (as Node's recursive watch on Linux holds one per
 * file) hears nothing after. A folder deleted and made again is a new inode, often with the old number (so it cannot be
 * told by its number), so `renew`, called before each load, watches every folder afresh: a change after a folder's new
 * watch starts is heard, one before it is in the load that follows.
 */
function watchRulePath(path: string, onEvent: () => void): RulePathWatch {
  const absolute = resolve(path);
  let watchers: FSWatcher[] = [];
  const watchFolder = (folder: string, listener: (event: string, file: string | null) => void): void => {
    try {
      const watcher = watchFileSystem(folder, { persistent: false }, listener);
      // A watched folder that disappears is reported on the next publication, which fails to read it.
      watcher.on('error', onEvent);
      watchers.push(watcher);
    } catch {
      // Gone between the listing and the watch: its parent's watch has heard that.
    }
  };
  const stop = (): void => {
    for (const watcher of watchers) watcher.close();
    watchers = [];
  };
  const renew = (): void => {
    stop();
    watchFolder(dirname(absolute), (_event, file) => {
      if (file === null || file === basename(absolute)) onEvent();
    });
    // Listed again until a listing adds no folder: one made between a listing and its parent's watch is in the next.
    const watched = new Set<string>();
    for (let added = true; added;) {
      added = false;
      for (const folder of foldersUnder(absolute)) {
        if (watched.has(folder)) continue;
        watched.add(folder);
        added = true;
        // Every event of a folder: a new subfolder is watched at the renew before the next load.
        watchFolder(folder, onEvent);
      }
    }
  };
  renew();
  return { renew, stop };
}

/**
 * Rules read from PodMutation files and directories with loadRuleFiles: valid rules sorted by name, invalid ones
 * with their reasons, the valid PodPlacements of the same paths sorted by name, resourceVersion "" and syncedAt now. Throws what loadRuleFiles throws (unreadable path,
 * bad YAML, duplicate names) and publishes nothing then.
 */
function createFileRuleSource(paths: readonly string[], options: FileRuleSourceOptions = {}): RuleSource {
  const debounceMs = options.debounceMs ?? 100;
  const clock = options.clock ?? Date.now;
  return {
    description: `files ${paths.join(', ')}`,
    async publishRules({ snapshots }) {
      const loaded = await loadRuleFiles(paths, options.load);
      options.onSkipped?.(loaded.skipped);
      const rules: NormalizedRule[] = [...loaded.rules].sort(byName);
      const invalid: InvalidRule[] = [...loaded.invalid].sort(byName);
      const placements = [...loaded.placements.placements].sort(byName);
      const outcome = await snapshots.publish({
        rules,
        invalid: listedInvalidRules(invalid),
        ...(placements.length === 0 ? {} : { placements }),
        resourceVersion: '',
        syncedAt: new Date(clock()).toISOString(),
        ...(options.capacity === undefined ? {} : { capacity: options.capacity }),
      });
      return {
        rules: rules.length,
        invalid,
        placements: { valid: placements.length, invalid: [...loaded.placements.invalid].sort(byName) },
        outcome,
      };
    },
    watch(onChange) {
      let timer: NodeJS.Timeout | undefined;
      const watches: RulePathWatch[] = [];
      const changed = (): void => {
        for (const watch of watches) watch.renew();
        onChange();
      };
      const schedule = (): void => {
        clearTimeout(timer);
        timer = setTimeout(changed, debounceMs);
      };
      for (const path of paths) watches.push(watchRulePath(path, schedule));
      return () => {
        clearTimeout(timer);
        for (const watch of watches) watch.stop();
      };
    },
  };
}

export { createFileRuleSource };
export type { RuleSource, RulePublication, RuleTable };
