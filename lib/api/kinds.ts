/**
 * The workload kind a `kinds` entry likely means when it is not one as Kubernetes spells it: another case, a plural,
 * kubectl's short name, or a misspelling. Pure. A kind admission never resolves stays allowed (another controller's
 * owner kind is matched as is, docs/api.md "Workload resolution"); only a near miss of a known one is named.
 */
import type { Issue } from '../json/index.ts';

// The kinds admission resolves a Pod to, or a controller owner it takes as is (docs/api.md "Workload resolution"),
// Argo Rollouts' Rollout among them.
const WORKLOAD_KINDS = [
  'Pod',
  'Deployment',
  'ReplicaSet',
  'StatefulSet',
  'DaemonSet',
  'Job',
  'CronJob',
  'ReplicationController',
  'Rollout',
] as const;

// kubectl's short names of those kinds (`kubectl api-resources`; `ro` from Argo Rollouts' CRD).
const SHORT_NAMES: Readonly<Record<string, string>> = {
  po: 'Pod',
  deploy: 'Deployment',
  rs: 'ReplicaSet',
  sts: 'StatefulSet',
  ds: 'DaemonSet',
  cj: 'CronJob',
  rc: 'ReplicationController',
  ro: 'Rollout',
};

/**
 * The edits (insert, delete, substitute, swap two neighbours) between two strings: the optimal string alignment
 * distance, so that `Deploymnet` is one edit from `deployment`, not two.
 */
function editDistance(left: string, right: string): number {
  const rows: number[][] = Array.from({ length: left.length + 1 }, (_, row) =>
    Array.from({ length: right.length + 1 }, (_, column) => (row === 0 ? column : column === 0 ? row : 0)),
  );
  for (let row = 1; row <= left.length; row += 1) {
    for (let column = 1; column <= right.length; column += 1) {
      const cost = left[row - 1] === right[column - 1] ? 0 : 1;
      let best = Math.min(rows[row - 1]![column]! + 1, rows[row]![column - 1]! + 1, rows[row - 1]![column - 1]! + cost);
      if (row > 1 && column > 1 && left[row - 1] === right[column - 2] && left[row - 2] === right[column - 1])
        best = Math.min(best, rows[row - 2]![column - 2]! + 1);
      rows[row]![column] = best;
    }
  }
  return rows[left.length]![right.length]!;
}

// Edits a misspelling may have: two in a long name, one in a three-letter one, where two would make Pod of Job and Job
// of another controller's TFJob.
function allowedEdits(kind: string): number {
  return kind.length <= 4 ? 1 : 2;
}

/** What a kind that is no workload kind as written likely means, and why; undefined for a known kind or none near. */
function meantKind(kind: string): { readonly meant: readonly string[]; readonly why: string } | undefined {
  if ((WORKLOAD_KINDS as readonly string[]).includes(kind)) return undefined;
  const lower = kind.toLowerCase();
  const known = (name: string): string | undefined => WORKLOAD_KINDS.find((each) => each.toLowerCase() === name);
  const sameLetters = known(lower);
  if (sameLetters !== undefined) return { meant: [sameLetters], why: `is ${sameLetters} in another case` };
  const singular = known(lower.replace(/s$/, '')) ?? known(lower.replace(/es$/, ''));
  if (singular !== undefined) return { meant: [singular], why: `is the plural of ${singular}` };
  const short = SHORT_NAMES[lower];
  if (short !== undefined) return { meant: [short], why: `is kubectl's short name of ${short}` };
  const distances = WORKLOAD_KINDS.map((each) => ({ each, edits: editDistance(lower, each.toLowerCase()) })).filter(
    ({ each, edits }) => edits <= allowedEdits(each),
  );
  if (distances.length === 0) return undefined;
  const fewest = Math.min(...distances.map(({ edits }) => edits));
  const meant = distances.filter(({ edits }) => edits === fewest).map(({ each }) => each);
  return { meant, why: `looks like a misspelling of ${meant.join(' or ')}` };
}

/**
 * Warnings for `kinds` entries that are near misses of a workload kind (`deployment`, `Deployments`, `deploy`,
 * `Deploymnet`): the engine compares kinds exactly, so such an entry matches no Pod of the kind meant.
 */
export function kindWarnings(kinds: readonly string[] | undefined): Issue[] {
  return (kinds ?? []).flatMap((kind, index) => {
    const near = meantKind(kind);
    if (near === undefined) return [];
    const meant = near.meant.join(' or ');
    return [
      {
        field: `spec.workloadSelector.kinds[${index}]`,
        reason: `"${kind}" ${near.why}, so it never matches ${meant}: kinds are compared exactly as Kubernetes writes an owner's kind (singular, case-sensitive); write ${meant}, or keep "${kind}" if it is another controller's kind`,
      },
    ];
  });
}
