/**
 * A Pod as the API server admits it around the webhook: what the in-tree mutating admission plugins that run before
 * webhooks change in the fields the report compares (nodeSelector, tolerations), in the API server's order
 * (pkg/kubeapiserver/options/plugins.go, AllOrderedPlugins), Kubernetes 1.30 to 1.37. The API server runs them again
 * after a webhook changed the Pod (k8s.io/apiserver pkg/admission/reinvocation.go), so the same model gives both the
 * Pod that reaches the webhook and the Pod that is stored. Each plugin is modelled exactly where its input is visible
 * (ExtendedResourceToleration from the Pod's containers, RuntimeClass from the RuntimeClass) and read from the running
 * Pod as it arrived at the webhook where it is not (a namespace's annotations, a plugin's configuration file).
 * docs/api.md "Admission plugins that run before the webhook" lists every plugin and what the report does about it.
 */
import type { Pod, PodFacts } from '../engine/index.ts';
import { DEFAULT_TOLERATION_KEYS, tolerationIdentity, type Toleration } from '../scheduling/index.ts';
import { isRawInteger, objectList, optionalObject, optionalString, stringMap, type JsonObject } from '../json/index.ts';
import { qualifiedNameProblem } from '../syntax/index.ts';
import { tolerationsAt, type RuntimeClassScheduling } from './runtime-class.ts';

/** Why the API server would refuse the Pod before storing it: the plugin's name and message. */
interface Refusal {
  readonly plugin: string;
  readonly message: string;
}

/** Each plugin's input for one running Pod's recreation, as the report knows it. */
interface AdmissionInputs {
  /** PodNodeSelector: the namespace's node selector (or the cluster default), as the running Pod arrived with it. */
  readonly namespaceNodeSelector: Readonly<Record<string, string>>;
  /** DefaultTolerationSeconds: its not-ready and unreachable tolerations, with the cluster's seconds, as the running Pod arrived with them. */
  readonly defaultTolerations: readonly Toleration[];
  /** PodTolerationRestriction: the namespace's default tolerations and memory-pressure, as the running Pod arrived with them. */
  readonly namespaceTolerations: readonly Toleration[];
  /** ExtendedResourceToleration: the extended resources to tolerate; none when the running Pod shows the plugin off or cannot tell. */
  readonly extendedResources: readonly string[];
  /** RuntimeClass: the RuntimeClasses the report read, by name. */
  readonly runtimeClasses: ReadonlyMap<string, RuntimeClassScheduling>;
}

/** What the report knows of one running Pod besides the Pod a rollout would send. */
interface AdmissionEvidence {
  /** The Pod its controller would create, before admission, and where it comes from; absent when the Pod is recreated from its own spec. */
  readonly template?: { readonly pod: Pod; readonly path: string };
  /** The running Pod as stored. */
  readonly running: PodFacts;
  /** The running Pod as it arrived at the webhook: rebuilt from its stamp, or the running Pod when it has none that checks. */
  readonly arrived: PodFacts;
  /** What the webhook added to `arrived`, when it is the running Pod although the webhook changed it: not a plugin's input. */
  readonly webhookAdded?: { readonly tolerations: readonly Toleration[]; readonly nodeSelectorKeys: readonly string[] };
  readonly runtimeClasses: ReadonlyMap<string, RuntimeClassScheduling>;
}

/** The Pod as the plugins leave it; with the refusal of the first plugin that refuses it, left as it was before that plugin. */
interface Admitted {
  readonly pod: Pod;
  readonly refusal?: Refusal;
}

const EXISTS = 'Exists';
const NO_SCHEDULE = 'NoSchedule';
const NO_EXECUTE = 'NoExecute';

// Go's zero values: an absent field is "".
const text = (value: string | undefined): string => value ?? '';

/** A toleration's seconds as an exact integer (int64 beyond 2^53 included). */
function seconds(toleration: Toleration): bigint | undefined {
  const value = toleration.tolerationSeconds;
  if (value === undefined) return undefined;
  return BigInt(isRawInteger(value) ? value.rawJSON : value);
}

/** apiequality.Semantic.DeepEqual of two tolerations: every field as written ("" and "Equal" differ). */
function sameToleration(left: Toleration, right: Toleration): boolean {
  if (left === right) return true;
  const [own, other] = [left.tolerationSeconds, right.tolerationSeconds];
  return (
    text(left.key) === text(right.key) &&
    text(left.operator) === text(right.operator) &&
    text(left.value) === text(right.value) &&
    text(left.effect) === text(right.effect) &&
    (own === other || (own !== undefined && other !== undefined && seconds(left) === seconds(right)))
  );
}

/**
 * pkg/util/tolerations isSuperset: every taint `tolerated` tolerates, `superset` tolerates too.
 * @internal Exported for tests: tested on its own against the PodTolerationRestriction plugin's cases.
 */
