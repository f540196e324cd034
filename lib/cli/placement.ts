import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { MalformedInputError, StoreError } from '../errors/index.ts';
import { previewInput } from '../values/index.ts';
import { parsePlacementPolicy, workloadKey, type PlacementPolicy } from '../placement/index.ts';
import { createPlacementStore, type PlacementStore } from '../store/index.ts';
import { writeLine, type CliStreams } from './io.ts';
import { STORE_TARGET_OPTIONS, resolveStoreTarget, targetClient, type StoreTarget } from './options/store-target.ts';

type Action = 'set' | 'get' | 'list' | 'delete';

type Workload = Pick<PlacementPolicy, 'namespace' | 'kind' | 'name'>;

/** One validated invocation: what to do, and to which policy or workload. */
type PlacementRequest =
  | { readonly action: 'set'; readonly policy: PlacementPolicy }
  | { readonly action: 'get' | 'delete'; readonly workload: Workload }
  | { readonly action: 'list' };

/** The flags as parseArgs returns them. */
type Flags = Readonly<Record<string, string | undefined>>;

const ACTIONS: readonly Action[] = ['set', 'get', 'list', 'delete'];
const WORKLOAD_FLAGS = ['namespace', 'kind', 'name'] as const;
const POLICY_FLAGS = ['mode', 'spot-percent'] as const;

/** Fails naming the flags an action needs but did not get, and those it does not take. */
function checkFlags(action: Action, flags: Flags): void {
  const needed: readonly string[] =
    action === 'set' ? [...WORKLOAD_FLAGS, 'mode'] : action === 'list' ? [] : WORKLOAD_FLAGS;
  const allowed: readonly string[] = action === 'set' ? [...WORKLOAD_FLAGS, ...POLICY_FLAGS] : needed;
  const missing = needed.filter((flag) => flags[flag] === undefined);
  if (missing.length > 0) {
    throw new MalformedInputError(`${action} needs ${missing.map((flag) => `--${flag}`).join(', ')}`);
  }
  const extra = [...WORKLOAD_FLAGS, ...POLICY_FLAGS].filter((flag) => flags[flag] !== undefined && !allowed.includes(flag));
  if (extra.length > 0) {
    throw new MalformedInputError(`${action} does not take ${extra.map((flag) => `--${flag}`).join(', ')}`);
  }
}

/** The policy the set flags describe, through the one validator of policies. */
function policyOf(flags: Flags): PlacementPolicy {
  const spotPercent = flags['spot-percent'];
  return parsePlacementPolicy(
    {
      namespace: flags.namespace,
      kind: flags.kind,
      name: flags.name,
      mode: flags.mode,
      // Digits become a number; anything else is passed on as text so the validator reports it as given.
      ...(spotPercent === undefined ? {} : { spotPercent: /^\d+$/.test(spotPercent) ? Number(spotPercent) : spotPercent }),
    },
    'placement policy',
  );
}

/** The workload the get and delete flags name, checked as parsePlacementPolicy checks it (any valid mode will do). */
function workloadOf(flags: Flags): Workload {
  const { namespace, kind, name } = parsePlacementPolicy({ namespace: flags.namespace, kind: flags.kind, name: flags.name, mode: 'NonSpot' }, 'workload');
  return { namespace, kind, name };
}

/** The request the arguments describe; every check runs before the store is touched. */
function requestOf(action: Action, flags: Flags): PlacementRequest {
  checkFlags(action, flags);
  if (action === 'set') return { action, policy: policyOf(flags) };
  if (action === 'list') return { action };
  return { action, workload: workloadOf(flags) };
}

async function run(request: PlacementRequest, target: StoreTarget, store: PlacementStore, streams: CliStreams): Promise<number> {
  const { clusterId } = target;
  const missing = (workload: string): number => {
    writeLine(
      streams.stderr,
      `podmutation placement ${request.action}: no placement policy for workload ${workload} in cluster "${clusterId}" of table "${target.tableName}"`,
    );
    return 1;
  };
  switch (request.action) {
    case 'set': {
      const write = await store.setPlacement(clusterId, request.policy);
      writeLine(streams.stdout, JSON.stringify({ ...write, policy: request.policy }));
      return 0;
    }
    case 'list':
      // A YAML list, so the output is itself a `--placements FILE` for review, explain and serve.
      streams.stdout.write(stringify(await store.listPlacements(clusterId)));
      return 0;
    case 'get':
    case 'delete': {
      const { namespace, kind, name } = request.workload;
      const workload = workloadKey(namespace, kind, name);
      if (request.action === 'get') {
        const policy = await store.getPlacement(clusterId, namespace, kind, name);
        if (policy === undefined) return missing(workload);
        streams.stdout.write(stringify(policy));
        return 0;
      }
      const write = await store.deletePlacement(clusterId, namespace, kind, name);
      if (!write.changed) return missing(workload);
      writeLine(streams.stdout, JSON.stringify({ ...write, workload }));
      return 0;
    }
  }
}

/**
 * `podmutation placement set|get|list|delete [--namespace NS --kind KIND --name NAME] [--mode MODE] [--spot-percent P]
 * TARGET`: the operator's placement policies in the rules table TARGET names (--stage, --table with --cluster-id,
 * or --dynamodb-endpoint; see options/store-target.ts; the table is created first only in a local DynamoDB).
 * set and delete print one JSON line ({changed, version, ...}); get prints the policy and list every
 * policy as YAML. Exit 0 on success, 1 when get or delete finds no policy or the store fails, 2 for invalid input.
 */
export async function placementCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      namespace: { type: 'string' },
      kind: { type: 'string' },
      name: { type: 'string' },
      mode: { type: 'string' },
      'spot-percent': { type: 'string' },
      ...STORE_TARGET_OPTIONS,
    },
    allowPositionals: true,
  });
  const [action, ...rest] = positionals;
  if (action === undefined || !ACTIONS.includes(action as Action) || rest.length > 0) {
    throw new MalformedInputError(`expected exactly one action of ${ACTIONS.join(', ')} (got ${positionals.map((word) => previewInput(word)).join(' ') || 'none'})`);
  }
  const request = requestOf(action as Action, values);
  const target = await resolveStoreTarget(values);
  let client: Awaited<ReturnType<typeof targetClient>> | undefined;
  try {
    client = await targetClient(target);
    return await run(request, target, createPlacementStore({ client, tableName: target.tableName }), streams);
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    writeLine(streams.stderr, `podmutation placement ${action}: ${error.message}`);
    return 1;
  } finally {
    client?.destroy();
  }
}
