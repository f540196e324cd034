/** `--kubeconfig FILE` and `--context NAME`, and the kubeconfig kubectl uses without them ($KUBECONFIG, ~/.kube/config). */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Option } from 'commander';
import type { ClusterConfig } from '../../cluster/index.ts';
import { MalformedInputError } from '../../errors/index.ts';
import type { CliContext } from '../command.ts';

/** A cluster reached through kubeconfig files on disk. */
export type KubeconfigFile = Extract<ClusterConfig, { readonly mode: 'kubeconfigFile' }>;

/** The flags the options below add. */
export interface KubeconfigFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** `--kubeconfig FILE` and `--context NAME`, described as kubectl's: the defaults are $KUBECONFIG, then ~/.kube/config. */
export function kubeconfigOptions(what = 'the cluster'): [Option, Option] {
  return [
    new Option('--kubeconfig <file>', `the kubeconfig of ${what}`).default(
      undefined,
      '$KUBECONFIG (a list of files, merged as kubectl merges them), else ~/.kube/config',
    ),
    new Option('--context <name>', 'the kubeconfig context to use').default(undefined, 'its current-context'),
  ];
}

/**
 * The kubeconfig files kubectl would read (k8s.io/client-go/tools/clientcmd, loader.go): --kubeconfig alone; else each
 * file of $KUBECONFIG that exists, merged in order (a name or current-context set by an earlier file wins); else
 * $HOME/.kube/config. Throws a usage error naming where it looked when none is there, after `needs` (what the command
 * needs instead, when it has another source).
 */
export function kubeconfigOf(flags: KubeconfigFlags, env: CliContext['env'], needs = 'no kubeconfig'): KubeconfigFile {
  const context = flags.context === undefined ? {} : { context: flags.context };
  if (flags.kubeconfig === '') throw new MalformedInputError('--kubeconfig needs a FILE');
  if (flags.context === '') throw new MalformedInputError('--context needs a NAME');
  if (flags.kubeconfig !== undefined) return { mode: 'kubeconfigFile', path: flags.kubeconfig, ...context };
  const { found, looked } = defaultKubeconfigFiles(env);
  const [first, ...rest] = found;
  if (first === undefined)
    throw new MalformedInputError(`${needs}: --kubeconfig FILE is not given and ${looked}`, {
      context: { flag: '--kubeconfig' },
    });
  return { mode: 'kubeconfigFile', path: first, ...(rest.length === 0 ? {} : { mergedWith: rest }), ...context };
}

/** The kubeconfig files that exist among kubectl's defaults, and a phrase saying where it looked. */
function defaultKubeconfigFiles(env: CliContext['env']): { found: string[]; looked: string } {
  const list = env['KUBECONFIG'];
  if (list !== undefined && list !== '') {
    const named = [...new Set(list.split(delimiter).filter((path) => path !== ''))];
    return { found: named.filter((path) => existsSync(path)), looked: `no file of $KUBECONFIG exists (${list})` };
  }
  const home = env['HOME'];
  if (home === undefined || home === '') return { found: [], looked: '$KUBECONFIG and $HOME are not set' };
  const path = join(home, '.kube', 'config');
  return { found: existsSync(path) ? [path] : [], looked: `$KUBECONFIG is not set and ${path} does not exist` };
}
