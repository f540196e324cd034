/**
 * Reading a packaged CloudFormation template: the check that no condition is left in it (the plugin renders them away
 * for each parameter set), expressions rendered in Fn::Sub notation, IAM grants, alarm metrics.
 */

/** A parsed template; properties are read loosely here and asserted by the tests. */
interface Template {
  readonly Resources: Readonly<Record<string, Resource>>;
  readonly Outputs: Readonly<Record<string, { readonly Value: unknown; readonly Description?: string }>>;
  readonly Conditions?: Readonly<Record<string, unknown>>;
}

interface Resource {
  readonly Type: string;
  readonly Properties: Readonly<Record<string, unknown>>;
  readonly DependsOn?: string | readonly string[];
  readonly Condition?: string;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
}

/** An IAM policy document as a template holds it: one statement or a list of them. */
interface PolicyDocument {
  readonly Statement: PolicyStatement | readonly PolicyStatement[];
}

/** An IAM policy statement; Action and Resource are one value or a list, resources possibly expressions. */
interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect?: unknown;
  readonly Action?: unknown;
  readonly Resource?: unknown;
  readonly [key: string]: unknown;
}

/** An inline policy of an AWS::IAM::Role. */
interface InlinePolicy {
  readonly PolicyName: string;
  readonly PolicyDocument: PolicyDocument;
}

/** A dimension of a CloudWatch metric; the value may be an expression. */
interface MetricDimension {
  readonly Name: string;
  readonly Value: unknown;
}

/** One query of an alarm's metric math: a MetricStat, or an expression over other queries. */
interface MetricDataQuery {
  readonly Id: string;
  readonly Expression?: string;
  readonly ReturnData?: boolean;
  readonly MetricStat?: {
    readonly Metric: {
      readonly Namespace: string;
      readonly MetricName: string;
      readonly Dimensions?: readonly MetricDimension[];
    };
    readonly Stat: string;
    readonly Period: number;
  };
}

/** The properties of an AWS::CloudWatch::Alarm read here: a single metric, or metric math (Metrics). */
interface AlarmProperties {
  readonly Namespace: string;
  readonly MetricName: string;
  readonly Dimensions?: readonly MetricDimension[];
  readonly Statistic?: string;
  readonly ExtendedStatistic?: string;
  readonly Period: number;
  readonly Metrics?: readonly MetricDataQuery[];
  readonly [property: string]: unknown;
}

/** One Allow statement of a role, its resources rendered (see renderExpression). */
interface RoleStatement {
  readonly policy: string;
  readonly effect: unknown;
  readonly actions: readonly string[];
  readonly resources: readonly string[];
  /** Keys other than Sid, Effect, Action and Resource (NotAction, NotResource, Condition, Principal...). */
  readonly otherKeys: readonly string[];
  /** The statement's Condition, as written; undefined when it has none. */
  readonly condition: unknown;
}

/** One metric an alarm reads, dimensions rendered as `name=value`. */
interface AlarmMetric {
  readonly id: string;
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: readonly string[];
  /** Statistic or ExtendedStatistic of a single-metric alarm; undefined when the alarm names neither. */
  readonly stat: string | undefined;
  readonly period: number;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyKey(value: Readonly<Record<string, unknown>>): string | undefined {
  const keys = Object.keys(value);
  return keys.length === 1 ? keys[0] : undefined;
}

/** The paths in `value` of what only a condition decides: an Fn::If, an AWS::NoValue. */
function undecided(value: unknown, path: string): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => undecided(item, `${path}[${index}]`));
  if (!isRecord(value)) return [];
  if (value['Ref'] === 'AWS::NoValue') return [path];
  return Object.entries(value).flatMap(([key, item]) =>
    key === 'Fn::If' ? [`${path}.${key}`] : undecided(item, `${path}.${key}`),
  );
}

/**
 * The template CloudFormation acts on, which is the packaged one: the project's plugin renders the conditions the
 * parameters decide away before osls saves it (serverless/constant-conditions.mjs). Throws when anything is left that
 * only a condition decides.
 */
function effectiveTemplate(template: Template): Template {
  const left = [
    ...(template.Conditions === undefined ? [] : ['Conditions']),
    // A resource's or output's own Condition; an IAM statement's Condition is another thing.
    ...Object.entries({ ...template.Resources, ...template.Outputs })
      .filter(([, entry]) => 'Condition' in entry)
      .map(([id]) => `${id}.Condition`),
    ...undecided(template.Resources, 'Resources'),
    ...undecided(template.Outputs ?? {}, 'Outputs'),
  ];
  if (left.length > 0) throw new Error(`the packaged template still holds conditions: ${left.join(', ')}`);
  return template;
}

/**
 * An expression as text in Fn::Sub notation: `{Ref: X}` is `${X}`, `{Fn::GetAtt: [X, Y]}` is `${X.Y}`, Fn::Sub
 * keeps its own text (its variable map substituted), Fn::Join joins; anything else fails.
 */