function isSuperset(superset: Toleration, tolerated: Toleration): boolean {
  if (sameToleration(tolerated, superset)) return true;
  // An empty key with Exists matches every key; an empty effect every effect.
  if (text(tolerated.key) !== text(superset.key) && (text(superset.key) !== '' || superset.operator !== EXISTS))
    return false;
  if (text(tolerated.effect) !== text(superset.effect) && text(superset.effect) !== '') return false;
  const limit = seconds(superset);
  if (superset.effect === NO_EXECUTE && limit !== undefined) {
    const own = seconds(tolerated);
    if (own === undefined || own > limit) return false;
  }
  switch (text(superset.operator)) {
    case '':
    case 'Equal':
      return tolerated.operator === 'Equal' && text(tolerated.value) === text(superset.value);
    case EXISTS:
      return true;
    default:
      return false;
  }
}

/**
 * pkg/util/tolerations MergeTolerations, as PodTolerationRestriction and RuntimeClass merge: both lists, less each
 * toleration another one covers (of two equal ones, the first is kept), in their order.
 * @internal Exported for tests: tested on its own against the PodTolerationRestriction plugin's cases.
 */
function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): readonly Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  all.forEach((toleration, index) => {
    if (merged.some((kept) => isSuperset(kept, toleration))) return;
    const later = all.slice(index + 1);
    if (later.some((other) => !sameToleration(toleration, other) && isSuperset(other, toleration))) return;
    merged.push(toleration);
  });
  // The first list itself when nothing was added or dropped: callers tell a change by identity.
  return merged.length === first.length && merged.every((item, index) => item === first[index]) ? first : merged;
}

/**
 * pkg/apis/core/helper AddOrUpdateTolerationInPod, as ExtendedResourceToleration adds: a toleration of the same key,
 * operator, value and effect is replaced, else it is appended; the list is kept when an equal one is there.
 */
function addOrUpdateToleration(tolerations: readonly Toleration[], toleration: Toleration): readonly Toleration[] {
  const result: Toleration[] = [];
  let updated = false;
  for (const item of tolerations) {
    const matches =
      text(item.key) === text(toleration.key) &&
      text(item.effect) === text(toleration.effect) &&
      text(item.operator) === text(toleration.operator) &&
      text(item.value) === text(toleration.value);
    if (!matches) result.push(item);
    else if (sameToleration(item, toleration)) return tolerations;
    else {
      result.push(toleration);
      updated = true;
    }
  }
  if (!updated) result.push(toleration);
  return result;
}

/**
 * pkg/apis/core/helper IsExtendedResourceName: a resource outside kubernetes.io/, qualified once prefixed "requests.".
 * @internal Exported for tests: tested on its own against the plugin's resource name rule.
 */
function isExtendedResourceName(name: string): boolean {
  // A name without "/" or in the kubernetes.io/ domain is native (IsNativeResource).
  if (!name.includes('/') || name.includes('kubernetes.io/') || name.startsWith('requests.')) return false;
  return qualifiedNameProblem(`requests.${name}`) === undefined;
}

/**
 * The extended resources a Pod's containers and init containers request, sorted. A limit counts as a request: the API
 * server defaults a Pod's requests to its limits (pkg/apis/core/v1 SetDefaults_Pod) before admission, not a template's.
 * @internal Exported for tests: tested on its own against the ExtendedResourceToleration plugin's cases.
 */
function extendedResourcesOf(pod: Pod, path: string): string[] {
  const names = new Set<string>();
  for (const list of ['containers', 'initContainers'] as const) {
    objectList(pod.spec?.[list], `${path}.spec.${list}`).forEach((container, index) => {
      const at = `${path}.spec.${list}[${index}].resources`;
      const resources = optionalObject(container.resources, at);
      for (const field of ['requests', 'limits'] as const)
        for (const name of Object.keys(optionalObject(resources?.[field], `${at}.${field}`) ?? {}))
          if (isExtendedResourceName(name)) names.add(name);
    });
  }
  return [...names].sort();
}

/** The toleration ExtendedResourceToleration adds for an extended resource. */
function extendedResourceToleration(resource: string): Toleration {
  return { key: resource, operator: EXISTS, effect: NO_SCHEDULE };
}

/** DefaultTolerationSeconds' test: a toleration of this key (or of every key) for NoExecute (or every effect). */
function toleratesNoExecute(tolerations: readonly Toleration[], key: string): boolean {
  return tolerations.some(
    (toleration) =>
      (!toleration.key || toleration.key === key) && (!toleration.effect || toleration.effect === NO_EXECUTE),
  );
}

