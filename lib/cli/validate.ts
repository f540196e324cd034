import type { Command } from 'commander';
import {
  additionsStrand,
  describeIssues,
  placementWarnings,
  POD_MUTATION_KIND,
  POD_PLACEMENT_KIND,
  ruleWarnings,
  type InvalidRule,
  type NormalizedRule,
  type PlacementMode,
} from '../api/index.ts';
import type { Capacity } from '../capacity/index.ts';
import { loadRuleFiles, type LoadedPlacements } from '../rule-files/index.ts';
import { defineCommand, EXIT, onRun, type CliContext } from './command.ts';
import { readInput, writeLine } from './io.ts';
import { outputOption, printDocument, type OutputFormat } from './output.ts';
import { capacityOption, fitCaveatLine, readCapacityFiles, type CapacityFlags } from './options/capacity.ts';
import { allowEmptyOption, excludeOption, reportSkippedDocuments, ruleLoadOptions } from './options/rules.ts';

interface Issue {
  readonly field: string;
  readonly reason: string;
}
type Issues = readonly Issue[];

interface ValidateFlags extends CapacityFlags {
  readonly output: OutputFormat;
  readonly allowEmpty?: boolean;
  readonly exclude?: string[];
}

/** What a valid rule and a valid PodPlacement of `validate -o json|yaml` both say (docs/cli.md). */
interface ValidResource {
  readonly name: string;
  readonly source: string;
  readonly valid: true;
  readonly enabled: boolean;
  readonly priority: number;
  readonly warnings: Issues;
}

/** A rule or PodPlacement of `validate -o json|yaml` that is invalid. */
interface InvalidResource {
  readonly name: string;
  readonly source: string;
  readonly valid: false;
  readonly issues: Issues;
}

/** One rule of `validate -o json|yaml`: the documented, stable shape. */
type ValidatedRule = (ValidResource & { readonly enforcement: string }) | InvalidResource;

/** One PodPlacement of `validate -o json|yaml`, beside the rules. */
type ValidatedPlacement = (ValidResource & { readonly mode: PlacementMode }) | InvalidResource;

function invalidResource(source: string, invalid: InvalidRule): InvalidResource {
  return {
    name: invalid.name,
    source,
    valid: false,
    issues: invalid.issues.map(({ field, reason }) => ({ field, reason })),
  };
}

/** The PodPlacements of the paths, each with its verdict and warnings. */
function validatedPlacements(placements: LoadedPlacements): ValidatedPlacement[] {
  return placements.loaded.map(({ source, verdict, resource }) =>
    verdict.valid
      ? {
          name: verdict.placement.name,
          source,
          valid: true,
          enabled: verdict.placement.enable,
          priority: verdict.placement.priority,
          mode: verdict.placement.mode,
          warnings: placementWarnings(verdict.placement, resource).map(({ field, reason }) => ({ field, reason })),
        }
      : invalidResource(source, verdict.invalid),
  );
}

/** The table lines of one rule or PodPlacement (`kind` names a PodPlacement; a rule is shown without one). */
function resourceLines(
  resource: ValidatedRule | ValidatedPlacement,
  kind: typeof POD_PLACEMENT_KIND | undefined,
): string[] {
  const shown = kind === undefined ? resource.name : `${kind} ${resource.name}`;
  const described = (issues: Issues) => describeIssues({ name: resource.name, issues }, kind ?? POD_MUTATION_KIND);
  if (!resource.valid)
    return [`invalid  ${shown} (${resource.source})`, ...described(resource.issues).map((line) => `  ${line}`)];
  const mode = 'mode' in resource ? `, ${resource.mode}` : '';
  return [
    `valid    ${shown} (${resource.source}; ${resource.enabled ? 'enabled' : 'disabled'}, priority ${resource.priority}${mode})`,
    ...described(resource.warnings).map((line) => `  warning: ${line}`),
  ];
}

/**
 * The warning for a rule whose additions fit no Node and no NodePool of the given capacity, judged on node labels
 * (every taint tolerated: the Pods' own tolerations are not known here); none without a capacity.
 */
