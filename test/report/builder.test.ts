/** The report builder: each running Pod against the Pod a rollout would create, folded into counts. */
import { describe, expect, it } from 'vitest';
import { compileRuleSet, type RuleSet } from '../../lib/engine/index.ts';
import { createPlacementStep } from '../../lib/placement/index.ts';
import { createReport, type MigrationReport, type ReportWorkload } from '../../lib/report/index.ts';
import { rule } from '../support/builders.ts';
import { loadRuleFiles } from '../../lib/rule-files/index.ts';
import {
  admittedCheckoutPods,
  clusterList,
  findItem,
  fixtureList,
  fixtureRules,
  ledgerWith,
  MOVE_LEDGER_SPEC,
  rulePaths,
  type KubectlList,
} from './support.ts';
import { type ReportOptions } from '../../lib/report/builder.ts';
import { type Verdict } from '../../lib/report/types.ts';

interface Folded {
  readonly verdicts: Record<string, Verdict | undefined>;
  readonly report: MigrationReport;
}

/** Folds a List as the CLI does: every owner, then every Pod. */
function fold(list: KubectlList, rules: RuleSet, options: ReportOptions = {}): Folded {
  const builder = createReport(rules, options);
  list.items.forEach((item, index) => {
    if (item.kind !== 'Pod') builder.addOwner(item, `items[${index}]`);
  });
  const verdicts: Record<string, Verdict | undefined> = {};
  list.items.forEach((item, index) => {
    if (item.kind === 'Pod')
      verdicts[(item.metadata as { name: string }).name] = builder.addPod(item, `items[${index}]`);
  });
  return { verdicts, report: builder.result() };
}

function workload(report: MigrationReport, kind: string, name: string): ReportWorkload | undefined {
  return report.workloads.find((item) => item.kind === kind && item.name === name);
}

function without(list: KubectlList, kind: string, name: string): KubectlList {
  return {
    ...list,
    items: list.items.filter((item) => !(item.kind === kind && (item.metadata as { name: string }).name === name)),
  };
}

