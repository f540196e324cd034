/**
 * Packaging as a user does it, offline: a scratch copy of the project (serverless.yml, its plugin, the build and the
 * sources it bundles), the real osls CLI with no AWS credentials, which builds before it packages, and the zip
 * artifacts read back from their central directory.
 */
import { copyFile, cp, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, inflateRawSync } from 'node:zlib';
import { compareCodeUnits } from '../../lib/text/index.ts';
import type { Template } from './template.ts';
import { runProcess, type ProcessRun } from '../support/processes.ts';

/** One file as a function ships it, path relative to the service folder with "/" separators. */
interface ShippedFile {
  readonly path: string;
  readonly size: number;
  readonly crc32: number;
}

/** A file inside a zip, decompressed. */
interface ZipEntry extends ShippedFile {
  readonly content: Buffer;
}

/** How one CLI run ended. */
type CliResult = ProcessRun;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OSLS_CLI = join(ROOT, 'node_modules', 'osls', 'bin', 'serverless.js');
const STAGE = 'ci';
const REGION = 'eu-west-1';

// What packaging and `osls offline` read: the configuration, its plugin, the build and everything it bundles, and the
// example rules the local profile publishes. node_modules is linked, not copied.
const SERVICE_FILES = ['serverless.yml', 'package.json', 'tsconfig.json', 'scripts/build.ts', 'scripts/measure.ts'];
const SERVICE_FOLDERS = ['serverless', 'functions', 'lib', 'examples'];

/** Copies the project into a scratch service folder (without dist/), as a clone of the repository holds it. */
async function createServiceFolder(folder: string): Promise<void> {
  await mkdir(join(folder, 'scripts'), { recursive: true });
  await Promise.all([
    ...SERVICE_FILES.map((file) => copyFile(join(ROOT, file), join(folder, file))),
    ...SERVICE_FOLDERS.map((name) => cp(join(ROOT, name), join(folder, name), { recursive: true })),
    symlink(join(ROOT, 'node_modules'), join(folder, 'node_modules'), 'dir'),
  ]);
}

/**
 * An environment with no AWS credentials or profile anywhere: any call to AWS would fail the package. HOME is a
 * scratch folder so no ~/.aws or ~/.serverless of the machine takes part.
 */
function offlineEnvironment(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    AWS_CONFIG_FILE: join(home, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-aws-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

/** Runs the osls CLI with Node from this process, in the service folder. */
function runOsls(serviceFolder: string, args: readonly string[], home: string): Promise<CliResult> {
  return runProcess(process.execPath, [OSLS_CLI, ...args], { cwd: serviceFolder, env: offlineEnvironment(home) });
}

function packageArgs(params: Readonly<Record<string, string>>, packageFolder?: string): string[] {
  return [
    'package',
    '--stage',
    STAGE,
    '--region',
    REGION,
    ...Object.entries(params).map(([name, value]) => `--param=${name}=${value}`),
    ...(packageFolder === undefined ? [] : ['--package', packageFolder]),
  ];
}

/** `osls package --stage ci --region eu-west-1 --param=...` into packageFolder; resolves with the update template. */
async function packageService(
  serviceFolder: string,
  params: Readonly<Record<string, string>>,
  packageFolder: string,
  home: string,
): Promise<Template> {
  return (await packageServiceWithOutput(serviceFolder, params, packageFolder, home)).template;
}

/** packageService, with what osls printed (its warnings). */
async function packageServiceWithOutput(
  serviceFolder: string,
  params: Readonly<Record<string, string>>,
  packageFolder: string,
  home: string,
): Promise<{ readonly template: Template; readonly output: string }> {
  const result = await runOsls(serviceFolder, packageArgs(params, packageFolder), home);
  if (result.code !== 0) {
    throw new Error(`osls package exited with ${result.code}:\n${result.stdout}\n${result.stderr}`);
  }
  const template = JSON.parse(
    await readFile(join(packageFolder, 'cloudformation-template-update-stack.json'), 'utf8'),
  ) as Template;
  return { template, output: result.stdout + result.stderr };
}

/** Every file under folder/prefix, as the service folder would ship it. */
async function filesUnder(folder: string, prefix: string): Promise<ShippedFile[]> {
  const entries = await readdir(join(folder, prefix), { recursive: true, withFileTypes: true });
  const files = await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map(async (entry) => {
        const path = relative(folder, join(entry.parentPath, entry.name)).split('\\').join('/');
        const content = await readFile(join(folder, path));
        return { path, size: content.length, crc32: crc32(content) };
      }),
  );
  return files.sort((left, right) => compareCodeUnits(left.path, right.path));
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

/** The files of a zip, from its central directory (APPNOTE 4.3.12, 4.3.16), decompressed and CRC-checked. */
function readZip(zip: Buffer): ZipEntry[] {
  // The end record is 22 bytes plus a comment of at most 65,535.
  let end = zip.length - 22;
  while (end >= Math.max(0, zip.length - 22 - 0xffff) && zip.readUInt32LE(end) !== END_OF_CENTRAL_DIRECTORY) end -= 1;
  if (end < 0 || zip.readUInt32LE(end) !== END_OF_CENTRAL_DIRECTORY)
    throw new Error('no end of central directory record');
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const entries: ZipEntry[] = [];
  for (let index = 0; index < count; index += 1) {
    if (zip.readUInt32LE(offset) !== CENTRAL_DIRECTORY_ENTRY)
      throw new Error(`central directory entry ${index} is corrupt`);
    const method = zip.readUInt16LE(offset + 10);
    const checksum = zip.readUInt32LE(offset + 16);
    const compressedSize = zip.readUInt32LE(offset + 20);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    const localHeader = zip.readUInt32LE(offset + 42);
    const path = zip.toString('utf8', offset + 46, offset + 46 + nameLength);
    offset += 46 + nameLength + extraLength + commentLength;
    if (path.endsWith('/')) continue;
    if (zip.readUInt32LE(localHeader) !== LOCAL_FILE_HEADER) throw new Error(`local header of ${path} is corrupt`);
    const dataStart = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
    const data = zip.subarray(dataStart, dataStart + compressedSize);
    if (method !== STORED && method !== DEFLATED) throw new Error(`${path} uses compression method ${method}`);
    const content = method === STORED ? Buffer.from(data) : inflateRawSync(data);
    if (crc32(content) !== checksum) throw new Error(`${path} does not match its CRC-32`);
    entries.push({ path, size: content.length, crc32: checksum, content });
  }
  return entries.sort((left, right) => compareCodeUnits(left.path, right.path));
}

/** Writes a zip's files under folder, as Lambda unpacks a deployment package into /var/task. */
async function extractZip(entries: readonly ZipEntry[], folder: string): Promise<void> {
  for (const entry of entries) {
    const target = join(folder, entry.path);
    if (relative(folder, target).startsWith('..')) throw new Error(`${entry.path} escapes the extraction folder`);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, entry.content);
  }
}

export {
  ROOT,
  OSLS_CLI,
  STAGE,
  REGION,
  createServiceFolder,
  offlineEnvironment,
  runOsls,
  packageArgs,
  packageService,
  packageServiceWithOutput,
  filesUnder,
  readZip,
  extractZip,
};
export type { ShippedFile, ZipEntry, CliResult };
