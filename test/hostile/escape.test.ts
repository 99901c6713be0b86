/**
 * Untrusted text carrying workflow commands, terminal escapes, HTML, links and the characters that
 * reorder or hide what a reader sees (every bidirectional control, the zero-width characters, NEL,
 * the line and paragraph separators): text and markdown show a visible escape, every JSON a \u
 * escape that parses back to the same data.
 */
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/runtime/log.ts';
import { envsyncInProcess, type CliResult } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'escape-Qz7Lw2Xk9';
// oxlint-disable-next-line no-control-regex
const HIDDEN = Array.from(
  '\u0085\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2028\u2029\u2060\u2066\u2067\u2068\u2069\ufeff',
);
const HOSTILE = `pay${HIDDEN.join('x')}ment`;
const EVIL = `\n::error::injected\u001b[2J\u001b[31m\u009b31m | <script>alert(1)</script> [x](http://evil) ${HOSTILE}`;
const escaped = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
/** `text` in a YAML double-quoted string, all but printable ASCII as YAML's own \u escapes. */
const quoted = (text: string) =>
  `"${Array.from(text, (c) => (/[ -~]/.test(c) && c !== '"' && c !== '\\' ? c : escaped(c))).join('')}"`;

/** What no output may hold raw: controls, and the hidden characters. */
const RAW =
  // oxlint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/;
/** Our own annotations: the only lines allowed to be workflow commands. */
const OWN_ANNOTATION = /^::(error|warning) (file=[^:]*,line=\d+,col=\d+,)?title=[^:]*::/;

/** Checks one output: nothing raw (named by escape), no workflow command but ours. */
function expectNeutral(where: string, text: string, { annotations = false } = {}) {
  const raw = [...new Set(Array.from(text).filter((c) => RAW.test(c)))].map(escaped);
  expect(raw, `${where} holds raw characters`).toEqual([]);
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
const cli = (args: string[]) =>
  envsyncInProcess(args, { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } });

