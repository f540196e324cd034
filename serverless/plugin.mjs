/**
 * The project's Serverless plugin (serverless.yml `plugins`):
 *
 * - packaging always ships a fresh build: before `osls package` and `osls deploy` create the artifacts, and before
 *   `osls deploy function` packages one, it runs scripts/build.ts, the build of `npm run build`; it refuses to
 *   package the stage `local`, the offline profile;
 * - `${podmutation:...}` variables check parameters no CloudFormation condition can refuse: subnetIds and
 *   securityGroupIds become the sync function's VPC settings (one without the other fails the package), and
 *   createAccessEntry must be true or false, enforcement enforce or audit, reportIntervalMinutes 0 to 1440,
 *   provisionedConcurrency 0 to 1000, concurrencyQuota 100 to 1,000,000; they also derive the alarm thresholds that
 *   are a share of a limit (the concurrency quota, the admission function's timeout);
 * - before osls saves the template, the conditions serverless.yml's parameters already decide are rendered away
 *   (serverless/constant-conditions.mjs), so that the template holds only what CloudFormation will create;
 * - `osls offline` runs the local profile (serverless/local-profile.ts): the build, an embedded DynamoDB holding the
 *   rule files, and stand-ins for the CloudFormation references of the environment.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderConstantConditions } from './constant-conditions.mjs';

const BUILD_SCRIPT = fileURLToPath(new URL('../scripts/build.ts', import.meta.url));
const LOCAL_PROFILE = new URL('./local-profile.ts', import.meta.url).href;
// Lambda's limits on one function's VPC configuration, and the forms of the ids (Lambda's VpcConfig patterns).
const MAX_SUBNETS = 16;
const MAX_SECURITY_GROUPS = 5;
const SUBNET_ID = /^subnet-([a-z0-9]{8}|[a-z0-9]{17})$/;
const SECURITY_GROUP_ID = /^sg-([a-z0-9]{8}|[a-z0-9]{17})$/;
const EC2_ARN_PREFIX = 'arn:${AWS::Partition}:ec2:${AWS::Region}:${AWS::AccountId}';
// The default regional concurrency quota: more provisioned environments than that is a typo, and would fail the deploy
// on any account that has not raised it.
const MAX_PROVISIONED_CONCURRENCY = 1000;
// Lambda's smallest concurrency quota is 100 (new accounts may start there); a million is far above any raise.
const CONCURRENCY_QUOTA = { minimum: 100, maximum: 1_000_000 };
// Alarms on a limit fire at this share of it: early enough to act before Pods are admitted unmutated.
const NEAR_LIMIT = 0.8;

/**
 * Runs scripts/build.ts in a child process on the Node that runs osls, as `npm run build` does, writing into the
 * service's dist/. A child, not an import: the build's exit code, checks and output stay exactly those of
 * `npm run build`, and the osls process loads no TypeScript to package. The load-time measurement is skipped: it
 * informs, it never fails a build.
 */
function runBuild(serviceDir, ServerlessError) {
  const tsx = fileURLToPath(import.meta.resolve('tsx/cli'));
  const args = [tsx, BUILD_SCRIPT, '--outdir', join(serviceDir, 'dist'), '--skip-load-time'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: serviceDir, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', (error) =>
      reject(new ServerlessError(`the build (scripts/build.ts) could not start: ${error.message}`)),
    );
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new ServerlessError(
            `the build (scripts/build.ts) failed (${signal ?? `exit code ${code}`}); nothing was packaged`,
          ),
        );
    });
  });
}

/** The ids of a comma-separated parameter; every entry must have the given form. */
function idList(name, text, pattern, max, ServerlessError) {
  if (text === '') return [];
  const ids = text.split(',').map((id) => id.trim());
  const wrong = ids.filter((id) => !pattern.test(id));
  if (wrong.length > 0) {
    throw new ServerlessError(
      `the ${name} parameter holds ${wrong.map((id) => JSON.stringify(id)).join(', ')}; expected comma-separated ids of the form ${pattern.source}`,
    );
  }
  if (new Set(ids).size !== ids.length) throw new ServerlessError(`the ${name} parameter names an id twice: "${text}"`);
  if (ids.length > max)
    throw new ServerlessError(`the ${name} parameter names ${ids.length} ids; a Lambda function takes at most ${max}`);
  return ids;
}

