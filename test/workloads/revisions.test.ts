/** StatefulSet revisions: the controller's choice of revision for a recreated Pod, and the holds read from status. */
import { describe, expect, it } from 'vitest';
import {
  readControllerRevision,
  readPodIdentity,
  readWorkloadObject,
  recreationOf,
} from '../../lib/workloads/index.ts';
import { type RevisionInputs, recreationRevision } from '../../lib/workloads/revisions.ts';

const ROLLING = {
  updateStrategy: 'RollingUpdate',
  rollingUpdate: true,
  partition: 0,
  ordinalStart: 0,
  currentReplicas: 0,
};

describe('recreationRevision', () => {
  // newVersionedStatefulSetPod, kubernetes/kubernetes v1.37 pkg/controller/statefulset/stateful_set_utils.go.
  it.each<[string, Partial<RevisionInputs>, number, 'current' | 'update']>([
    ['OnDelete, any ordinal', { updateStrategy: 'OnDelete', rollingUpdate: false }, 0, 'update'],
    [
      'OnDelete with currentReplicas (read only without rollingUpdate)',
      { updateStrategy: 'OnDelete', rollingUpdate: false, currentReplicas: 3 },
      0,
      'update',
    ],
    ['partition 0', {}, 0, 'update'],
    ['below partition 2', { partition: 2 }, 1, 'current'],
    ['at partition 2', { partition: 2 }, 2, 'update'],
    ['above partition 2', { partition: 2 }, 5, 'update'],
    ['below start 3 + partition 2', { partition: 2, ordinalStart: 3 }, 4, 'current'],
    ['at start 3 + partition 2', { partition: 2, ordinalStart: 3 }, 5, 'update'],
    ['rollingUpdate absent, below start + currentReplicas', { rollingUpdate: false, currentReplicas: 2 }, 1, 'current'],
    ['rollingUpdate absent, at start + currentReplicas', { rollingUpdate: false, currentReplicas: 2 }, 2, 'update'],
    [
      'rollingUpdate absent, start 5, below start + currentReplicas',
      { rollingUpdate: false, ordinalStart: 5, currentReplicas: 2 },
      6,
      'current',
    ],
    ['rollingUpdate set: currentReplicas is not read', { partition: 0, currentReplicas: 3 }, 0, 'update'],
  ])('%s: ordinal %i comes back at the %s revision', (_case, inputs, ordinal, expected) => {
    expect(recreationRevision({ ...ROLLING, ...inputs }, ordinal)).toBe(expected);
  });
});

function statefulSet(updateStrategy: unknown, status: Record<string, unknown>): unknown {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'data', uid: 'u-db', generation: 3 },
    spec: {
      updateStrategy,
      template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'pg', image: 'postgres:16' }] } },
    },
    status: { observedGeneration: 3, currentReplicas: 1, ...status },
  };
}

function pod(name: string, revision: string | undefined): unknown {
  return {
    metadata: {
      name,
      namespace: 'data',
      uid: `u-${name}`,
      labels: revision === undefined ? { app: 'db' } : { app: 'db', 'controller-revision-hash': revision },
    },
  };
}

function recreation(updateStrategy: unknown, status: Record<string, unknown>, name: string, revision?: string) {
  return recreationOf(
    readWorkloadObject(statefulSet(updateStrategy, status), 'db'),
    readPodIdentity(pod(name, revision), name),
  );
}

const REVISIONS = { currentRevision: 'db-old', updateRevision: 'db-new' };

describe('recreationOf', () => {
  it('finds the update revision for an OnDelete Pod already on it, with nothing to hold', () => {
    expect(recreation({ type: 'OnDelete' }, REVISIONS, 'db-0', 'db-new')).toEqual({
      revision: 'db-new',
      choice: 'update',
    });
  });

  it('finds the current revision for a Pod below the partition on it, with nothing to hold', () => {
    expect(recreation({ type: 'RollingUpdate', rollingUpdate: { partition: 1 } }, REVISIONS, 'db-0', 'db-old')).toEqual(
      { revision: 'db-old', choice: 'current' },
    );
  });

  it.each([
    [
      'an OnDelete Pod on the current revision of a staged template',
      { type: 'OnDelete' },
      REVISIONS,
      'db-0',
      'db-old',
      "its template is staged: update revision db-new over current revision db-old; deleting a Pod would ship the staged template; finish or roll back the StatefulSet's update first",
    ],
    [
      'a Pod below the partition on the update revision (rolled back since)',
      { type: 'RollingUpdate', rollingUpdate: { partition: 1 } },
      REVISIONS,
      'db-0',
      'db-new',
      "Pod db-0 runs revision db-new and would be recreated at revision db-old; deleting it would ship that revision's template; finish or roll back the StatefulSet's update first",
    ],
    [
      'a Pod without the revision label',
      { type: 'OnDelete' },
      REVISIONS,
      'db-0',
      undefined,
      'Pod db-0 carries no controller-revision-hash label: the revision it runs is unknown',
    ],
    [
      'a Pod whose name gives no ordinal',
      { type: 'OnDelete' },
      REVISIONS,
      'db-primary',
      'db-new',
      "Pod db-primary's name gives no ordinal of StatefulSet db",
    ],
    [
      'a status without revisions',
      { type: 'OnDelete' },
      {},
      'db-0',
      'db-new',
      'its status names no current and update revision: which revision a deleted Pod comes back at is unknown',
    ],
    [
      'a status of an older generation',
      { type: 'OnDelete' },
      { ...REVISIONS, observedGeneration: 2 },
      'db-0',
      'db-new',
      'its controller has not observed its spec (status.observedGeneration 2 of generation 3): which revision a deleted Pod comes back at is unknown',
    ],
  ])('holds %s', (_case, strategy, status, name, revision, hold) => {
    expect(recreation(strategy, status, name, revision).hold).toBe(hold);
  });
});

describe('readControllerRevision', () => {
  const owned = (kind: string) => ({
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: 'db-old',
      namespace: 'data',
      ownerReferences: [{ apiVersion: 'apps/v1', kind, name: 'db', uid: 'u-db', controller: true }],
    },
    data: {
      spec: {
        template: {
          $patch: 'replace',
          metadata: { labels: { app: 'db' } },
          spec: { containers: [{ name: 'pg', image: 'postgres:15' }] },
        },
      },
    },
  });

  it('reads a StatefulSet revision: its owner and the template its patch records', () => {
    expect(readControllerRevision(owned('StatefulSet'), 'items[0]')).toMatchObject({
      namespace: 'data',
      name: 'db-old',
      owner: { kind: 'StatefulSet', name: 'db', uid: 'u-db' },
      template: { labels: { app: 'db' }, spec: { containers: [{ name: 'pg', image: 'postgres:15' }] } },
    });
  });

  it('ignores a DaemonSet revision', () => {
    expect(readControllerRevision(owned('DaemonSet'), 'items[0]')).toBeUndefined();
  });

  it('names the field of a revision whose data is no object', () => {
    expect(() => readControllerRevision({ ...owned('StatefulSet'), data: 'x' }, 'items[2]')).toThrow(
      'items[2].data: expected an object (the revision patch)',
    );
  });
});