function renderExpression(expression: unknown): string {
  if (typeof expression === 'string') return expression;
  if (typeof expression === 'number') return String(expression);
  if (!isRecord(expression)) throw new Error(`cannot render ${JSON.stringify(expression)}`);
  const key = onlyKey(expression);
  const argument = key === undefined ? undefined : expression[key];
  if (key === 'Ref' && typeof argument === 'string') return `\${${argument}}`;
  if (key === 'Fn::GetAtt' && Array.isArray(argument)) return `\${${argument.join('.')}}`;
  if (key === 'Fn::Sub' && typeof argument === 'string') return argument;
  if (key === 'Fn::Sub' && Array.isArray(argument) && typeof argument[0] === 'string' && isRecord(argument[1])) {
    const variables = argument[1];
    return argument[0].replace(/\$\{([^}!]+)\}/g, (whole, name: string) =>
      Object.hasOwn(variables, name) ? renderExpression(variables[name]) : whole,
    );
  }
  if (key === 'Fn::Join' && Array.isArray(argument) && typeof argument[0] === 'string' && Array.isArray(argument[1])) {
    return argument[1].map(renderExpression).join(argument[0]);
  }
  throw new Error(`cannot render ${JSON.stringify(expression)}`);
}

function asList<T>(value: T | readonly T[]): readonly T[] {
  return isList(value) ? value : [value];
}

function isList<T>(value: T | readonly T[]): value is readonly T[] {
  return Array.isArray(value);
}

/** The logical ids of resources of a type, sorted. */
function resourcesOfType(template: Template, type: string): string[] {
  return Object.keys(template.Resources)
    .filter((id) => template.Resources[id]!.Type === type)
    .sort();
}

function resource(template: Template, id: string): Resource {
  const found = template.Resources[id];
  if (found === undefined) throw new Error(`the template has no resource ${id}`);
  return found;
}

/** Every policy statement granted to a role: its inline policies and IAM policies attached to it. */
function roleStatements(template: Template, roleId: string): RoleStatement[] {
  const documents: { policy: string; document: PolicyDocument }[] = [];
  for (const policy of (resource(template, roleId).Properties['Policies'] ?? []) as readonly InlinePolicy[]) {
    documents.push({ policy: `${roleId}/${policy.PolicyName}`, document: policy.PolicyDocument });
  }
  for (const id of [
    ...resourcesOfType(template, 'AWS::IAM::Policy'),
    ...resourcesOfType(template, 'AWS::IAM::ManagedPolicy'),
  ]) {
    const properties = resource(template, id).Properties;
    const roles = asList(properties['Roles'] ?? []).map(renderExpression);
    if (roles.includes(`\${${roleId}}`))
      documents.push({ policy: id, document: properties['PolicyDocument'] as PolicyDocument });
  }
  return documents.flatMap(({ policy, document }) =>
    asList(document.Statement).map((statement) => ({
      policy,
      effect: statement.Effect,
      actions: asList(statement.Action ?? []).map(String),
      resources: asList(statement.Resource ?? []).map(renderExpression),
      otherKeys: Object.keys(statement).filter((key) => !['Sid', 'Effect', 'Action', 'Resource'].includes(key)),
      condition: (statement as { Condition?: unknown }).Condition,
    })),
  );
}

/** A role's grants as sorted `action on resource` lines. */
function roleGrants(template: Template, roleId: string): string[] {
  return roleStatements(template, roleId)
    .flatMap((statement) =>
      statement.actions.flatMap((action) => statement.resources.map((arn) => `${action} on ${arn}`)),
    )
    .sort();
}

/** The logical id of the role a function runs as (its Role must be `{Fn::GetAtt: [role, Arn]}`). */
function functionRole(template: Template, functionId: string): string {
  const role = renderExpression(resource(template, functionId).Properties['Role']);
  const match = /^\$\{([A-Za-z0-9]+)\.Arn\}$/.exec(role);
  if (match?.[1] === undefined) throw new Error(`${functionId} runs as ${role}, not a role of this template`);
  return match[1];
}

/** The logical id of the log group Lambda writes a function's logs to (/aws/lambda/<FunctionName>). */
function functionLogGroup(template: Template, functionId: string): string {
  const name = `/aws/lambda/${String(resource(template, functionId).Properties['FunctionName'])}`;
  const id = resourcesOfType(template, 'AWS::Logs::LogGroup').find(
    (candidate) => resource(template, candidate).Properties['LogGroupName'] === name,
  );
  if (id === undefined) throw new Error(`no log group ${name} for ${functionId}`);
  return id;
}

/** The ARN of every log stream of a log group, rendered: the only wildcard a role may hold. */
function logStreamsArn(logGroupId: string): string {
  return `arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:\${${logGroupId}}:*`;
}

