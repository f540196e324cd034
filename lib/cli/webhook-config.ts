import { parseArgs } from 'node:util';
import { MalformedInputError } from '../errors/index.ts';
import { readCurrentToken } from '../endpoint/index.ts';
import { previewInput, SECRET_ARN } from '../values/index.ts';
import { WEBHOOK_DEFAULTS, webhookConfigurationYaml } from '../webhook/index.ts';
import type { CliStreams } from './io.ts';

// A secret ARN names its region (arn:aws:secretsmanager:<region>:...), which the secret reader uses: no AWS_REGION needed.
function checkedSecretArn(arn: string): string {
  if (!SECRET_ARN.pattern.test(arn)) throw new MalformedInputError(`--token-secret must be ${SECRET_ARN.form}, got ${previewInput(arn)}`);
  return arn;
}

/**
 * `podmutation webhook-config --url BASE (--token T | --token-secret ARN) [--failure-policy Ignore|Fail]
 * [--timeout S] [--name N]`: prints the MutatingWebhookConfiguration for the deployed endpoint.
 */
export async function webhookConfigCommand(args: readonly string[], streams: CliStreams): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      'token-secret': { type: 'string' },
      'failure-policy': { type: 'string', default: WEBHOOK_DEFAULTS.failurePolicy },
      timeout: { type: 'string', default: String(WEBHOOK_DEFAULTS.timeoutSeconds) },
      name: { type: 'string', default: WEBHOOK_DEFAULTS.name },
    },
    allowPositionals: false,
  });
  if (positionals.length > 0) throw new MalformedInputError('webhook-config takes no positional arguments');
  if (values.url === undefined) throw new MalformedInputError('webhook-config needs --url BASE (the WebhookBaseUrl output of the deployment)');
  if ((values.token === undefined) === (values['token-secret'] === undefined)) {
    throw new MalformedInputError('webhook-config needs exactly one of --token T or --token-secret ARN');
  }
  const failurePolicy = values['failure-policy'];
  if (failurePolicy !== 'Ignore' && failurePolicy !== 'Fail') throw new MalformedInputError(`--failure-policy must be Ignore or Fail (got ${previewInput(failurePolicy)})`);
  // The flag's own text in the error: Number("abc") is NaN, which says nothing about what was typed (issue #13).
  if (!/^\d+$/.test(values.timeout)) throw new MalformedInputError(`--timeout must be a whole number of seconds (got ${previewInput(values.timeout)})`);
  const timeoutSeconds = Number(values.timeout);
  const secretArn = values['token-secret'];
  const token = secretArn === undefined ? values.token! : await readCurrentToken(checkedSecretArn(secretArn));
  streams.stdout.write(
    webhookConfigurationYaml({ url: values.url, token, failurePolicy: failurePolicy, timeoutSeconds, name: values.name }),
  );
  return 0;
}