describe('untrusted text', () => {
  it('in manifests: validate shows keys, names and policy names escaped, in every format and in annotations', async () => {
    await tmp.write(
      'manifests/acme.yaml',
      [
        'org: acme',
        'environments:',
        '  - name: web',
        '    type: K8S',
        `    description: ${quoted(`fine ${HOSTILE}`)}`,
        `    ${quoted(`::error::key${EVIL}`)}: 1`,
        `    ${quoted('\u001b]0;title\u0007')}: 2`,
        `  - name: ${quoted(`bad${EVIL}`)}`,
        '    type: K8S',
        '    description: d',
        `    policies: [${quoted(`::warning::policy${EVIL}`)}, ${quoted('##[error]legacy')}]`,
        '',
      ].join('\n'),
    );
    await tmp.write('manifests/other.yaml', `${quoted(`::error::top${EVIL}`)}: 1\n`);
    const validate = ['validate', '--manifests', 'manifests'];
    const results: [string, CliResult][] = [];
    for (const output of ['text', 'json', 'markdown'])
      results.push([`validate -o ${output}`, await cli([...validate, '-o', output])]);
    const annotated = await cli([
      ...validate,
      ...'--annotations github --summary-file summary.md'.split(' '),
    ]);
    for (const [name, result] of [...results, ['annotations', annotated] as const]) {
      expect(result.code, name).toBe(1);
      expectNeutral(`${name} stdout`, result.stdout, { annotations: result === annotated });
      expectNeutral(`${name} stderr`, result.stderr);
    }
    // Escaped visibly, not dropped.
    const text = results[0]?.[1].stdout ?? '';
    for (const part of ['unknown key', '\\u001b[2J', '\\n']) expect(text).toContain(part);
    expect(annotated.stdout.split('\n').some((line) => OWN_ANNOTATION.test(line))).toBe(true);
    expectSafeMarkdown('validate -o markdown', results[2]?.[1].stdout ?? '');
    expectSafeMarkdown('validate summary', await readFile(tmp.path('summary.md'), 'utf8'));
  });

  it('from the service: plan and sync show listing names, descriptions and server messages escaped, in every format and log format', async () => {
    const api = await startFakeApi((req, res) => {
      const [status, body] =
        req.method === 'GET'
          ? [
              200,
              [
                { name: 'web', type: 'K8S', description: `old${EVIL}` },
                { name: `::error::unmanaged${EVIL}`, type: 'K8S', description: 'x' },
                { name: `##[warning]legacy${EVIL}`, type: 'K8S', description: 'x' },
              ],
            ]
          : [400, { message: `rejected${EVIL}`, errors: { [`f${EVIL}`]: EVIL } }];
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    try {
      await tmp.write(
        'manifests/acme.yaml',
        'org: acme\nenvironments:\n  - name: web\n    type: K8S\n' +
          `    description: ${quoted(`new${EVIL}`)}\n` +
          `  - name: api\n    type: K8S\n    description: ${quoted(`| a | b |${EVIL}`)}\n`,
      );
      const common = ['--manifests', 'manifests', '--state', 'state.json', '--api-url', api.url];
      const outputs: Record<string, CliResult> = {};
      for (const output of ['text', 'json', 'markdown'])
        outputs[`plan -o ${output}`] = await cli(['plan', ...common, '-o', output]);
      for (const [output, logs] of [
        ['text', 'json'],
        ['markdown', 'pretty'],
      ] as const) {
        const flags = `-o ${output} --log-format ${logs} --summary-file ${output}.md`.split(' ');
        outputs[`sync -o ${output}`] = await cli([
          'sync',
          ...common,
          ...flags,
          ...'--retries 0 --log-level debug --annotations github'.split(' '),
        ]);
      }
      for (const [name, result] of Object.entries(outputs)) {
        expectNeutral(`${name} stdout`, result.stdout, { annotations: name.startsWith('sync') });
        expectNeutral(`${name} stderr`, result.stderr);
      }
      const plan = outputs['plan -o text'];
      expect(plan?.code).toBe(0);
      expect(plan?.stdout).toContain('unmanaged');
      expect(plan?.stdout).toContain('\\u001b[31m');
      // Shown, not dropped: visibly escaped in text, the same data in JSON once parsed.
      for (const char of HIDDEN)
        expect(plan?.stdout.includes(escaped(char)), escaped(char)).toBe(true);
      const report = JSON.stringify(JSON.parse(outputs['plan -o json']?.stdout ?? ''));
      expect(report.includes(JSON.stringify(`new${EVIL}`))).toBe(true);
      expect(outputs['sync -o text']?.code).toBe(1);
      expect(outputs['sync -o text']?.stdout).toContain('rejected');
      expectSafeMarkdown('plan -o markdown', outputs['plan -o markdown']?.stdout ?? '');
      expectSafeMarkdown('sync -o markdown', outputs['sync -o markdown']?.stdout ?? '', {
        annotations: true,
      });
      for (const output of ['text', 'markdown'])
        expectSafeMarkdown(`summary ${output}`, await readFile(tmp.path(`${output}.md`), 'utf8'));
    } finally {
      await api.close();
    }
  });

  it('in log lines: JSON (the same record once parsed) and pretty (a terminal)', async () => {
    const written = { json: '', pretty: '' };
    for (const format of ['json', 'pretty'] as const) {
      const stream = new Writable({
        write(chunk: Buffer, _encoding, done) {
          written[format] += chunk.toString('utf8');
          done();
        },
      });
      createLogger('info', stream, {}, { format }).warn(
        { description: HOSTILE },
        `org ${HOSTILE} failed`,
      );
      await waitFor(`the ${format} line`, () => written[format].includes('failed'));
    }
    expectNeutral('json', written.json);
    expectNeutral('pretty', written.pretty);
    const record = JSON.parse(written.json) as Record<string, unknown>;
    expect(record['msg'] === `org ${HOSTILE} failed`, 'the message, once parsed').toBe(true);
    expect(record['description'] === HOSTILE, 'the field, once parsed').toBe(true);
    // Shown visibly: as a \u escape, or `?` for a C1 control (NEL) as for every terminal control.
    const shown = (char: string) => written.pretty.includes(char <= '\u009f' ? '?' : escaped(char));
    expect(HIDDEN.filter((char) => !shown(char)).map(escaped)).toEqual([]);
  });

  it('in the JSON envsync writes: a saved plan, the state file, /status and the status page, the same data once parsed', async () => {
    const api = await startTestEmulator({
      profile: 'kosli',
      tokens: [{ token: TOKEN, orgs: null }],
    });
    try {
      await api.putStore({
        orgs: { acme: [{ name: 'web', type: 'K8S', description: `live ${HOSTILE}` }] },
      });
      const manifest = (description: string) =>
        `org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: ${quoted(description)}\n    tags:\n      owner: ${quoted(`team ${HOSTILE}`)}\n`;
      await tmp.write('manifests/acme.yaml', manifest(`wanted ${HOSTILE}`));
      const common = ['--manifests', 'manifests', '--api-url', api.url, '--state', 'state.json'];
      expect((await cli(['plan', ...common, '--out', 'plan.json'])).code).toBe(0);
      const plan = await readFile(tmp.path('plan.json'), 'utf8');
      // The digest is of the parsed content: the escaped file is still the plan that was made.
      const applied = await cli(['sync', ...common, '--plan', 'plan.json']);
      expect(applied.code, applied.stderr).toBe(0);
      const state = await readFile(tmp.path('state.json'), 'utf8');

      // The daemon finds the next change to make, and shows it.
      await tmp.write('manifests/acme.yaml', manifest(`next ${HOSTILE}`));
      const daemon = await startTestDaemon({
        apiUrl: api.url,
        cwd: tmp.dir,
        token: TOKEN,
        flags: { manifests: 'manifests', state: 'daemon-state.json', observe: true },
      });
      let status = '';
      let page = '';
      try {
        status = await waitFor('a pass in /status', async () => {
          const text = await (await fetch(`${daemon.url}/status`)).text();
          return text.includes('next ') && text;
        });
        page = await (await fetch(`${daemon.url}/`)).text();
      } finally {
        await daemon.stop();
      }
      for (const [name, text] of Object.entries({ plan, state, status, page }))
        expectNeutral(name, text);
      // Shown, not dropped: each JSON holds the text once parsed.
      expect(JSON.stringify(JSON.parse(plan))).toContain(JSON.stringify(`wanted ${HOSTILE}`));
      expect(JSON.stringify(JSON.parse(state))).toContain(JSON.stringify(`team ${HOSTILE}`));
      expect(JSON.stringify(JSON.parse(status))).toContain(JSON.stringify(`next ${HOSTILE}`));
    } finally {
      await api.close();
    }
  });
});