/** The sync function's VPC from the two parameters: none when both are empty, and an error when only one is set. */
function syncVpc(subnetIdsText, securityGroupIdsText, ServerlessError) {
  const subnetIds = idList('subnetIds', String(subnetIdsText), SUBNET_ID, MAX_SUBNETS, ServerlessError);
  const securityGroupIds = idList(
    'securityGroupIds',
    String(securityGroupIdsText),
    SECURITY_GROUP_ID,
    MAX_SECURITY_GROUPS,
    ServerlessError,
  );
  if (subnetIds.length === 0 && securityGroupIds.length === 0) return undefined;
  if (subnetIds.length === 0 || securityGroupIds.length === 0) {
    const [given, missing] =
      subnetIds.length === 0 ? ['securityGroupIds', 'subnetIds'] : ['subnetIds', 'securityGroupIds'];
    throw new ServerlessError(
      `${given} is set but ${missing} is not: the sync function joins a VPC only with both ` +
        '(--param="subnetIds=subnet-...,subnet-..." --param="securityGroupIds=sg-..."), or neither to stay outside one',
    );
  }
  return { subnetIds, securityGroupIds };
}

/** A parameter that must be one of a few words (true/false for a CloudFormation condition, enforce/audit). */
function choice(name, value, choices, ServerlessError) {
  const text = String(value);
  if (!choices.includes(text))
    throw new ServerlessError(`the ${name} parameter is "${text}"; expected ${choices.join(' or ')}`);
  return text;
}

/** A whole-number parameter within a range, as the string an environment variable holds. */
function wholeNumber(name, value, minimum, maximum, ServerlessError) {
  const text = String(value);
  if (!/^\d+$/.test(text) || Number(text) < minimum || Number(text) > maximum) {
    throw new ServerlessError(
      `the ${name} parameter is "${text}"; expected a whole number from ${minimum} to ${maximum}`,
    );
  }
  return text;
}

/** The resources ec2:CreateNetworkInterface needs: new interfaces, and only the given subnets and security groups. */
function networkInterfaceResources(vpc) {
  if (vpc === undefined) return [];
  return [
    `${EC2_ARN_PREFIX}:network-interface/*`,
    ...vpc.subnetIds.map((id) => `${EC2_ARN_PREFIX}:subnet/${id}`),
    ...vpc.securityGroupIds.map((id) => `${EC2_ARN_PREFIX}:security-group/${id}`),
  ].map((arn) => ({ 'Fn::Sub': arn }));
}

/** A whole-number parameter in [minimum, maximum], as a number. */
const wholeNumberParameter = (name, minimum, maximum) => async (context) =>
  Number(wholeNumber(name, await context.resolveVariable(`param:${name}`), minimum, maximum, context.ServerlessError));

const syncVpcOf = async ({ resolveVariable, ServerlessError }) =>
  syncVpc(await resolveVariable('param:subnetIds'), await resolveVariable('param:securityGroupIds'), ServerlessError);

/** The `${podmutation:NAME}` variables serverless.yml reads, each checked once here. */
const VARIABLES = {
  // Required, with no default: the one line a packaging without it prints.
  async clusterName({ resolveVariable, ServerlessError }) {
    const name = await resolveVariable('param:clusterName').catch(() => undefined);
    if (typeof name !== 'string' || name === '') {
      throw new ServerlessError(
        'clusterName is required: the EKS cluster name (or any id in kubeconfig mode); pass --param="clusterName=NAME"',
      );
    }
    return name;
  },
  // API Gateway's account limits are 10,000 requests a second and a burst of 5,000 (docs/capacity.md).
  throttleRateLimit: wholeNumberParameter('throttleRateLimit', 1, 10_000),
  throttleBurstLimit: wholeNumberParameter('throttleBurstLimit', 1, 5_000),
  // The one reference to alarmTopicArn that decides whether alarms notify: a stage without one is said once.
  async alarmTopicArn({ resolveVariable, warn }) {
    const topic = String(await resolveVariable('param:alarmTopicArn'));
    if (topic === '' && (await resolveVariable('sls:stage')) !== 'local') {
      warn(
        'no alarmTopicArn parameter: the stack\'s alarms change state but notify no one; pass --param="alarmTopicArn=arn:aws:sns:REGION:ACCOUNT:TOPIC"',
      );
    }
    return topic;
  },
  // false keeps the function out of any VPC: no VpcConfig at all.
  syncVpc: async (context) => (await syncVpcOf(context)) ?? false,
  syncNetworkInterfaceResources: async (context) => networkInterfaceResources(await syncVpcOf(context)),
  createAccessEntry: async ({ resolveVariable, ServerlessError }) =>
    choice('createAccessEntry', await resolveVariable('param:createAccessEntry'), ['true', 'false'], ServerlessError),
  // Checked here as well as at the function's start (ENFORCEMENT): a typo fails the package, not every cold start.
  enforcement: async ({ resolveVariable, ServerlessError }) =>
    choice('enforcement', await resolveVariable('param:enforcement'), ['enforce', 'audit'], ServerlessError),
  reportIntervalMinutes: async ({ resolveVariable, ServerlessError }) =>
    wholeNumber(
      'reportIntervalMinutes',
      await resolveVariable('param:reportIntervalMinutes'),
      0,
      1440,
      ServerlessError,
    ),
  // A number, as the function schema's provisionedConcurrency takes; 0 creates no version and no alias.
  provisionedConcurrency: wholeNumberParameter('provisionedConcurrency', 0, MAX_PROVISIONED_CONCURRENCY),
  async concurrencyAlarmThreshold({ resolveVariable, ServerlessError }) {
    const quota = wholeNumber(
      'concurrencyQuota',
      await resolveVariable('param:concurrencyQuota'),
      CONCURRENCY_QUOTA.minimum,
      CONCURRENCY_QUOTA.maximum,
      ServerlessError,
    );
    return Math.floor(Number(quota) * NEAR_LIMIT);
  },
  // Milliseconds, from the admission function's timeout in seconds.
  admissionSlowMs: async ({ resolveVariable }) =>
    Math.floor(Number(await resolveVariable('self:functions.admission.timeout')) * 1000 * NEAR_LIMIT),
};

