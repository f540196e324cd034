/**
 * npm run check:template: the CloudFormation template against AWS's own checkers. The template is packaged by the real
 * osls CLI, offline, under each parameter set the deployment test uses (test/deploy/parameter-sets.ts), and every
 * packaged template is read by cfn-lint (which must report no error) and checkov (which must report no failed check;
 * the checks that do not apply are skipped in serverless.yml, each with its reason). Exits 1 when one does not pass.
 *
 * The two are Python tools, pinned in scripts/check-template.requirements.txt and installed on first use into a venv
 * in the gitignored .cache/python-<digest of that file and of the Python>, reused by every later run, as the
 * real-cluster suite caches its Go build. `npm test` never runs this, so it needs no Python.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServiceFolder, packageService, REGION } from '../test/deploy/package.ts';
import { TEMPLATE_PARAMETER_SETS } from '../test/deploy/parameter-sets.ts';
import { runProcess } from '../test/support/processes.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REQUIREMENTS = join(ROOT, 'scripts', 'check-template.requirements.txt');
const PYTHON = 'python3';
// The two templates osls writes: the first stack (the deployment bucket alone) and the whole stack.
const CREATE_TEMPLATE = 'cloudformation-template-create-stack.json';
const UPDATE_TEMPLATE = 'cloudformation-template-update-stack.json';

/** Runs a command with its output shown as it comes; resolves with its exit code. */
function shown(command: string, args: readonly string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', resolve);
  });
}

/** The output of a command that must succeed; `what` names it in the error. */
async function succeeded(what: string, command: string, args: readonly string[]): Promise<string> {
  const run = await runProcess(command, args, { cwd: ROOT }).catch((error: unknown) => {
    throw new Error(`${what}: cannot run ${command} (${(error as Error).message})`, { cause: error });
  });
  if (run.code !== 0) throw new Error(`${what}: ${command} exited with ${run.code}:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

/**
 * The venv holding the pinned tools: the cached one when a venv of the same requirements and Python is there, else
 * one made now (in a scratch folder renamed into place, so an interrupted install is never taken for a finished one).
 * Its console scripts carry the scratch path in their first line, so they are run as `<venv>/bin/python SCRIPT`.
 */
async function pythonTools(): Promise<string> {
  const python = await succeeded('the template checks need Python 3 (cfn-lint and checkov are Python tools)', PYTHON, [
    '-c',
    'import sys; print(sys.version)',
  ]);
  const key = createHash('sha256')
    .update(await readFile(REQUIREMENTS))
    .update(python)
    .digest('hex')
    .slice(0, 12);
  const venv = join(ROOT, '.cache', `python-${key}`);
  if (existsSync(join(venv, 'installed.json'))) return venv;
  const scratch = `${venv}.building-${process.pid}`;
  console.log(`installing cfn-lint and checkov (${REQUIREMENTS}) into ${venv}`);
  await mkdir(join(ROOT, '.cache'), { recursive: true });
  try {
    await rm(scratch, { recursive: true, force: true });
    await succeeded('creating the venv', PYTHON, ['-m', 'venv', scratch]);
    await succeeded('installing the pinned tools', join(scratch, 'bin', 'python'), [
      '-m',
      'pip',
      'install',
      '--disable-pip-version-check',
      '--no-input',
      '--quiet',
      '--requirement',
      REQUIREMENTS,
    ]);
    await writeFile(join(scratch, 'installed.json'), `${JSON.stringify({ python, at: new Date().toISOString() })}\n`);
    await rm(venv, { recursive: true, force: true });
    await rename(scratch, venv);
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  }
  return venv;
}

/** Each parameter set's packaged template folder, by name. */
async function packagedTemplates(scratch: string): Promise<Map<string, string>> {
  const service = join(scratch, 'service');
  const home = join(scratch, 'home');
  await Promise.all([mkdir(service), mkdir(home)]);
  await createServiceFolder(service);
  const folders = new Map<string, string>();
  // One at a time: each package rewrites the service folder's dist/ and .serverless/.
  for (const [name, params] of Object.entries(TEMPLATE_PARAMETER_SETS)) {
    const folder = join(scratch, name);
    console.log(`packaging the template with the ${name} parameters: ${JSON.stringify(params)}`);
    await packageService(service, params, folder, home);
    folders.set(name, folder);
  }
  return folders;
}

async function main(): Promise<number> {
  const venv = await pythonTools();
  const tool = (script: string, args: readonly string[]) =>
    shown(join(venv, 'bin', 'python'), [join(venv, 'bin', script), ...args]);
  const scratch = await mkdtemp(join(tmpdir(), 'podmutation-template-check-'));
  const folders = await packagedTemplates(scratch);
  const failed: string[] = [];
  let checks = 0;
  for (const [name, folder] of folders) {
    checks += 2;
    console.log(`\ncfn-lint, ${name} parameters`);
    // Warnings are printed, errors fail: W3005 (a DependsOn a reference already implies) is osls's own output.
    const lint = await tool('cfn-lint', [
      '--regions',
      REGION,
      '--non-zero-exit-code',
      'error',
      join(folder, CREATE_TEMPLATE),
      join(folder, UPDATE_TEMPLATE),
    ]);
    if (lint !== 0) failed.push(`cfn-lint (${name})`);
    console.log(`\ncheckov, ${name} parameters`);
    // The update template only: the create template's bucket is the same one, which the update template's stack
    // takes over within the same deploy (with the skips serverless.yml gives it). No download: nothing leaves here.
    const check = await tool('checkov', [
      '--framework',
      'cloudformation',
      '--compact',
      '--quiet',
      '--skip-download',
      '--file',
      join(folder, UPDATE_TEMPLATE),
    ]);
    if (check !== 0) failed.push(`checkov (${name})`);
  }
  if (failed.length === 0) await rm(scratch, { recursive: true, force: true });
  else console.log(`\nthe packaged templates are kept in ${scratch}`);
  console.log(`\ntemplate checks: ${checks - failed.length} passed, ${failed.length} failed`);
  if (failed.length > 0) console.log(`failed: ${failed.join(', ')}`);
  return failed.length === 0 ? 0 : 1;
}

process.exitCode = await main().catch((error: unknown) => {
  console.error(`npm run check:template: ${error instanceof Error ? error.message : String(error)}`);
  return 2;
});
