import { spawn } from 'node:child_process';

/** What a finished process printed and how it ended. */
export interface ProcessRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end, `input` on its standard input (closed at once when absent), and collects its output. */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { readonly input?: string; readonly env?: NodeJS.ProcessEnv; readonly cwd?: string } = {},
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.env ?? process.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
