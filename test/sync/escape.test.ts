/**
 * Untrusted text (manifest keys, names, policy names, listing names and descriptions, server
 * messages) carrying workflow commands, terminal escapes, newlines, pipes and HTML, through the
 * CLI's `main` (in this process: what is checked is the text it writes): no output may run a
 * workflow command, move the cursor, add a table cell or inject HTML.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsyncInProcess, type CliResult } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKEN = 'escape-test-token';
const EVIL =
  '\n::error::injected\u001b[2J\u001b[31m\u009b31m\u202e | <script>alert(1)</script> [x](http://evil)';

const RAW_CONTROL =
  // oxlint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Our own annotations: the only lines allowed to be workflow commands. */
const OWN_ANNOTATION = /^::(error|warning) (file=[^:]*,line=\d+,col=\d+,)?title=[^:]*::/;

/** Checks one output: no raw control, no workflow command but ours (with `annotations`). */
function expectNeutral(where: string, text: string, { annotations = false } = {}) {
  expect(RAW_CONTROL.test(text), `${where} holds a raw control character`).toBe(false);
  for (const line of text.split('\n')) {
    if (annotations && OWN_ANNOTATION.test(line)) continue;
    expect(/^\s*::/.test(line), `${where}: a workflow command: ${line}`).toBe(false);
    expect(line.includes('##['), `${where}: a legacy workflow command: ${line}`).toBe(false);
  }
}

/** Markdown: no HTML from the input, no link, and every table row as wide as its header. */
function expectSafeMarkdown(where: string, output: string, { annotations = false } = {}) {
  expectNeutral(where, output, { annotations });
  // Annotation messages are plain text to GitHub; the rest is markdown.
  const markdown = output
    .split('\n')
    .filter((line) => !(annotations && OWN_ANNOTATION.test(line)))
    .join('\n');
  expect(markdown, where).not.toContain('<script');
  expect(markdown, where).not.toContain('](http');
  const cells = (row: string) => row.replace(/\\\\/g, '').replace(/\\\|/g, '').split('|').length;
  let header: number | undefined;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    header ??= cells(line);
    expect(cells(line), `${where}: a row with extra cells: ${line}`).toBe(header);
  }
}

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('untrusted text in manifests', () => {
  it('validate shows unknown keys, names and policy names escaped, in every format and in annotations', async () => {
    const key = (text: string) => JSON.stringify(text);
    await tmp.write(
      'manifests/acme.yaml',
      [
        'org: acme',
        'environments:',
        '  - name: web',
        '    type: K8S',
        '    description: fine',
        `    ${key(`::error::key${EVIL}`)}: 1`,
        `    ${key('\u001b]0;title\u0007')}: 2`,
        `  - name: ${key(`bad${EVIL}`)}`,
        '    type: K8S',
        '    description: d',
        `    policies: [${key(`::warning::policy${EVIL}`)}, ${key('##[error]legacy')}]`,
        '',
      ].join('\n'),
    );
    await tmp.write('manifests/other.yaml', `${key(`::error::top${EVIL}`)}: 1\n`);
    const results: [string, CliResult, boolean][] = [];
    for (const output of ['text', 'json', 'markdown']) {
      results.push([
        `validate -o ${output}`,
        await envsyncInProcess(['validate', '--manifests', 'manifests', '-o', output], {
          cwd: tmp.dir,
        }),
        false,
      ]);
    }
    results.push([
      'validate --annotations github',
      await envsyncInProcess(
        [
          'validate',
          '--manifests',
          'manifests',
          '--annotations',
          'github',
          '--summary-file',
          'summary.md',
        ],
        { cwd: tmp.dir },
      ),
      true,
    ]);
    for (const [name, result, annotations] of results) {
      expect(result.code, name).toBe(1);
      expectNeutral(`${name} stdout`, result.stdout, { annotations });
      expectNeutral(`${name} stderr`, result.stderr);
    }
    const text = results[0]?.[1].stdout ?? '';
    expect(text).toContain('unknown key');
    // Escaped visibly, not dropped.
    expect(text).toContain('\\u001b[2J');
    expect(text).toContain('\\n');
    const annotated = results[3]?.[1].stdout ?? '';
    expect(
      annotated.split('\n').filter((line) => OWN_ANNOTATION.test(line)).length,
    ).toBeGreaterThan(0);
    expectSafeMarkdown('validate -o markdown', results[2]?.[1].stdout ?? '');
    expectSafeMarkdown('validate summary', await readFile(tmp.path('summary.md'), 'utf8'));
  });
});

describe('untrusted text from the service', () => {
  it('plan and sync show listing names, descriptions and server messages escaped', async () => {
    const api = await startFakeApi((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify([
            { name: 'web', type: 'K8S', description: `old${EVIL}` },
            { name: `::error::unmanaged${EVIL}`, type: 'K8S', description: 'x' },
            { name: `##[warning]legacy${EVIL}`, type: 'K8S', description: 'x' },
          ]),
        );
      } else {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: `rejected${EVIL}`, errors: { [`f${EVIL}`]: EVIL } }));
      }
    });
    try {
      await tmp.write(
        'manifests/acme.yaml',
        [
          'org: acme',
          'environments:',
          '  - name: web',
          '    type: K8S',
          `    description: ${JSON.stringify(`new${EVIL}`)}`,
          '  - name: api',
          '    type: K8S',
          `    description: ${JSON.stringify(`| a | b |${EVIL}`)}`,
          '',
        ].join('\n'),
      );
      const common = [
        '--manifests',
        'manifests',
        '--state',
        'state.json',
        '--api-url',
        api.url,
        '--retries',
        '0',
      ];
      const env = { ENVSYNC_TOKEN: TOKEN };
      const results: [string, CliResult, boolean][] = [];
      for (const output of ['text', 'json', 'markdown']) {
        results.push([
          `plan -o ${output}`,
          await envsyncInProcess(['plan', ...common, '-o', output], { cwd: tmp.dir, env }),
          false,
        ]);
      }
      for (const output of ['text', 'markdown']) {
        results.push([
          `sync -o ${output}`,
          await envsyncInProcess(
            [
              'sync',
              ...common,
              '-o',
              output,
              '--annotations',
              'github',
              '--summary-file',
              `summary-${output}.md`,
            ],
            { cwd: tmp.dir, env },
          ),
          true,
        ]);
      }
      for (const [name, result, annotations] of results) {
        expectNeutral(`${name} stdout`, result.stdout, { annotations });
        expectNeutral(`${name} stderr`, result.stderr);
      }
      const [, planText] = results[0] as [string, CliResult, boolean];
      expect(planText.code).toBe(0);
      expect(planText.stdout).toContain('unmanaged');
      expect(planText.stdout).toContain('\\u001b[31m');
      const [, syncText] = results[3] as [string, CliResult, boolean];
      expect(syncText.code).toBe(1);
      expect(syncText.stdout).toContain('rejected');
      expectSafeMarkdown('plan -o markdown', results[2]?.[1].stdout ?? '');
      expectSafeMarkdown('sync -o markdown', results[4]?.[1].stdout ?? '', { annotations: true });
      for (const output of ['text', 'markdown'])
        expectSafeMarkdown(
          `summary ${output}`,
          await readFile(tmp.path(`summary-${output}.md`), 'utf8'),
        );
    } finally {
      await api.close();
    }
  });
});
