/**
 * The PodMutationTest file, the equivalent of a kyverno-test.yaml: its declaration and its one
 * reader. Every field is checked at once (unknown fields included, so that a typo can never make a case pass
 * vacuously) and reported with the file and the field path in one error.
 */
import {
  Array as ArraySchema,
  Boolean as BooleanSchema,
  Integer,
  Object as ObjectSchema,
  Optional,
  String as StringSchema,
  Union,
  Unsafe,
  type TSchema,
} from '@sinclair/typebox';
import { isAbsolute, join, dirname } from 'node:path';
import {
  DEFAULT_ENFORCEMENT,
  ENFORCEMENTS,
  PRODUCT_ANNOTATION_PREFIX,
  validateStructure,
  type Enforcement,
} from '../api/index.ts';
import type { VerdictKind } from '../capacity/index.ts';
import { MalformedInputError } from '../errors/index.ts';
import { CAPACITY_FLAVOURS, DEFAULT_CAPACITY_FLAVOUR, type CapacityFlavour } from '../placement/index.ts';
import { IssueList, previewInput, type JsonObject } from '../json/index.ts';
import { isDns1123Label, isDns1123Subdomain } from '../syntax/index.ts';

/** The file name `podmutation test DIR` looks for, recursively; `.yml` is found too (TEST_FILE_NAMES). */
export const TEST_FILE_NAME = 'podmutation-test.yaml';
/** The names of test files a folder search finds, as people spell YAML files. */
export const TEST_FILE_NAMES: ReadonlySet<string> = new Set([TEST_FILE_NAME, 'podmutation-test.yml']);
/**
 * The test file's apiVersion: a CLI file format, never applied to a cluster.
 * @internal Exported for tests: the tests write test files with it.
 */
export const TEST_API_VERSION = 'cli.podmutation.agent.cloudpilot.ai/v1alpha1';
/**
 * The test file's kind.
 * @internal Exported for tests: the tests write test files with it.
 */
export const TEST_KIND = 'PodMutationTest';
/** The namespace of resources that name none, when the test file does not say. */
const DEFAULT_TEST_NAMESPACE = 'default';

// A test file is written by hand; past this many issues the rest are counted, not listed.
const MAX_ISSUES = 32;

function StringEnum(values: readonly string[]): TSchema {
  return Unsafe<string>({ type: 'string', enum: [...values] });
}

function StringMap(): TSchema {
  return Unsafe<Record<string, string>>({ type: 'object', additionalProperties: StringSchema() });
}

const Strings = () => ArraySchema(StringSchema(), { 'x-message': 'must be a list of strings' });
const Paths = (noun: string) =>
  ArraySchema(StringSchema(), {
    minItems: 1,
    'x-noun': noun,
    'x-min': `must name at least one ${noun.replace(/s$/, '')}`,
    'x-message': 'must be a list of paths',
  });

const requirement = (operators: readonly string[]) =>
  ObjectSchema({ key: StringSchema(), operator: StringEnum(operators), values: Optional(Strings()) });
