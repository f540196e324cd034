/** A loopback CloudFormation that answers DescribeStacks (the awsQuery protocol, XML) from a map of stack outputs. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';

const XMLNS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

function escaped(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function stackXml(name: string, outputs: Readonly<Record<string, string>>): string {
  const members = Object.entries(outputs)
    .map(
      ([key, value]) =>
        `<member><OutputKey>${escaped(key)}</OutputKey><OutputValue>${escaped(value)}</OutputValue></member>`,
    )
    .join('');
  return `<member><StackName>${escaped(name)}</StackName><StackId>arn:aws:cloudformation:eu-west-1:123456789012:stack/${escaped(name)}/1</StackId><CreationTime>2026-12-01T10:00:00Z</CreationTime><StackStatus>UPDATE_COMPLETE</StackStatus><Outputs>${members}</Outputs></member>`;
}

/** Starts the fake; `stacks` maps a stack name to its outputs. */
export async function startFakeCloudFormation(stacks: Map<string, Readonly<Record<string, string>>>) {
  const requested: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const name = form.get('StackName') ?? '';
      requested.push(`${form.get('Action') ?? ''} ${name}`);
      const outputs = stacks.get(name);
      response.setHeader('content-type', 'text/xml');
      if (form.get('Action') !== 'DescribeStacks' || outputs === undefined) {
        response.statusCode = 400;
        response.end(
          `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${escaped(name)} does not exist</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`,
        );
        return;
      }
      response.end(
        `<DescribeStacksResponse xmlns="${XMLNS}"><DescribeStacksResult><Stacks>${stackXml(name, outputs)}</Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></DescribeStacksResponse>`,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requested: () => [...requested],
    client: () =>
      new CloudFormationClient({
        endpoint: url,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
        maxAttempts: 1,
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