/** The plugin osls loads from serverless.yml. */
export default class PodMutationPlugin {
  #serverless;
  #options;
  #log;
  #localProfile;

  constructor(serverless, options, utils) {
    this.#serverless = serverless;
    this.#options = options;
    this.#log = utils?.log ?? { notice: console.error, info: console.error, warning: console.error };
    const ServerlessError = serverless.classes.Error;
    const build = () => runBuild(serverless.serviceDir, ServerlessError);
    const buildToPackage = () => {
      if (serverless.service.provider.stage === 'local') {
        throw new ServerlessError(
          'the local stage is the offline profile (osls offline --stage local); package and deploy a stage of a real cluster',
        );
      }
      return build();
    };
    const startLocalProfile = async () => {
      await build();
      await this.#startLocalProfile();
    };
    this.hooks = {
      'before:package:createDeploymentArtifacts': buildToPackage,
      'before:package:function:package': buildToPackage,
      // After every merge of serverless.yml's resources, before osls saves the template: constant conditions go.
      'before:aws:package:finalize:saveServiceState': () => {
        const { provider } = serverless.service;
        provider.compiledCloudFormationTemplate = renderConstantConditions(provider.compiledCloudFormationTemplate);
      },
      // `osls offline` runs the lifecycle offline:start; `osls offline start` runs offline:start:init..end.
      'before:offline:start': startLocalProfile,
      'before:offline:start:init': startLocalProfile,
      'before:offline:start:end': () => this.#localProfile?.close(),
    };
    const warn = (line) => (this.#log.warning ?? this.#log.notice)(line);
    this.configurationVariablesSources = {
      podmutation: {
        async resolve({ address, resolveVariable }) {
          const resolver = Object.hasOwn(VARIABLES, address) ? VARIABLES[address] : undefined;
          if (resolver === undefined) {
            const names = Object.keys(VARIABLES);
            throw new ServerlessError(
              `\${podmutation:${address}} is not a variable of serverless/plugin.mjs; expected ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`,
            );
          }
          return { value: await resolver({ resolveVariable, ServerlessError, warn }) };
        },
      },
    };
  }

  async #startLocalProfile() {
    // Loaded only here: tsx compiles the TypeScript the local profile shares with the local server.
    const { tsImport } = await import('tsx/esm/api');
    const { startLocalProfile } = await tsImport(LOCAL_PROFILE, import.meta.url);
    const service = this.#serverless.service;
    const offline = service.custom?.['serverless-offline'] ?? {};
    const host = this.#options.host ?? offline.host ?? 'localhost';
    const port = this.#options.httpPort ?? offline.httpPort ?? 3000;
    const lambdaPort = this.#options.lambdaPort ?? offline.lambdaPort ?? 3002;
    try {
      this.#localProfile = await startLocalProfile({
        service,
        serviceDir: this.#serverless.serviceDir,
        settings: service.custom?.localProfile ?? {},
        baseUrl: `http://${host}:${port}`,
        lambdaUrl: `http://${host}:${lambdaPort}`,
        report: (line) => this.#log.notice(line),
      });
    } catch (error) {
      throw new this.#serverless.classes.Error(
        `osls offline: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
