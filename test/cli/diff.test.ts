/** explain's diff for a person: the semantic lines, and colour only where a person reads them. */
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { colourWanted, schedulingDiff } from '../../lib/cli/diff.ts';
import { runCli } from '../../lib/cli/index.ts';
import type { Pod } from '../../lib/engine/index.ts';
import { EXAMPLES, fixturePath } from '../support/fixtures.ts';
import { cliContext, runPodmutationInProcess } from '../support/cli.ts';

const GREEN = '\u001b[32m';
const RED = '\u001b[31m';
const RESET = '\u001b[39m';
const ESCAPE = '\u001b[';

function stream(isTTY: boolean | undefined): PassThrough {
  return isTTY === undefined ? new PassThrough() : Object.assign(new PassThrough(), { isTTY });
}

describe('the colour decision', () => {
  it.each([
    { when: 'stdout is a TTY and nothing is set', isTTY: true, env: {}, colour: true },
    { when: 'stdout is a TTY and NO_COLOR is set', isTTY: true, env: { NO_COLOR: '1' }, colour: false },
    {
      when: 'stdout is a TTY and NO_COLOR is empty (no-color.org: only "present and not an empty string" counts)',
      isTTY: true,
      env: { NO_COLOR: '' },
      colour: true,
    },
    { when: 'stdout is not a TTY', isTTY: false, env: {}, colour: false },
    { when: 'stdout says nothing about a TTY (a pipe, a file)', isTTY: undefined, env: {}, colour: false },
    { when: 'stdout is a TTY of TERM=dumb', isTTY: true, env: { TERM: 'dumb' }, colour: false },
    { when: 'stdout is not a TTY and FORCE_COLOR is set', isTTY: false, env: { FORCE_COLOR: '1' }, colour: true },
    { when: 'stdout is not a TTY and FORCE_COLOR is empty', isTTY: false, env: { FORCE_COLOR: '' }, colour: false },
    { when: 'stdout is a TTY and FORCE_COLOR is 0', isTTY: true, env: { FORCE_COLOR: '0' }, colour: false },
    { when: 'stdout is a TTY and FORCE_COLOR is false', isTTY: true, env: { FORCE_COLOR: 'false' }, colour: false },
    {
      when: 'both NO_COLOR and FORCE_COLOR are set (NO_COLOR wins)',
      isTTY: true,
      env: { NO_COLOR: '1', FORCE_COLOR: '1' },
      colour: false,
    },
  ])('is $colour when $when', ({ isTTY, env, colour }) => {
    expect(colourWanted(stream(isTTY), env)).toBe(colour);
  });
});

describe('the coloured scheduling diff', () => {
  const before: Pod = { metadata: { annotations: { kept: 'yes' } }, spec: { nodeSelector: { pool: 'old' } } };
  const after: Pod = { metadata: { annotations: { kept: 'yes' } }, spec: { nodeSelector: { pool: 'new' } } };

  it('colours added lines green and removed lines red, and leaves headings plain', () => {
    expect(schedulingDiff(before, after, true)).toEqual([
      '  nodeSelector:',
      `${RED}-   pool=old${RESET}`,
      `${GREEN}+   pool=new${RESET}`,
    ]);
  });

  it('writes no escape sequence without colour', () => {
    expect(schedulingDiff(before, after, false)).toEqual(['  nodeSelector:', '-   pool=old', '+   pool=new']);
  });
});

describe('explain shows the semantic diff', () => {
  it("reads the docs' worked example as term 1 losing node-pool legacy and gaining node-pool merged", async () => {
    const run = await runPodmutationInProcess([
      'explain',
      '--rules',
      EXAMPLES,
      fixturePath('reviews/deployment-legacy-pool.json'),
    ]);

    expect(run.code).toBe(0);
    const diff = run.stdout.slice(run.stdout.indexOf('  changes to the scheduling fields'));
    expect(diff.split('\n')).toEqual([
      '  changes to the scheduling fields (- before, + after):',
      '      annotations:',
      '    +   example.com/migration: merged-pool',
      '    +   podmutation.agent.cloudpilot.ai/applied: migrate-legacy-pool',
      '      required node affinity (terms ORed):',
      '        term 1:',
      '          kubernetes.io/arch In [amd64]',
      '    -     example.com/node-pool In [legacy]',
      '    +     example.com/node-pool In [merged]',
      '',
    ]);
  });

  it('matches the diff docs/cli.md shows for the worked example', async () => {
    const cliDoc = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    const shown = /reads:\n\n```\n([\s\S]*?)\n```/.exec(
      cliDoc.slice(cliDoc.indexOf('The [*Worked example*](api.md#worked-example)')),
    )?.[1];
    const run = await runPodmutationInProcess([
      'explain',
      '--rules',
      EXAMPLES,
      fixturePath('reviews/deployment-legacy-pool.json'),
    ]);

    expect(shown).toBe(run.stdout.slice(run.stdout.indexOf('  changes to the scheduling fields')).trimEnd());
  });

  async function explainOnTerminal(env: Record<string, string | undefined>): Promise<string> {
    const stdout = stream(true);
    let out = '';
    stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const code = await runCli(
      ['explain', '--rules', EXAMPLES, fixturePath('reviews/deployment-legacy-pool.json')],
      cliContext({ stdin: new PassThrough(), stdout, stderr: new PassThrough() }, env),
    );
    expect(code).toBe(0);
    return out;
  }

  it('colours the diff on a terminal', async () => {
    const out = await explainOnTerminal({ NO_COLOR: undefined, FORCE_COLOR: undefined, TERM: 'xterm-256color' });

    expect(out).toContain(`    ${RED}-     example.com/node-pool In [legacy]${RESET}\n`);
    expect(out).toContain(`    ${GREEN}+     example.com/node-pool In [merged]${RESET}\n`);
  });

  it('writes no colour on a terminal when NO_COLOR is set', async () => {
    const out = await explainOnTerminal({ NO_COLOR: '1', FORCE_COLOR: undefined, TERM: 'xterm-256color' });

    expect(out).toContain('    +     example.com/node-pool In [merged]\n');
    expect(out).not.toContain(ESCAPE);
  });
});