function dimensionsOf(dimensions: readonly MetricDimension[] | undefined): string[] {
  return asList(dimensions ?? []).map((dimension) => `${dimension.Name}=${renderExpression(dimension.Value)}`);
}

/** The metrics an alarm reads: its single metric, or every MetricStat of its metric math. */
function alarmMetrics(alarm: Resource): AlarmMetric[] {
  const properties = alarm.Properties as AlarmProperties;
  if (properties.Metrics === undefined) {
    return [
      {
        id: 'metric',
        namespace: properties.Namespace,
        metricName: properties.MetricName,
        dimensions: dimensionsOf(properties.Dimensions),
        stat: properties.Statistic ?? properties.ExtendedStatistic,
        period: properties.Period,
      },
    ];
  }
  return properties.Metrics.flatMap(({ Id: id, MetricStat: metricStat }) =>
    metricStat === undefined
      ? []
      : [
          {
            id,
            namespace: metricStat.Metric.Namespace,
            metricName: metricStat.Metric.MetricName,
            dimensions: dimensionsOf(metricStat.Metric.Dimensions),
            stat: metricStat.Stat,
            period: metricStat.Period,
          },
        ],
  );
}

/** What an alarm compares: its metric math expression, or the id of its single metric. */
function alarmExpression(alarm: Resource): string {
  const queries = (alarm.Properties as AlarmProperties).Metrics;
  if (queries === undefined) return 'metric';
  const returned = queries.filter((query) => query.ReturnData !== false);
  const [only] = returned;
  if (returned.length !== 1 || only === undefined)
    throw new Error(`alarm returns ${returned.length} series; CloudWatch needs exactly one`);
  return only.Expression ?? only.Id;
}

/** One metric value as a function emitted it, within one period of an alarm. */
interface EmittedMetric {
  readonly name: string;
  readonly value: number;
}

function statistic(stat: string | undefined, values: readonly number[]): number {
  switch (stat) {
    case 'SampleCount':
      return values.length;
    case 'Sum':
      return values.reduce((total, value) => total + value, 0);
    case 'Minimum':
      return Math.min(...values);
    case 'Maximum':
      return Math.max(...values);
    case 'Average':
      return values.reduce((total, value) => total + value, 0) / values.length;
    default:
      throw new Error(`statistic ${String(stat)} cannot be evaluated offline`);
  }
}

const BREACHES: Readonly<Record<string, (value: number, threshold: number) => boolean>> = {
  LessThanThreshold: (value, threshold) => value < threshold,
  LessThanOrEqualToThreshold: (value, threshold) => value <= threshold,
  GreaterThanThreshold: (value, threshold) => value > threshold,
  GreaterThanOrEqualToThreshold: (value, threshold) => value >= threshold,
};

/**
 * What an alarm's metric math reads over one period in which these metrics were emitted (every metric of one
 * namespace and dimension set), and whether that breaches its threshold. Statistics SampleCount, Sum, Minimum, Maximum
 * and Average; an expression of ids and numbers joined by + and -. Anything else throws, so that a change of the alarm
 * is noticed rather than misread.
 */
function evaluateAlarm(
  alarm: Resource,
  emitted: readonly EmittedMetric[],
): { readonly value: number; readonly breaching: boolean } {
  const series = new Map(
    alarmMetrics(alarm).map((metric) => [
      metric.id,
      statistic(
        metric.stat,
        emitted.filter(({ name }) => name === metric.metricName).map(({ value }) => value),
      ),
    ]),
  );
  const expression = alarmExpression(alarm);
  const tokens = expression.split(/\s*([+-])\s*/).filter((token) => token !== '');
  let value = 0;
  let sign = 1;
  for (const token of tokens) {
    if (token === '+' || token === '-') {
      sign = token === '+' ? 1 : -1;
      continue;
    }
    const operand = /^\d+(\.\d+)?$/.test(token) ? Number(token) : series.get(token);
    if (operand === undefined) throw new Error(`expression ${expression}: ${token} cannot be evaluated offline`);
    value += sign * operand;
  }
  const properties = alarm.Properties as AlarmProperties;
  const breaches = BREACHES[String(properties['ComparisonOperator'])];
  if (breaches === undefined)
    throw new Error(`comparison ${String(properties['ComparisonOperator'])} cannot be evaluated offline`);
  return { value, breaching: breaches(value, Number(properties['Threshold'])) };
}

export {
  evaluateAlarm,
  effectiveTemplate,
  renderExpression,
  resourcesOfType,
  resource,
  roleStatements,
  roleGrants,
  functionRole,
  functionLogGroup,
  logStreamsArn,
  alarmMetrics,
  alarmExpression,
};
export type { Template, Resource, PolicyDocument, PolicyStatement, RoleStatement, AlarmMetric, EmittedMetric };