function capacityWarnings(rule: NormalizedRule, capacity: Capacity | undefined): Issue[] {
  const reason = capacity === undefined ? undefined : additionsStrand(rule, capacity);
  return reason === undefined ? [] : [{ field: 'spec.mutationAdd', reason }];
}

/**
 * Reports every rule of the paths as valid (with what it likely does not mean, as warnings) or invalid (field path and
 * reason), past any file that cannot be read or parsed: those are reported on stderr (and in -o json) and exit 2.
 */
async function validate(paths: readonly string[], flags: ValidateFlags, { streams }: CliContext): Promise<number> {
  const { output } = flags;
  const capacity = flags.capacity === undefined ? undefined : await readCapacityFiles(flags.capacity, streams);
  const {
    loaded,
    placements: loadedPlacements,
    skipped,
    unreadable,
  } = await loadRuleFiles(paths, {
    ...ruleLoadOptions(flags),
    keepGoing: true,
    stdin: () => readInput('-', streams),
  });
  reportSkippedDocuments(skipped, streams);
  for (const { error } of unreadable) writeLine(streams.stderr, `podmutation validate: ${error.message}`);
  const rules: ValidatedRule[] = loaded.map(({ source, verdict, resource }) =>
    verdict.valid
      ? {
          name: verdict.rule.name,
          source,
          valid: true,
          enabled: verdict.rule.enable,
          priority: verdict.rule.priority,
          enforcement: verdict.rule.enforcement,
          warnings: [...ruleWarnings(verdict.rule, resource), ...capacityWarnings(verdict.rule, capacity)],
        }
      : invalidResource(source, verdict.invalid),
  );
  const placements = validatedPlacements(loadedPlacements);
  const all = [...rules, ...placements];
  const invalid = all.filter((resource) => !resource.valid).length;
  const warnings = all.reduce((total, resource) => total + (resource.valid ? resource.warnings.length : 0), 0);
  if (output !== 'table')
    printDocument(streams.stdout, output, {
      rules,
      placements,
      valid: all.length - invalid,
      invalid,
      unreadable: unreadable.map(({ source, error }) => ({ source, message: error.message })),
    });
  else {
    for (const rule of rules) for (const line of resourceLines(rule, undefined)) writeLine(streams.stdout, line);
    for (const placement of placements)
      for (const line of resourceLines(placement, POD_PLACEMENT_KIND)) writeLine(streams.stdout, line);
    if (capacity !== undefined) writeLine(streams.stdout, fitCaveatLine());
    const notRead =
      unreadable.length === 0 ? '' : `, ${unreadable.length} file${unreadable.length === 1 ? '' : 's'} not read`;
    writeLine(
      streams.stdout,
      `${all.length - invalid} valid, ${invalid} invalid${warnings === 0 ? '' : `, ${warnings} warning${warnings === 1 ? '' : 's'}`}${notRead}`,
    );
  }
  if (unreadable.length > 0) return EXIT.usage;
  return invalid === 0 ? EXIT.ok : EXIT.findings;
}

/** `podmutation validate`. */
export function registerValidate(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'validate', {
    summary:
      "check PodMutation and PodPlacement files as the sync checks the cluster's: each valid, or invalid with field path and reason",
    examples: [
      'podmutation validate examples/rules',
      'podmutation validate rules/ -o json',
      'podmutation validate . --exclude charts',
      'kustomize build overlays/prod | podmutation validate -',
    ],
    exits: {
      0: 'every rule valid, with warnings or not',
      1: 'some rule or PodPlacement invalid',
      2: 'usage error, a file that cannot be read or parsed (the others are still checked), or paths that hold no PodMutation and no PodPlacement',
    },
  });
  command
    .argument(
      '<paths...>',
      'PodMutation and PodPlacement files (YAML or JSON, multi-document) or folders of them; - reads standard input',
    )
    .addOption(outputOption())
    .addOption(allowEmptyOption())
    .addOption(excludeOption())
    .addOption(capacityOption("each rule's additions"));
  onRun<ValidateFlags, [string[]]>(command, (flags, [paths]) => validate(paths, flags, context));
}