/** A toleration DefaultTolerationSeconds adds: one of its keys, Exists, NoExecute (whatever the seconds). */
function isDefaultToleration(toleration: Toleration): boolean {
  return (
    DEFAULT_TOLERATION_KEYS.includes(text(toleration.key)) &&
    toleration.operator === EXISTS &&
    toleration.effect === NO_EXECUTE
  );
}

/**
 * ExtendedResourceToleration is on when the running Pod requests an extended resource and arrived with the plugin's
 * toleration of each; off when one is missing; unknown when it requests none (taken as off: no Pod is read pending on
 * a toleration the cluster may not add).
 */
function extendedResourcesOn(running: PodFacts, arrived: PodFacts, path: string): readonly string[] | undefined {
  const requested = extendedResourcesOf(running.pod, path);
  const shown = requested.every((resource) =>
    arrived.tolerations.some((item) => sameToleration(item, extendedResourceToleration(resource))),
  );
  return requested.length > 0 && shown ? requested : undefined;
}

/**
 * What the running Pod arrived at the webhook with beyond its template, less what the exact models and the webhook
 * account for (the running Pod's RuntimeClass, its extended resources, the default tolerations, the rules' additions):
 * the namespace's node selector and tolerations, and what a MutatingAdmissionPolicy or a webhook called before this
 * one added.
 */
function arrivedBeyond(
  evidence: AdmissionEvidence & { readonly template: NonNullable<AdmissionEvidence['template']> },
  extendedResources: readonly string[],
  path: string,
): { readonly nodeSelector: Record<string, string>; readonly tolerations: readonly Toleration[] } {
  const { template, running, arrived, runtimeClasses, webhookAdded } = evidence;
  const className = optionalString(running.pod.spec?.runtimeClassName, `${path}.spec.runtimeClassName`);
  const runningClass = runtimeClasses.get(className);
  const spec = template.pod.spec ?? {};
  const ownSelector = stringMap(spec.nodeSelector, `${template.path}.spec.nodeSelector`);
  const explainedKeys = new Set([
    ...Object.keys(ownSelector),
    ...Object.keys(runningClass?.nodeSelector ?? {}),
    ...(webhookAdded?.nodeSelectorKeys ?? []),
  ]);
  const nodeSelector: Record<string, string> = {};
  for (const [key, value] of Object.entries(arrived.nodeSelector))
    if (!explainedKeys.has(key)) nodeSelector[key] = value;
  const explained = new Set([
    ...tolerationsAt(spec.tolerations, `${template.path}.spec.tolerations`).map(tolerationIdentity),
    ...extendedResources.map((resource) => tolerationIdentity(extendedResourceToleration(resource))),
    ...(runningClass?.tolerations ?? []).map(tolerationIdentity),
    ...(webhookAdded?.tolerations ?? []).map(tolerationIdentity),
  ]);
  const tolerations = arrived.tolerations.filter(
    (item) => !isDefaultToleration(item) && !explained.has(tolerationIdentity(item)),
  );
  return { nodeSelector, tolerations };
}

/**
 * Each plugin's input: exact where it is visible, else what the running Pod arrived at the webhook with
 * (arrivedBeyond). A Pod recreated from its own spec already carries what the plugins added: only the exact models
 * and DefaultTolerationSeconds apply to it. `path` is the running Pod's.
 */
function admissionInputs(evidence: AdmissionEvidence, path: string): AdmissionInputs {
  const { template, running, arrived, runtimeClasses } = evidence;
  const defaultTolerations = DEFAULT_TOLERATION_KEYS.flatMap((key) => {
    const inherited = arrived.tolerations.find((item) => item.key === key && isDefaultToleration(item));
    return inherited === undefined ? [] : [inherited];
  });
  const shownOn = extendedResourcesOn(running, arrived, path);
  const requested =
    template === undefined || shownOn === undefined ? [] : extendedResourcesOf(template.pod, template.path);
  const extendedResources = [...new Set([...(shownOn ?? []), ...requested])].sort();
  const beyond = template === undefined ? undefined : arrivedBeyond({ ...evidence, template }, shownOn ?? [], path);
  return {
    namespaceNodeSelector: beyond?.nodeSelector ?? {},
    defaultTolerations,
    namespaceTolerations: beyond?.tolerations ?? [],
    extendedResources,
    runtimeClasses,
  };
}

/** The node selector with `added`, or the conflict the plugin refuses (an equal value is no conflict). */
function mergedSelector(
  own: Readonly<Record<string, string>>,
  added: Readonly<Record<string, string>>,
): { readonly selector: Readonly<Record<string, string>>; readonly conflict?: string } {
  let selector = own;
  for (const [key, value] of Object.entries(added)) {
    if (!Object.hasOwn(own, key)) selector = { ...selector, [key]: value };
    else if (own[key] !== value) return { selector: own, conflict: key };
  }
  return { selector };
}

/** The scheduling fields the plugins change, as they go through the chain. */
interface Scheduling {
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Toleration[];
}

