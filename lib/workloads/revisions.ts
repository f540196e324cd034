/**
 * StatefulSet revisions: the ControllerRevisions that record each revision's Pod template, the revision the
 * StatefulSet controller recreates a deleted Pod at, and whether deleting a Pod would bring it back at another
 * revision than it runs (a staged template shipped).
 */
import { MalformedInputError } from '../errors/index.ts';
import { isJsonObject, optionalObject, optionalString, typeMismatch } from '../json/index.ts';
import {
  classifyObject,
  controllerOf,
  readTemplate,
  type ObjectReference,
  type PodIdentity,
  type PodTemplate,
  type WorkloadObject,
} from './objects.ts';
import { podOrdinal } from './pod.ts';

/** A StatefulSet's ControllerRevision (apps/v1), read: whose it is and the Pod template it records. */
interface StatefulSetRevision {
  /** "" when the object does not say (a manifest). */
  readonly namespace: string;
  /** `<statefulset>-<hash>`, the name status.currentRevision and the Pods' controller-revision-hash label give. */
  readonly name: string;
  /** The controller ownerReference: the StatefulSet the revision belongs to. */
  readonly owner: ObjectReference;
  readonly template: PodTemplate;
}

/** Which of a StatefulSet's two revisions a recreated Pod gets. */
type RevisionChoice = 'current' | 'update';

/**
 * The fields of a StatefulSet the controller's choice of revision reads.
 * @internal Exported for tests: the tests type the inputs they vary.
 */
type RevisionInputs = Pick<WorkloadObject, 'updateStrategy' | 'rollingUpdate' | 'partition' | 'ordinalStart'> & {
  readonly currentReplicas: number;
};

/**
 * Where a deleted Pod of a StatefulSet comes back: the revision's name and which of the two it is, with a hold when
 * that is not the revision the Pod runs (or that revision is unknown); only a hold when the revision cannot be told.
 */
type Recreation =
  | { readonly revision: string; readonly choice: RevisionChoice; readonly hold?: string }
  | { readonly revision?: undefined; readonly hold: string };

/**
 * Reads a ControllerRevision at `path`: undefined when it is not a StatefulSet's (a DaemonSet's, or one without a
 * controller); throws MalformedInputError naming the field for a wrong type or a StatefulSet revision whose data holds
 * no Pod template. The controller stores each revision as the patch `{"spec":{"template":{…,"$patch":"replace"}}}`
 * (getPatch, kubernetes/kubernetes pkg/controller/statefulset/stateful_set_utils.go).
 */
function readControllerRevision(value: unknown, path: string): StatefulSetRevision | undefined {
  if (classifyObject(value, path) !== 'ControllerRevision')
    throw new MalformedInputError(`${path}: expected an apps/v1 ControllerRevision`, {
      context: { field: `${path}.kind` },
    });
  const object = value as Record<string, unknown>;
  const metadata = optionalObject(object.metadata, `${path}.metadata`);
  const owner = controllerOf(metadata, `${path}.metadata`);
  if (owner?.kind !== 'StatefulSet') return undefined;
  const name = optionalString(metadata?.name, `${path}.metadata.name`);
  if (name === '')
    throw new MalformedInputError(`${path}.metadata.name: expected a name, got nothing`, {
      context: { field: `${path}.metadata.name` },
    });
  const namespace = optionalString(metadata?.namespace, `${path}.metadata.namespace`);
  if (!isJsonObject(object.data)) throw typeMismatch(`${path}.data`, 'an object (the revision patch)', object.data);
  const spec = optionalObject(object.data.spec, `${path}.data.spec`);
  return { namespace, name, owner, template: readTemplate(spec?.template, `${path}.data.spec.template`, namespace) };
}

/**
 * True for a StatefulSet whose Pods `kubectl rollout restart` does not all recreate: OnDelete recreates none (only a
 * deleted Pod is created again), and a partition leaves the ordinals below it on their revision.
 */
function rollsOutByDeletion(workload: WorkloadObject): boolean {
  return workload.kind === 'StatefulSet' && (workload.updateStrategy === 'OnDelete' || workload.partition > 0);
}

/**
 * The revision the StatefulSet controller gives a Pod it (re)creates at `ordinal`, as newVersionedStatefulSetPod
 * chooses it (kubernetes/kubernetes v1.37 pkg/controller/statefulset/stateful_set_utils.go): the current revision for
 * a RollingUpdate ordinal below start + currentReplicas when rollingUpdate is absent, or below start + partition when
 * it is set; otherwise (OnDelete always) the update revision, which is .spec.template's.
 * @internal Exported for tests: tested on its own against the controllers' revision rules.
 */
function recreationRevision(set: RevisionInputs, ordinal: number): RevisionChoice {
  // The Go condition is `RollingUpdate && rollingUpdate == nil && … || rollingUpdate != nil && …`; validation refuses a
  // rollingUpdate on any other type (pkg/apis/apps/validation/validation.go), so both arms mean RollingUpdate.
  const belowCurrent =
    set.updateStrategy === 'RollingUpdate' && !set.rollingUpdate && ordinal < set.ordinalStart + set.currentReplicas;
  const belowPartition = set.rollingUpdate && ordinal < set.ordinalStart + set.partition;
  return belowCurrent || belowPartition ? 'current' : 'update';
}

const FINISH_FIRST = "finish or roll back the StatefulSet's update first";

/**
 * Where deleting `pod` brings it back, read from the StatefulSet's status: the revision, or a hold (when in doubt,
 * nothing is deleted) when the status does not name both revisions for the current spec, when the Pod's name gives no
 * ordinal or it carries no revision label, and when it would come back at another revision than it runs.
 */
function recreationOf(set: WorkloadObject, pod: PodIdentity): Recreation {
  const status = set.revisions;
  if (status === undefined || status.current === '' || status.update === '')
    return {
      hold: 'its status names no current and update revision: which revision a deleted Pod comes back at is unknown',
    };
  if (status.observedGeneration === undefined || (set.generation ?? 0) > status.observedGeneration)
    return {
      hold: `its controller has not observed its spec (status.observedGeneration ${status.observedGeneration ?? 'absent'} of generation ${set.generation ?? 'absent'}): which revision a deleted Pod comes back at is unknown`,
    };
  const ordinal = podOrdinal(set.name, pod.name);
  if (ordinal === undefined) return { hold: `Pod ${pod.name}'s name gives no ordinal of StatefulSet ${set.name}` };
  const choice = recreationRevision({ ...set, currentReplicas: status.currentReplicas }, ordinal);
  const revision = choice === 'current' ? status.current : status.update;
  const running = pod.labels['controller-revision-hash'] ?? '';
  if (running === '')
    return {
      revision,
      choice,
      hold: `Pod ${pod.name} carries no controller-revision-hash label: the revision it runs is unknown`,
    };
  if (revision === running) return { revision, choice };
  if (running === status.current && revision === status.update)
    return {
      revision,
      choice,
      hold: `its template is staged: update revision ${status.update} over current revision ${status.current}; deleting a Pod would ship the staged template; ${FINISH_FIRST}`,
    };
  return {
    revision,
    choice,
    hold: `Pod ${pod.name} runs revision ${running} and would be recreated at revision ${revision}; deleting it would ship that revision's template; ${FINISH_FIRST}`,
  };
}

export { readControllerRevision, recreationOf, recreationRevision, rollsOutByDeletion };
export type { RevisionInputs, StatefulSetRevision };