describe('the report builder', () => {
  it('gives every running Pod of the fixture cluster its verdict', async () => {
    const { verdicts } = fold(await clusterList(), await fixtureRules());

    expect(verdicts).toEqual({
      'checkout-7d9f8b6c5d-h2k9d': 'current',
      'checkout-7d9f8b6c5d-r7x4m': 'current',
      'web-5d8f7c9b4-k8x2q': 'pending',
      'web-5d8f7c9b4-p4m7z': 'pending',
      'storefront-6b7c8d9f5-w2n8d': 'pending',
      'ledger-0': 'denied',
      'ledger-1': 'denied',
      'nightly-report-29412345-x9k2m': 'pending',
      'node-exporter-q7w2x': 'unaffected',
      'api-84c6b5d7f9-zt5vb': 'unaffected',
      toolbox: 'pending',
    });
  });

  it('counts Pods the engine admitted under the same rules as current', async () => {
    const { report } = fold(await clusterList(), await fixtureRules());

    expect(workload(report, 'Deployment', 'checkout')).toEqual({
      namespace: 'production',
      kind: 'Deployment',
      name: 'checkout',
      pods: 2,
      current: 2,
      pending: 0,
      denied: 0,
      rules: ['migrate-legacy-pool', 'audit-spot-checkout'],
      change: '',
      fit: { kind: 'unknown', reason: 'not judged: no capacity given' },
    });
  });

  it('counts the same Pods as pending once a rule changes what it adds', async () => {
    const { report } = fold(await clusterList(), await fixtureRules('changed'));

    expect(workload(report, 'Deployment', 'checkout')).toMatchObject({
      pending: 2,
      change:
        'required node affinity (terms ORed): -{example.com/node-pool In [merged], kubernetes.io/arch In [amd64]} +{example.com/node-pool In [merged-2024], kubernetes.io/arch In [amd64]}',
    });
  });

  it("counts an audited rule's matches, and no current or pending Pods for it", async () => {
    const { report } = fold(await clusterList(), await fixtureRules());

    expect(report.rules.find((item) => item.name === 'audit-spot-checkout')).toEqual({
      name: 'audit-spot-checkout',
      enforcement: 'audit',
      matched: 2,
      current: 0,
      pending: 0,
      unschedulable: 0,
    });
  });

  it('judges Pods by the enforced rules only: what an audited rule would add leaves them current', async () => {
    const { verdicts } = fold(await clusterList(), await fixtureRules());

    expect([verdicts['checkout-7d9f8b6c5d-h2k9d'], verdicts['checkout-7d9f8b6c5d-r7x4m']]).toEqual([
      'current',
      'current',
    ]);
  });

  it('finds, with every rule audited, that a rollout would undo what enforced rules did', async () => {
    const { report } = fold(await clusterList(), await fixtureRules(), { enforcement: 'audit' });

    expect(report.rules.every((item) => item.enforcement === 'audit' && item.current === 0 && item.pending === 0)).toBe(
      true,
    );
    expect(workload(report, 'Deployment', 'checkout')?.pending).toBe(2);
    expect(workload(report, 'Deployment', 'web')?.current).toBe(2);
  });

  it('counts the rules in application order, enabled ones only', async () => {
    const loaded = (await loadRuleFiles(rulePaths())).rules;
    const rules = compileRuleSet([
      ...loaded,
      rule('drafted', { enable: false, mutationAdd: { nodeSelector: { a: 'b' } } }),
    ]);

    expect(fold(await clusterList(), rules).report.rules.map((item) => item.name)).toEqual([
      'tag-payments',
      'fan-out-zones',
      'batch-to-spot-pool',
      'migrate-legacy-pool',
      'audit-spot-checkout',
    ]);
  });

  it('counts DaemonSet Pods in the totals as unaffected and lists no DaemonSet', async () => {
    const { report } = fold(
      await clusterList(),
      compileRuleSet([
        rule('everything', { workloadSelector: { all: true }, mutationAdd: { nodeSelector: { a: 'b' } } }),
      ]),
    );

    expect(report.workloads.some((item) => item.kind === 'DaemonSet')).toBe(false);
    expect(report.totals).toMatchObject({ pods: 11, unaffected: 1 });
  });

  it('lists only the workloads some rule matches, by namespace, kind and name', async () => {
    const { report } = fold(await clusterList(), await fixtureRules());

    expect(report.workloads.map((item) => `${item.namespace}/${item.kind}/${item.name}`)).toEqual([
      'batch/CronJob/nightly-report',
      'production/Deployment/checkout',
      'production/Deployment/web',
      'production/Pod/toolbox',
      'production/Rollout/storefront',
      'production/StatefulSet/ledger',
    ]);
  });

  it('gives the message of a denial as the change', async () => {
    const { report } = fold(await clusterList(), await fixtureRules());

    expect(workload(report, 'StatefulSet', 'ledger')).toMatchObject({
      denied: 2,
      change:
        'denied: PodMutation "fan-out-zones": required node selector terms after combining would be 72, above the limit of 64',
    });
  });

  it('totals every Pod by verdict', async () => {
    expect(fold(await clusterList(), await fixtureRules()).report.totals).toEqual({
      pods: 11,
      unaffected: 2,
      current: 2,
      pending: 5,
      denied: 2,
    });
  });

  it("builds a CronJob's Pod from its job template, at the running Job's scheduled minute", async () => {
    const { report } = fold(await clusterList(), await fixtureRules());

    expect(workload(report, 'CronJob', 'nightly-report')).toMatchObject({
      pending: 1,
      change:
        'nodeSelector: -example.com/node-pool=batch-ondemand +example.com/node-pool=batch-spot; tolerations: +example.com/spot:NoSchedule op=Exists',
    });
  });

  it('judges a Pod whose owner is not in the input as it runs', async () => {
    const { report } = fold(without(await clusterList(), 'ReplicaSet', 'web-5d8f7c9b4'), await fixtureRules());

    expect(workload(report, 'Deployment', 'web')).toMatchObject({ pods: 2, pending: 2 });
  });

  it("takes a Pod's template from its workload, not from the running Pod", async () => {
    const list = await clusterList();
    const deployment = findItem(list, 'Deployment', 'web') as { spec: { template: { spec: unknown } } };
    // The template no longer carries the legacy pool's selector the running Pods still have.
    deployment.spec.template.spec = { containers: [{ name: 'web', image: 'web:3' }] };

    expect(fold(list, await fixtureRules()).verdicts['web-5d8f7c9b4-k8x2q']).toBe('unaffected');
  });

  it("keeps the API server's default tolerations out of the comparison when the running Pods carry them", async () => {
    const list = fixtureList();
    const pods = admittedCheckoutPods(list, await fixtureRules()).map((pod) => ({
      ...pod,
      spec: { ...pod.spec, tolerations: undefined },
    }));
    const { verdicts } = fold(
      { ...list, items: [...pods, ...list.items] as Record<string, unknown>[] },
      await fixtureRules(),
    );

    expect([verdicts['checkout-7d9f8b6c5d-h2k9d'], verdicts['checkout-7d9f8b6c5d-r7x4m']]).toEqual([
      'current',
      'current',
    ]);
  });

  it('runs managed placement after the rules and lists its step after them', async () => {
    const managedSteps = [
      createPlacementStep({
        flavour: 'karpenter',
        policies: [{ namespace: 'production', kind: 'Deployment', name: 'web', mode: 'Spot' }],
      }),
    ];

    expect(
      workload(fold(await clusterList(), await fixtureRules(), { managedSteps }).report, 'Deployment', 'web'),
    ).toMatchObject({
      pending: 2,
      rules: ['migrate-legacy-pool', 'managed:capacity'],
      change: expect.stringContaining(
        '+{example.com/node-pool In [merged], karpenter.sh/capacity-type In [spot], kubernetes.io/arch In [amd64]}',
      ) as unknown,
    });
  });

  it.each([
    ['built from its template', (list: KubectlList) => list],
    [
      'judged as it runs, its owner not in the input',
      (list: KubectlList) => without(list, 'ReplicaSet', 'checkout-7d9f8b6c5d'),
    ],
  ])('keeps a Diversity Pod %s on the draw it was admitted with, so it reads current', async (_case, input) => {
    const rules = await fixtureRules();
    const list = fixtureList();
    // The request uids the Pods were admitted with and their own uids, which the report draws from, fall in buckets 33,
    // 57 and 36, 55: under these percentages each Pod's two draws differ.
    for (const spotPercent of [34, 56]) {
      const managedSteps = [
        createPlacementStep({
          flavour: 'karpenter',
          policies: [{ namespace: 'production', kind: 'Deployment', name: 'checkout', mode: 'Diversity', spotPercent }],
        }),
      ];
      const pods = admittedCheckoutPods(list, rules, managedSteps);
      const { verdicts } = fold(
        input({ ...list, items: [...pods, ...list.items] as Record<string, unknown>[] }),
        rules,
        { managedSteps },
      );

      expect([verdicts['checkout-7d9f8b6c5d-h2k9d'], verdicts['checkout-7d9f8b6c5d-r7x4m']]).toEqual([
        'current',
        'current',
      ]);
    }
  });

  it.each([
    [50, 0],
    [70, 1],
    [100, 1],
  ])(
    'reads a Diversity Pod numbered by its counter (spotPercent %i, minOnDemand %i) current, its deletion cost no change',
    async (spotPercent, minOnDemand) => {
      const rules = await fixtureRules();
      const list = fixtureList();
      const policy = { namespace: 'production', kind: 'Deployment', name: 'checkout', mode: 'Diversity' as const };
      const managedSteps = [
        createPlacementStep({ flavour: 'karpenter', policies: [{ ...policy, spotPercent, minOnDemand }] }),
      ];
      const pods = admittedCheckoutPods(list, rules, managedSteps, true);
      const { verdicts } = fold({ ...list, items: [...pods, ...list.items] as Record<string, unknown>[] }, rules, {
        managedSteps,
      });

      expect(pods.map((pod) => pod.metadata?.annotations?.['controller.kubernetes.io/pod-deletion-cost'])).toEqual([
        '2147483647',
        '2147483646',
      ]);
      expect([verdicts['checkout-7d9f8b6c5d-h2k9d'], verdicts['checkout-7d9f8b6c5d-r7x4m']]).toEqual([
        'current',
        'current',
      ]);
    },
  );

  describe('a StatefulSet that rollout restart does not roll out', () => {
    const moveLedger = compileRuleSet([rule('move-ledger', MOVE_LEDGER_SPEC)]);
    const LEDGER_0 = { name: 'ledger-0', uid: '8a0c2e4a-6c8e-4a0c-8e4a-6c8e0a2c4e70' };
    const LEDGER_1 = { name: 'ledger-1', uid: '8a0c2e4a-6c8e-4a0c-8e4a-6c8e0a2c4e71' };
    const CURRENT = 'ledger-6c8f7d9b5';
    const STAGED = 'ledger-5b9d8c7f4';
    const FINISH = "finish or roll back the StatefulSet's update first";

    type Item = Record<string, unknown> & { spec: Record<string, unknown>; status?: Record<string, unknown> };

    /** The ControllerRevision the StatefulSet controller writes for `template`, owned by ledger. */
    function revision(name: string, template: unknown, ownerUid = '7f9b1d3f-5a7c-4f9b-9d3f-5a7c9e1b3da6'): Item {
      return {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name,
          namespace: 'production',
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'ledger', uid: ownerUid, controller: true },
          ],
        },
        data: { spec: { template: { ...(template as object), $patch: 'replace' } } },
        revision: 1,
        spec: {},
      };
    }

    /** ledger's template staged as STAGED with the rule's nodeSelector already in it, so that its Pods read otherwise. */
    function staged(list: KubectlList): Item {
      const ledger = findItem(list, 'StatefulSet', 'ledger') as Item;
      const template = structuredClone(ledger.spec.template) as { spec: Record<string, unknown> };
      ledger.spec = {
        ...ledger.spec,
        template: { ...template, spec: { ...template.spec, tolerations: [{ key: 'staged', operator: 'Exists' }] } },
      };
      return revision(CURRENT, template);
    }

    const report = (list: KubectlList) => workload(fold(list, moveLedger).report, 'StatefulSet', 'ledger');

    it.each([
      ['OnDelete', { type: 'OnDelete' }, [LEDGER_1, LEDGER_0]],
      ['a RollingUpdate partition', { type: 'RollingUpdate', rollingUpdate: { partition: 1 } }, [LEDGER_1, LEDGER_0]],
      ['a RollingUpdate without a partition', { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, undefined],
      ['no updateStrategy (RollingUpdate, the default)', undefined, undefined],
    ])(
      'with %s lists its pending Pods to delete with their uids, highest ordinal first, when only deleting them rolls it out',
      (_case, updateStrategy, deletePods) => {
        const ledger = report(ledgerWith(fixtureList(), updateStrategy));

        expect(ledger).toMatchObject({ pending: 2 });
        expect(ledger?.deletePods).toEqual(deletePods);
        expect(ledger?.held).toBeUndefined();
      },
    );

    it('lists only its pending Pods, never the current ones', () => {
      const list = ledgerWith(fixtureList(), { type: 'OnDelete' });
      const running = findItem(list, 'Pod', 'ledger-1') as { spec: Record<string, unknown> };
      running.spec = {
        ...running.spec,
        nodeSelector: {
          ...(running.spec.nodeSelector as Record<string, string> | undefined),
          'example.com/pool': 'db',
        },
      };

      expect(report(list)).toMatchObject({ pending: 1, current: 1, deletePods: [LEDGER_0] });
    });

    it.each([
      [
        'OnDelete with a staged template: every Pod would ship it',
        { type: 'OnDelete' },
        { updateRevision: STAGED },
        `its template is staged: update revision ${STAGED} over current revision ${CURRENT}; deleting a Pod would ship the staged template; ${FINISH}`,
      ],
      [
        'a partition, its Pod at or above it not yet on the update revision',
        { type: 'RollingUpdate', rollingUpdate: { partition: 1 } },
        { updateRevision: STAGED },
        `its template is staged: update revision ${STAGED} over current revision ${CURRENT}; deleting a Pod would ship the staged template; ${FINISH}`,
      ],
      [
        'a status the controller wrote for an older spec',
        { type: 'OnDelete' },
        { observedGeneration: 1 },
        'its controller has not observed its spec (status.observedGeneration 1 of generation 2): which revision a deleted Pod comes back at is unknown',
      ],
      [
        'a status that names no revisions',
        { type: 'OnDelete' },
        { currentRevision: null, updateRevision: null },
        'its status names no current and update revision: which revision a deleted Pod comes back at is unknown',
      ],
    ])('holds it, deleting nothing, with %s', (_case, updateStrategy, status, held) => {
      const list = ledgerWith(fixtureList(), updateStrategy, status);
      // The current revision's template, which a Pod below a partition comes back with, is read.
      const current = revision(CURRENT, (findItem(list, 'StatefulSet', 'ledger') as Item).spec.template);
      const ledger = report({ ...list, items: [...list.items, current] });

      expect(ledger?.held).toBe(held);
      expect(ledger?.deletePods).toBeUndefined();
    });

    it('evaluates a Pod below the partition against its current revision, read from its ControllerRevision', () => {
      const list = ledgerWith(
        fixtureList(),
        { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
        { updateRevision: STAGED },
      );
      const current = staged(list);

      const ledger = report({ ...list, items: [...list.items, current] });

      // Against the staged template both would read "tolerations: +staged"; against their own revision only the rule's change.
      expect(ledger).toMatchObject({ pending: 2, deletePods: [LEDGER_1, LEDGER_0] });
      expect(ledger?.change).not.toContain('staged');
      expect(ledger?.held).toBeUndefined();
    });

    it.each([
      ['is not in the input', () => []],
      [
        'belongs to another StatefulSet of the name',
        (template: unknown) => [revision(CURRENT, template, 'another-uid')],
      ],
    ])('holds a partitioned one whose current revision’s ControllerRevision %s', (_case, revisions) => {
      const list = ledgerWith(
        fixtureList(),
        { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
        { updateRevision: STAGED },
      );
      const current = staged(list);

      const ledger = report({ ...list, items: [...list.items, ...revisions(current['data'])] });

      expect(ledger?.held).toBe(
        `the template of its current revision ${CURRENT}, at which Pod ledger-0 would be recreated, was not read (list controllerrevisions with the StatefulSets)`,
      );
    });

    it('holds one whose Pod to delete has no uid in the input: its deletion could not be preconditioned', () => {
      const list = ledgerWith(fixtureList(), { type: 'OnDelete' });
      delete (findItem(list, 'Pod', 'ledger-0').metadata as Record<string, unknown>)['uid'];

      expect(report(list)?.held).toBe(
        'Pod ledger-0 has no metadata.uid in the input: its deletion could not be preconditioned on it',
      );
    });

    it('holds one whose Pod carries no revision label', () => {
      const list = ledgerWith(fixtureList(), { type: 'OnDelete' });
      delete (findItem(list, 'Pod', 'ledger-1').metadata as { labels: Record<string, string> }).labels[
        'controller-revision-hash'
      ];

      expect(report(list)?.held).toBe(
        'Pod ledger-1 carries no controller-revision-hash label: the revision it runs is unknown',
      );
    });

    it('ignores a DaemonSet’s ControllerRevision', () => {
      const builder = createReport(moveLedger);
      const daemonSets = {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name: 'node-exporter-7f9c',
          namespace: 'monitoring',
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'node-exporter', controller: true }],
        },
        data: { spec: { template: { spec: { containers: [] } } } },
      };

      expect(builder.addOwner(daemonSets, 'items[0]')).toBe(false);
    });

    it('names the field of a ControllerRevision whose data holds no template', () => {
      const broken = revision(CURRENT, undefined);
      broken['data'] = { spec: { template: 'none' } };

      expect(() => createReport(moveLedger).addOwner(broken, 'items[7]')).toThrow(
        'items[7].data.spec.template: expected an object (the Pod template)',
      );
    });
  });

  it('reads only the namespace it is given', async () => {
    const { report, verdicts } = fold(await clusterList(), await fixtureRules(), { namespace: 'batch' });

    expect(report.totals).toEqual({ pods: 1, unaffected: 0, current: 0, pending: 1, denied: 0 });
    expect(verdicts.toolbox).toBeUndefined();
  });

  it('leaves finished Pods out: no rollout recreates them', async () => {
    const list = await clusterList();
    (findItem(list, 'Pod', 'nightly-report-29412345-x9k2m').status as Record<string, unknown>).phase = 'Succeeded';
    const { report, verdicts } = fold(list, await fixtureRules());

    expect(verdicts['nightly-report-29412345-x9k2m']).toBeUndefined();
    expect(report.totals.pods).toBe(10);
  });

  it('keeps three change lines per workload and counts the Pods whose changes are not among them', async () => {
    const list = await clusterList();
    const web = findItem(list, 'Pod', 'web-5d8f7c9b4-k8x2q') as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    const copies = Array.from({ length: 5 }, (_, index) => ({
      ...web,
      metadata: { ...web.metadata, name: `web-${index}` },
      spec: { ...web.spec, nodeSelector: { disk: `d${index}` } },
    }));
    // A key of the template's own: a value the template does not give is no admission plugin's.
    const template = (findItem(list, 'Deployment', 'web').spec as { template: { spec: Record<string, unknown> } })
      .template;
    template.spec = { ...template.spec, nodeSelector: { disk: 'any' } };
    const { report } = fold({ ...list, items: [...list.items, ...copies] }, await fixtureRules());
    const change = workload(report, 'Deployment', 'web')!.change;

    expect(change.split(' | ')).toHaveLength(4);
    expect(change.endsWith(' | +3 more Pods with other changes')).toBe(true);
  });

  it('reports a running Pod that is not well formed at its field path', async () => {
    const builder = createReport(await fixtureRules());

    expect(() => builder.addPod({ metadata: { name: 'p' }, spec: { nodeSelector: { pool: 1 } } }, 'items[7]')).toThrow(
      'items[7].spec.nodeSelector.pool: expected a string, got a number',
    );
  });

  it('reports an owner that is not well formed at its field path', async () => {
    const builder = createReport(await fixtureRules());

    expect(() =>
      builder.addOwner(
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { template: [] } },
        'items[3]',
      ),
    ).toThrow('items[3].spec.template: expected an object (the Pod template), got a list');
  });

  it('ignores objects of other kinds', async () => {
    expect(
      createReport(await fixtureRules()).addOwner(
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' } },
        'items[0]',
      ),
    ).toBe(false);
  });
});