/** The RuntimeClass plugin's scheduling (plugin/pkg/admission/runtimeclass setScheduling), or its refusal. */
function withRuntimeClass(current: Scheduling, runtimeClass: RuntimeClassScheduling): Scheduling | Refusal {
  if (!runtimeClass.scheduling) return current;
  const { selector, conflict } = mergedSelector(current.nodeSelector, runtimeClass.nodeSelector);
  if (conflict !== undefined) {
    return {
      plugin: 'RuntimeClass',
      message: `conflict: runtimeClass.scheduling.nodeSelector[${conflict}] = ${runtimeClass.nodeSelector[conflict]}; pod.spec.nodeSelector[${conflict}] = ${current.nodeSelector[conflict]}`,
    };
  }
  return { nodeSelector: selector, tolerations: mergeTolerations(current.tolerations, runtimeClass.tolerations) };
}

/** The plugins in the API server's order, on the scheduling fields; stops at the first refusal. */
function runPlugins(
  start: Scheduling,
  runtimeClass: RuntimeClassScheduling | undefined,
  inputs: AdmissionInputs,
): { readonly scheduling: Scheduling; readonly refusal?: Refusal } {
  let current = start;
  // PodNodeSelector (plugin/pkg/admission/podnodeselector): the namespace's selector, refused on a conflict.
  const { selector, conflict } = mergedSelector(current.nodeSelector, inputs.namespaceNodeSelector);
  if (conflict !== undefined) {
    const message = `pod node label selector conflicts with its namespace node label selector (${conflict}=${inputs.namespaceNodeSelector[conflict]}, as the running Pod arrived at the webhook)`;
    return { scheduling: current, refusal: { plugin: 'PodNodeSelector', message } };
  }
  current = { ...current, nodeSelector: selector };
  // DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds): each key not tolerated for NoExecute.
  const defaults = inputs.defaultTolerations.filter((item) => !toleratesNoExecute(current.tolerations, item.key!));
  if (defaults.length > 0) current = { ...current, tolerations: [...current.tolerations, ...defaults] };
  // PodTolerationRestriction (plugin/pkg/admission/podtolerationrestriction): merged in, when there is any.
  if (inputs.namespaceTolerations.length > 0)
    current = { ...current, tolerations: mergeTolerations(current.tolerations, inputs.namespaceTolerations) };
  // ExtendedResourceToleration (plugin/pkg/admission/extendedresourcetoleration): one per resource, sorted.
  for (const resource of inputs.extendedResources)
    current = {
      ...current,
      tolerations: addOrUpdateToleration(current.tolerations, extendedResourceToleration(resource)),
    };
  // RuntimeClass (plugin/pkg/admission/runtimeclass): the class the Pod names, when the report read it.
  if (runtimeClass !== undefined) {
    const next = withRuntimeClass(current, runtimeClass);
    if ('plugin' in next) return { scheduling: current, refusal: next };
    current = next;
  }
  return { scheduling: current };
}

/**
 * The Pod as the plugins before the webhook leave it (`pod` itself when they change nothing), and the refusal of the
 * first plugin that would refuse it. Run on the Pod a rollout sends, it is the Pod the webhook receives; run on the
 * webhook's result, the Pod the API server stores. Throws MalformedInputError naming the field of a Pod not well formed.
 */
function asAdmitted(pod: Pod, inputs: AdmissionInputs, path: string): Admitted {
  const spec: JsonObject = pod.spec ?? {};
  const start: Scheduling = {
    nodeSelector: stringMap(spec.nodeSelector, `${path}.spec.nodeSelector`),
    tolerations: tolerationsAt(spec.tolerations, `${path}.spec.tolerations`),
  };
  const className = optionalString(spec.runtimeClassName, `${path}.spec.runtimeClassName`);
  const { scheduling, refusal } = runPlugins(start, inputs.runtimeClasses.get(className), inputs);
  // Each plugin hands the field back as it was given when it changes nothing in it.
  const selectorChanged = scheduling.nodeSelector !== start.nodeSelector;
  const tolerationsChanged = scheduling.tolerations !== start.tolerations;
  const admitted =
    selectorChanged || tolerationsChanged
      ? {
          ...pod,
          spec: {
            ...pod.spec,
            ...(selectorChanged ? { nodeSelector: scheduling.nodeSelector } : {}),
            ...(tolerationsChanged
              ? { tolerations: scheduling.tolerations.length === 0 ? undefined : scheduling.tolerations }
              : {}),
          },
        }
      : pod;
  return refusal === undefined ? { pod: admitted } : { pod: admitted, refusal };
}

export { admissionInputs, asAdmitted, extendedResourcesOf, isExtendedResourceName, isSuperset, mergeTolerations };
export type { AdmissionInputs, Refusal };