const term = ObjectSchema({
  matchExpressions: Optional(ArraySchema(requirement(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']))),
  matchFields: Optional(ArraySchema(requirement(['In', 'NotIn']))),
});

/** The scheduling fields a result may expect, in the core/v1 shapes (what admission may change, and annotations). */
const scheduling = ObjectSchema({
  nodeSelector: Optional(StringMap()),
  tolerations: Optional(
    ArraySchema(
      ObjectSchema({
        key: Optional(StringSchema()),
        operator: Optional(StringEnum(['Equal', 'Exists'])),
        value: Optional(StringSchema()),
        effect: Optional(StringEnum(['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'])),
        tolerationSeconds: Optional(Integer()),
      }),
    ),
  ),
  affinity: Optional(
    ObjectSchema({
      nodeAffinity: Optional(
        ObjectSchema({
          requiredDuringSchedulingIgnoredDuringExecution: Optional(
            ObjectSchema({ nodeSelectorTerms: ArraySchema(term) }),
          ),
          preferredDuringSchedulingIgnoredDuringExecution: Optional(
            ArraySchema(ObjectSchema({ weight: Integer({ minimum: 1, maximum: 100 }), preference: term })),
          ),
        }),
      ),
    }),
  ),
  topologySpreadConstraints: Optional(
    ArraySchema(
      ObjectSchema({
        maxSkew: Integer({ minimum: 1 }),
        topologyKey: StringSchema(),
        whenUnsatisfiable: StringEnum(['DoNotSchedule', 'ScheduleAnyway']),
        labelSelector: Optional(
          ObjectSchema({
            matchLabels: Optional(StringMap()),
            matchExpressions: Optional(ArraySchema(requirement(['In', 'NotIn', 'Exists', 'DoesNotExist']))),
          }),
        ),
        minDomains: Optional(Integer({ minimum: 1 })),
        nodeAffinityPolicy: Optional(StringEnum(['Honor', 'Ignore'])),
        nodeTaintsPolicy: Optional(StringEnum(['Honor', 'Ignore'])),
        matchLabelKeys: Optional(Strings()),
      }),
    ),
  ),
  annotations: Optional(StringMap()),
});

/** A result's `placement` when no managed placement applies to the Pod. */
export const NO_PLACEMENT = 'none';
/** A result's `placement` when a placement policy (of the --placements file or the table) applies; it wins over PodPlacements. */
export const POLICY_PLACEMENT = 'policy';
// A result's `placement` naming the PodPlacement that applies: PodPlacement/NAME, as `resource` names a resource.
const POD_PLACEMENT_PREFIX = 'PodPlacement/';

/** The `placement` expectation of the PodPlacement of this name. */
export function podPlacementExpectation(name: string): string {
  return `${POD_PLACEMENT_PREFIX}${name}`;
}

/** Whether a result's `placement` is one the run can give: none, policy, or PodPlacement/NAME with a valid name. */
function isPlacementExpectation(text: string): boolean {
  if (text === NO_PLACEMENT || text === POLICY_PLACEMENT) return true;
  return text.startsWith(POD_PLACEMENT_PREFIX) && isDns1123Subdomain(text.slice(POD_PLACEMENT_PREFIX.length));
}

// Where the Pod as admitted can run (lib/capacity's verdict kinds): fits somewhere, fits nowhere, or not judged.
const FIT_KINDS: readonly VerdictKind[] = ['fits', 'nowhere', 'unknown'];

const result = ObjectSchema({
  resource: StringSchema(),
  applied: Strings(),
  audited: Optional(Strings()),
  denied: Optional(
    Union([BooleanSchema(), StringSchema()], { 'x-message': 'must be true, false or a part of the denial message' }),
  ),
  scheduling: Optional(scheduling),
  patchedResource: Optional(StringSchema()),
  fit: Optional(StringEnum(FIT_KINDS)),
  fitMessage: Optional(StringSchema()),
  placement: Optional(StringSchema()),
});

/** The declaration of a PodMutationTest file, run by the project's structural validator (lib/api). */
const TEST_FILE_SCHEMA = ObjectSchema({
  apiVersion: StringEnum([TEST_API_VERSION]),
  kind: StringEnum([TEST_KIND]),
  metadata: ObjectSchema({ name: StringSchema() }),
  rules: Paths('rule paths'),
  placements: Optional(StringSchema()),
  capacityFlavour: Optional(StringEnum(CAPACITY_FLAVOURS)),
  capacity: Optional(Paths('capacity files')),
  enforcement: Optional(StringEnum(ENFORCEMENTS)),
  namespace: Optional(StringSchema()),
  resources: Paths('resource files'),
  results: ArraySchema(result, { minItems: 1, 'x-noun': 'results', 'x-min': 'must hold at least one result' }),
});

/** The scheduling fields a result expects, as written (checked against the core/v1 shapes). */
export interface ExpectedScheduling {
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly tolerations?: readonly JsonObject[];
  readonly affinity?: { readonly nodeAffinity?: JsonObject };
  readonly topologySpreadConstraints?: readonly JsonObject[];
  readonly annotations?: Readonly<Record<string, string>>;
}

/** A result's `resource`: KIND/NAME (any namespace) or KIND/NAMESPACE/NAME. */
export interface ResourceReference {
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
  /** As written, for messages and reports. */
  readonly text: string;
}

/** What one result expects of the Pod of one resource. */
export interface ExpectedResult {
  /** Where it sits in the file: "results[2]". */
  readonly path: string;
  readonly resource: ResourceReference;
  readonly applied: readonly string[];
  readonly audited: readonly string[];
  /** false: admitted; true: denied; a string: denied with a message containing it. */
  readonly denied: boolean | string;
  readonly scheduling: ExpectedScheduling | undefined;
  /** The path of the expected patched resource, relative to the working directory. */
  readonly patchedResource: string | undefined;
  /** Where the Pod as admitted can run: fits, nowhere, or unknown (no capacity and no contradiction). */
  readonly fit: VerdictKind | undefined;
  /** A part of the verdict's text ("NodePool general", "example.com/node-pool In [mergd]"). */
  readonly fitMessage: string | undefined;
  /** The managed placement that applies: NO_PLACEMENT, POLICY_PLACEMENT or PodPlacement/NAME. */
  readonly placement: string | undefined;
}

/** A checked test file; every path relative to the working directory. */
export interface RuleTest {
  readonly file: string;
  readonly name: string;
  readonly rules: readonly string[];
  readonly placements: string | undefined;
  readonly capacityFlavour: CapacityFlavour;
  /** The Nodes and NodePools to judge the Pods against; undefined: the command's --capacity, or none. */
  readonly capacity: readonly string[] | undefined;
  readonly enforcement: Enforcement;
  readonly namespace: string;
  readonly resources: readonly string[];
  readonly results: readonly ExpectedResult[];
}

/** A path of the test file, relative to the file's folder unless absolute. */
function besideFile(file: string, path: string): string {
  return isAbsolute(path) ? path : join(dirname(file), path);
}

/** The reference a result's `resource` names; undefined when it is not KIND/NAME or KIND/NAMESPACE/NAME. */
function parseReference(text: string): ResourceReference | undefined {
  const parts = text.split('/');
  if ((parts.length !== 2 && parts.length !== 3) || parts.some((part) => part === '')) return undefined;
  const [kind, namespace, name] = parts.length === 3 ? parts : [parts[0], undefined, parts[1]];
  return { kind: kind!, namespace, name: name!, text };
}

/** The checks the declaration cannot say, on a document whose structure is valid. */
function checkMeanings(document: JsonObject, issues: IssueList): void {
  const nonEmpty = (value: unknown, path: string) => {
    if (value === '') issues.add(path, 'must not be empty');
  };
  (document.rules as string[]).forEach((path, index) => nonEmpty(path, `rules[${index}]`));
  (document.resources as string[]).forEach((path, index) => nonEmpty(path, `resources[${index}]`));
  ((document.capacity as string[] | undefined) ?? []).forEach((path, index) => nonEmpty(path, `capacity[${index}]`));
  nonEmpty((document.metadata as JsonObject).name, 'metadata.name');
  nonEmpty(document.placements, 'placements');
  if (typeof document.namespace === 'string' && !isDns1123Label(document.namespace)) {
    issues.add('namespace', `must be a namespace name (DNS-1123 label), got ${previewInput(document.namespace)}`);
  }
  (document.results as JsonObject[]).forEach((item, index) => {
    const path = `results[${index}]`;
    if (parseReference(item.resource as string) === undefined) {
      issues.add(`${path}.resource`, `must be KIND/NAME or KIND/NAMESPACE/NAME (got ${previewInput(item.resource)})`);
    }
    nonEmpty(item.patchedResource, `${path}.patchedResource`);
    nonEmpty(item.fitMessage, `${path}.fitMessage`);
    if (typeof item.placement === 'string' && !isPlacementExpectation(item.placement))
      issues.add(
        `${path}.placement`,
        `must be ${NO_PLACEMENT}, ${POLICY_PLACEMENT} (a placement policy) or ${POD_PLACEMENT_PREFIX}NAME (got ${previewInput(item.placement)})`,
      );
    const { denied } = item;
    if (denied === '') issues.add(`${path}.denied`, 'must not be empty: true expects any denial');
    const deniedExpected = denied === true || (typeof denied === 'string' && denied !== '');
    const admittedOnly = ['scheduling', 'patchedResource', 'fit', 'fitMessage'].some((key) => item[key] !== undefined);
    if (deniedExpected && admittedOnly) {
      issues.add(
        path,
        'a denied Pod is not admitted: expect its denial, or its scheduling, patched resource and fit, not both',
      );
    }
    const annotations = (item.scheduling as ExpectedScheduling | undefined)?.annotations ?? {};
    for (const key of Object.keys(annotations)) {
      if (key.startsWith(PRODUCT_ANNOTATION_PREFIX)) {
        issues.add(
          `${path}.scheduling.annotations[${previewInput(key)}]`,
          `is the product's own: applied and audited check the ${PRODUCT_ANNOTATION_PREFIX} annotations`,
        );
      }
    }
  });
}

function expectedResult(item: JsonObject, index: number, file: string): ExpectedResult {
  const path = `results[${index}]`;
  return {
    path,
    resource: parseReference(item.resource as string)!,
    applied: item.applied as string[],
    audited: (item.audited as string[] | undefined) ?? [],
    denied: (item.denied as boolean | string | undefined) ?? false,
    scheduling: item.scheduling as ExpectedScheduling | undefined,
    patchedResource: item.patchedResource === undefined ? undefined : besideFile(file, item.patchedResource as string),
    fit: item.fit as VerdictKind | undefined,
    fitMessage: item.fitMessage as string | undefined,
    placement: item.placement as string | undefined,
  };
}

/**
 * Reads a PodMutationTest document of `file`. Throws one MalformedInputError naming the file and every wrong field
 * (context.issues: field path and reason), unknown fields included.
 */
export function readRuleTest(document: unknown, file: string): RuleTest {
  const issues = new IssueList(MAX_ISSUES);
  validateStructure(TEST_FILE_SCHEMA, document, '', issues);
  if (issues.count === 0) checkMeanings(document as JsonObject, issues);
  if (issues.count > 0) {
    const reported = issues.reported();
    const listed = reported.map((issue) => (issue.field === '' ? issue.reason : `${issue.field}: ${issue.reason}`));
    throw new MalformedInputError(`${file}: ${listed.join('; ')}`, { context: { source: file, issues: reported } });
  }
  const test = document as JsonObject;
  return {
    file,
    name: (test.metadata as JsonObject).name as string,
    rules: (test.rules as string[]).map((path) => besideFile(file, path)),
    placements: test.placements === undefined ? undefined : besideFile(file, test.placements as string),
    capacityFlavour: (test.capacityFlavour as CapacityFlavour | undefined) ?? DEFAULT_CAPACITY_FLAVOUR,
    capacity: (test.capacity as string[] | undefined)?.map((path) => besideFile(file, path)),
    enforcement: (test.enforcement as Enforcement | undefined) ?? DEFAULT_ENFORCEMENT,
    namespace: (test.namespace as string | undefined) ?? DEFAULT_TEST_NAMESPACE,
    resources: (test.resources as string[]).map((path) => besideFile(file, path)),
    results: (test.results as JsonObject[]).map((item, index) => expectedResult(item, index, file)),
  };
}
