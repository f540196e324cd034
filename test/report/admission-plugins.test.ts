/**
 * The report over what a real API server stored (test/fixtures/report/admission-plugins: the workloads of
 * test/real-cluster/admission-plugins.test.ts, whose Pods ExtendedResourceToleration, RuntimeClass,
 * DefaultTolerationSeconds, PodNodeSelector, PodTolerationRestriction and a MutatingAdmissionPolicy changed before the
 * webhook admitted them): current under the rules they were admitted with, pending for what a rule change changes.
 */
import { describe, expect, it } from 'vitest';
import type { NormalizedRule } from '../../lib/api/index.ts';
import { compileRuleSet } from '../../lib/engine/index.ts';
import { createReport, type MigrationReport } from '../../lib/report/index.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import { KEYLESS_STAMPS } from '../../lib/stamp/index.ts';
import { rule } from '../support/builders.ts';
import { fixturePath, fixtureText } from '../support/fixtures.ts';
import { type ReportOptions } from '../../lib/report/builder.ts';

type Item = { kind: string; metadata: { name: string; namespace?: string }; [field: string]: unknown };

function stored(): Item[] {
  return (JSON.parse(fixtureText('report/admission-plugins/cluster.json')) as { items: Item[] }).items;
}

/** The report of the items under the rules of the named folders, as `podmutation report` folds them. */
async function reportOf(
  items: readonly Item[],
  folders: readonly string[],
  more: readonly NormalizedRule[] = [],
  options: ReportOptions = { stamps: KEYLESS_STAMPS },
): Promise<MigrationReport> {
  const { rules } = await loadRuleFiles(folders.map((folder) => fixturePath(`report/admission-plugins/${folder}`)));
  const builder = createReport(compileRuleSet([...rules, ...more]), options);
  items.forEach((item, index) => item.kind !== 'Pod' && builder.addOwner(item, `items[${index}]`));
  items.forEach((item, index) => item.kind === 'Pod' && builder.addPod(item, `items[${index}]`));
  return builder.result();
}

function changes(result: MigrationReport): Record<string, string> {
  return Object.fromEntries(result.workloads.map((row) => [`${row.namespace}/${row.name}`, row.change]));
}

const SPOT_CHANGE = 'tolerations: -example.com/spot:NoSchedule op=Exists +example.com/spot op=Exists';

describe('the report of Pods admission plugins changed before the webhook', () => {
  it('reads every Pod admitted under the current rules current', async () => {
    const result = await reportOf(stored(), ['current']);

    expect(result.totals).toEqual({ pods: 7, unaffected: 0, current: 7, pending: 0, denied: 0 });
    expect(result.workloads.map((row) => row.rules)).toEqual([
      ['gpu-pool'],
      ['sandbox-spot'],
      ['restricted-spot'],
      ['sandbox-spot'],
      ['sandbox-spot'],
    ]);
  });

  it('reads pending only what the changed rules change', async () => {
    const result = await reportOf(stored(), ['changed']);

    expect(changes(result)).toEqual({
      'ml/trainer': 'nodeSelector: -example.com/node-pool=gpu +example.com/node-pool=gpu-h100',
      'policy/worker': SPOT_CHANGE,
      'restricted/api': '',
      'sandbox/cache': SPOT_CHANGE,
      'sandbox/renderer': SPOT_CHANGE,
    });
    expect(result.totals).toMatchObject({ current: 1, pending: 6 });
  });

  it('reads them the same without the RuntimeClass, from what its Pods arrived with', async () => {
    const withoutClasses = stored().filter((item) => item.kind !== 'RuntimeClass');

    expect(await reportOf(withoutClasses, ['current'])).toEqual(await reportOf(stored(), ['current']));
    expect(await reportOf(withoutClasses, ['changed'])).toEqual(await reportOf(stored(), ['changed']));
  });

  it('reads pending what a changed RuntimeClass now adds to the Pods that name it', async () => {
    // gvisor selects amd64 Nodes too, and no longer tolerates its taint.
    const items = stored().map((item) =>
      item.kind === 'RuntimeClass'
        ? { ...item, scheduling: { nodeSelector: { 'example.com/sandbox': 'gvisor', 'kubernetes.io/arch': 'amd64' } } }
        : item,
    );

    const result = await reportOf(items, ['current']);

    // The toleration it no longer adds cannot be told from one the namespace adds: the report keeps it (docs/api.md).
    const moved = 'nodeSelector: +kubernetes.io/arch=amd64';
    expect(changes(result)).toMatchObject({ 'sandbox/cache': moved, 'sandbox/renderer': moved });
    expect(result.totals).toMatchObject({ pending: 4, current: 3 });
  });

  it('reads denied a rule the RuntimeClass or the namespace’s node selector would make the API server refuse', async () => {
    const result = await reportOf(stored(), ['current', 'conflicting']);

    const denied = (plugin: string, message: string) =>
      `denied: the API server's ${plugin} admission plugin would refuse the Pod: ${message}`;
    const sandbox = denied(
      'RuntimeClass',
      'conflict: runtimeClass.scheduling.nodeSelector[example.com/sandbox] = gvisor; pod.spec.nodeSelector[example.com/sandbox] = kata',
    );
    expect(changes(result)).toEqual({
      'ml/trainer': '',
      'policy/worker': '',
      'restricted/api': denied(
        'PodNodeSelector',
        'pod node label selector conflicts with its namespace node label selector (example.com/node-pool=merged, as the running Pod arrived at the webhook)',
      ),
      'sandbox/cache': sandbox,
      'sandbox/renderer': sandbox,
    });
    expect(result.totals).toMatchObject({ denied: 5, current: 2 });
  });

  it.each([
    ['ml', 'nvidia.com/gpu', 'ExtendedResourceToleration'],
    ['sandbox', 'example.com/sandbox', 'RuntimeClass'],
    ['ml', 'node.kubernetes.io/not-ready', 'DefaultTolerationSeconds'],
  ])(
    'reads current the Pods of %s under a rule removing the %s toleration %s adds again after the webhook',
    async (namespace, key) => {
      const removing = rule('drop-toleration', {
        enable: true,
        workloadSelector: { namespaces: [namespace] },
        mutationRemove: { tolerations: { keys: [key] } },
      });

      const result = await reportOf(stored(), ['current'], [removing]);

      expect(result.totals).toMatchObject({ pending: 0, denied: 0 });
      expect(result.rules.find((item) => item.name === 'drop-toleration')?.matched).toBeGreaterThan(0);
    },
  );
});
