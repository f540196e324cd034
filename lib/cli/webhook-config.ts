import { X509Certificate } from 'node:crypto';
import { readFlagFile } from './io.ts';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { MalformedInputError } from '../errors/index.ts';
import { previewInput } from '../json/index.ts';
import { SECRET_ARN } from '../syntax/index.ts';
import { WEBHOOK_DEFAULTS, webhookConfigurationYaml, type FailurePolicy } from '../webhook/index.ts';
import { defineCommand, EXIT, onRun, required, type CliContext } from './command.ts';

interface WebhookConfigFlags {
  readonly url: string;
  readonly token?: string;
  readonly tokenSecret?: string;
  readonly failurePolicy: FailurePolicy;
  readonly timeout: number;
  readonly name: string;
  readonly caBundle?: string;
}

const FAILURE_POLICIES: readonly FailurePolicy[] = ['Ignore', 'Fail'];

// A secret ARN names its region (arn:aws:secretsmanager:<region>:...), which the secret reader uses: no AWS_REGION needed.
function checkedSecretArn(arn: string): string {
  if (!SECRET_ARN.pattern.test(arn))
    throw new MalformedInputError(`--token-secret must be ${SECRET_ARN.form}, got ${previewInput(arn)}`);
  return arn;
}

// commander names the flag and what was typed (Number("abc") is NaN, which said "got null"). The range (1 to
// 30) is the webhook module's, checked when the configuration is rendered.
function wholeSeconds(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError('Expected a whole number of seconds.');
  return Number(text);
}

/**
 * The PEM text of `--ca-bundle FILE`, each certificate parsed, so that a damaged file is refused here rather than
 * reaching the API server, whose calls would then fail TLS verification with the Pods admitted by failurePolicy.
 */
async function readCaBundle(file: string): Promise<string> {
  const text = await readFlagFile(file, '--ca-bundle');
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[^-]*-----END CERTIFICATE-----/g) ?? [];
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new MalformedInputError(
        `--ca-bundle ${file}: certificate ${index + 1} does not parse (${(error as Error).message})`,
        {
          cause: error,
          context: { flag: '--ca-bundle' },
        },
      );
    }
  });
  return text;
}

/** Prints the MutatingWebhookConfiguration for the deployed endpoint. */
async function webhookConfig(flags: WebhookConfigFlags, { streams }: CliContext): Promise<number> {
  if ((flags.token === undefined) === (flags.tokenSecret === undefined)) {
    throw new MalformedInputError('webhook-config needs exactly one of --token T or --token-secret ARN');
  }
  let token = flags.token;
  if (flags.tokenSecret !== undefined) {
    const arn = checkedSecretArn(flags.tokenSecret);
    // Loaded on use: the Secrets Manager client would slow the start of every other command.
    const { readCurrentToken } = await import('../endpoint/index.ts');
    token = await readCurrentToken(arn);
  }
  const { url, failurePolicy, timeout: timeoutSeconds, name } = flags;
  const caBundle = flags.caBundle === undefined ? undefined : await readCaBundle(flags.caBundle);
  streams.stdout.write(
    webhookConfigurationYaml({
      url,
      token: token!,
      failurePolicy,
      timeoutSeconds,
      name,
      ...(caBundle === undefined ? {} : { caBundle }),
    }),
  );
  return EXIT.ok;
}

/** `podmutation webhook-config`. */
export function registerWebhookConfig(program: Command, context: CliContext): void {
  const command = defineCommand(program, 'webhook-config', {
    summary: 'print the MutatingWebhookConfiguration for the deployed endpoint',
    description:
      'Prints the MutatingWebhookConfiguration that registers the deployed endpoint (the WebhookBaseUrl output) with the ' +
      'cluster: Pod CREATE only, reinvocationPolicy Never, the webhook token in the URL path (read from the secret with ' +
      '--token-secret). Pipe it to kubectl apply -f -.',
    examples: [
      'podmutation webhook-config --url https://abc123.execute-api.eu-west-1.amazonaws.com --token-secret arn:aws:secretsmanager:eu-west-1:123456789012:secret:podmutation-token-AbCdEf | kubectl apply -f -',
      'podmutation webhook-config --url https://127.0.0.1:8443 --token "$TOKEN" --ca-bundle ca.pem | kubectl apply -f -',
    ],
    exits: { 0: 'printed', 2: 'usage error, an invalid value, or a token secret or CA bundle that cannot be read' },
  });
  command
    .addOption(required(new Option('--url <base>', 'the WebhookBaseUrl output of the deployment')))
    .addOption(
      new Option(
        '--token <token>',
        'the webhook token (prefer --token-secret: a token on a command line lands in shell history)',
      ).conflicts('tokenSecret'),
    )
    .addOption(
      new Option(
        '--token-secret <arn>',
        "the webhook token secret's ARN (the WebhookTokenSecretArn output); its AWSCURRENT value is read",
      ),
    )
    .addOption(
      new Option('--failure-policy <policy>', 'what the API server does when the webhook cannot answer')
        .choices(FAILURE_POLICIES)
        .default(WEBHOOK_DEFAULTS.failurePolicy),
    )
    .addOption(
      new Option('--timeout <seconds>', 'the webhook timeout, 1 to 30 seconds')
        .argParser(wholeSeconds)
        .default(WEBHOOK_DEFAULTS.timeoutSeconds),
    )
    .addOption(
      new Option('--name <name>', 'the name of the MutatingWebhookConfiguration').default(WEBHOOK_DEFAULTS.name),
    )
    .addOption(
      new Option(
        '--ca-bundle <file>',
        "PEM certificate of the private CA that signed the endpoint's certificate (a local serve --tls-cert, kind); not needed for the deployed API Gateway URL",
      ),
    );
  onRun<WebhookConfigFlags>(command, (flags) => webhookConfig(flags, context));
}
