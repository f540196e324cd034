/** The `--rules PATH` option (repeatable) and the rules it loads, each invalid rule reported on stderr. */
import { Option } from 'commander';
import { describeIssues, POD_PLACEMENT_KIND, type InvalidRule } from '../../api/index.ts';
import { MalformedInputError } from '../../errors/index.ts';
import {
  loadRuleFiles,
  skippedNote,
  type LoadedRules,
  type LoadOptions,
  type SkippedDocument,
} from '../../rule-files/index.ts';
import { collect, required } from '../command.ts';
import { writeLine, type CliStreams } from '../io.ts';

/** `--rules PATH`, repeatable: a PodMutation and PodPlacement file (YAML, multi-document or JSON) or a folder of them; required unless `optional`. */
export function rulesOption(options: { readonly optional?: boolean; readonly description?: string } = {}): Option {
  const option = new Option(
    '--rules <path>',
    options.description ??
      'a file of PodMutations and PodPlacements (YAML or JSON, multi-document) or a folder of them; repeatable',
  ).argParser(collect);
  return options.optional === true ? option : required(option);
}

/** `--allow-empty`: paths that hold nothing to read are accepted (by default they are a usage error). */
export function allowEmptyOption(what = 'rules paths that hold no PodMutation and no PodPlacement'): Option {
  return new Option('--allow-empty', `accept ${what} (by default that is an error: a wrong path must not pass)`);
}

/** `--exclude GLOB`, repeatable: files and folders of the rules paths not to read. */
export function excludeOption(): Option {
  return new Option(
    '--exclude <glob>',
    'a file or folder of the rules paths not to read, matched against its path under the rules path and its name ' +
      '(* any part of a name, ** any folders, ? one character); repeatable. Hidden folders and node_modules are never read',
  ).argParser(collect);
}

/** The rules options of a command's flags (--allow-empty, --exclude), as load options. */
export function ruleLoadOptions(flags: {
  readonly allowEmpty?: boolean;
  readonly exclude?: readonly string[];
}): LoadOptions {
  return { allowEmpty: flags.allowEmpty === true, exclude: flags.exclude ?? [] };
}

/**
 * Loads rules and PodPlacements for a command, reporting each invalid one and each document of another kind on stderr
 * (they are skipped).
 */
export async function loadRulesReportingInvalid(
  paths: readonly string[] | undefined,
  streams: CliStreams,
  options: LoadOptions = {},
): Promise<LoadedRules> {
  if (paths === undefined || paths.length === 0) throw new MalformedInputError('at least one --rules PATH is required');
  const loaded = await loadRuleFiles(paths, options);
  reportSkippedDocuments(loaded.skipped, streams);
  reportInvalidRules(loaded.invalid, streams);
  reportInvalidPlacements(loaded.placements.invalid, streams);
  return loaded;
}

/** Whether some rule or PodPlacement of the paths is invalid (skipped, as the sync skips it): a finding. */
export function someInvalid(loaded: Pick<LoadedRules, 'invalid' | 'placements'>): boolean {
  return loaded.invalid.length > 0 || loaded.placements.invalid.length > 0;
}

/** One line on stderr per document of a rules path that is no PodMutation: `kustomization.yaml: kind Kustomization, not a PodMutation; skipped`. */
export function reportSkippedDocuments(skipped: readonly SkippedDocument[], streams: CliStreams): void {
  for (const document of skipped) writeLine(streams.stderr, skippedNote(document));
}

/** One line on stderr per issue of each invalid rule, which the command skips as the sync would. */
export function reportInvalidRules(invalid: readonly InvalidRule[], streams: CliStreams): void {
  for (const rule of invalid) {
    for (const line of describeIssues(rule)) writeLine(streams.stderr, `invalid rule skipped: ${line}`);
  }
}

/** One line on stderr per issue of each invalid PodPlacement, which the command skips as the sync would. */
export function reportInvalidPlacements(invalid: readonly InvalidRule[], streams: CliStreams): void {
  for (const placement of invalid) {
    for (const line of describeIssues(placement, POD_PLACEMENT_KIND))
      writeLine(streams.stderr, `invalid placement skipped: ${line}`);
  }
}
