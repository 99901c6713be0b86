/**
 * Text that reorders or hides what a reader sees: every Unicode bidirectional control (U+061C,
 * U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), the zero-width characters (U+200B to
 * U+200D, U+2060, and U+FEFF inside a text), NEL (U+0085) and the line and paragraph separators
 * (U+2028, U+2029), in a manifest's description and tags, the service's listing and its error
 * message. No output shows one raw: text and markdown show it as a visible \u escape, every JSON
 * (the report, the log lines, a saved plan, the state file, `/status`) as a \u escape that parses
 * back to the same data, and pretty log lines for a terminal as a visible escape.
 */
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/runtime/log.ts';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const HIDDEN = [
  '\u0085',
  '\u061c',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2028',
  '\u2029',
  '\u2060',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\ufeff',
];
const HOSTILE = `pay${HIDDEN.join('x')}ment`;
const escaped = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** The hidden characters `text` holds raw, as escapes (a failure prints no raw one). */
const rawIn = (text: string) => HIDDEN.filter((char) => text.includes(char)).map(escaped);

/** `text` in a YAML double-quoted string, the hidden characters as YAML's own \u escapes. */
const yamlQuoted = (text: string) =>
  `"${Array.from(text, (c) => (HIDDEN.includes(c) ? escaped(c) : c)).join('')}"`;

describe('bidirectional and zero-width characters', () => {
  it('are escaped in every report: text, JSON and markdown, and in what sync prints and logs', async () => {
    const api = await startFakeApi((req, res) => {
      const body =
        req.method === 'GET'
          ? [{ name: 'web', type: 'K8S', description: `live ${HOSTILE}` }]
          : { message: `refused ${HOSTILE}` };
      res
        .writeHead(req.method === 'GET' ? 200 : 500, { 'content-type': 'application/json' })
        .end(JSON.stringify(body));
    });
    const tmp = await tempDir();
    try {
      await tmp.write(
        'manifests/acme.yaml',
        // YAML's own \u escapes: the characters arrive in the description, not in the file.
        `org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: ${yamlQuoted(`wanted ${HOSTILE}`)}\n`,
      );
      const common = ['--manifests', 'manifests', '--api-url', api.url, '--state', 'state.json'];
      const run = ([command = '', ...args]: string[]) =>
        envsyncInProcess([command, ...common, ...args], {
          cwd: tmp.dir,
          env: { ENVSYNC_TOKEN: 'bidi-Qz7Lw2Xk9' },
        });
      const quiet = ['--retries', '0', '--log-level', 'debug'];
      const outputs: Record<string, string> = {};
      for (const format of ['text', 'json', 'markdown']) {
        const plan = await run(['plan', '-o', format]);
        expect(plan.code, format).toBe(0);
        outputs[`plan -o ${format}`] = plan.stdout;
      }
      for (const logFormat of ['json', 'pretty']) {
        const sync = await run(['sync', ...quiet, '--log-format', logFormat]);
        expect(sync.code, logFormat).toBe(1);
        outputs[`sync stdout, ${logFormat} logs`] = sync.stdout;
        outputs[`sync ${logFormat} logs`] = sync.stderr;
      }
      const leaks = Object.entries(outputs).flatMap(([name, text]) =>
        rawIn(text).length === 0 ? [] : [`${name}: ${rawIn(text).join(' ')}`],
      );
      expect(leaks).toEqual([]);

      // Shown, not dropped: visibly escaped in text, the same data in JSON once parsed.
      for (const char of HIDDEN)
        expect(outputs['plan -o text']?.includes(escaped(char)), escaped(char)).toBe(true);
      const report = JSON.parse(outputs['plan -o json'] ?? '') as unknown;
      expect(JSON.stringify(report)).toContain(`wanted ${HOSTILE}`);
    } finally {
      await api.close();
      await tmp.cleanup();
    }
  });

  it('are escaped in log lines, JSON (the same record once parsed) and pretty (a terminal)', async () => {
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
    expect(rawIn(written.json)).toEqual([]);
    expect(rawIn(written.pretty)).toEqual([]);
    const record = JSON.parse(written.json) as Record<string, unknown>;
    expect(record['msg'] === `org ${HOSTILE} failed`, 'the message, once parsed').toBe(true);
    expect(record['description'] === HOSTILE, 'the field, once parsed').toBe(true);
    // Shown visibly: as a \u escape, or `?` for a C1 control (NEL) as for every terminal control.
    const hidden = HIDDEN.filter(
      (char) => !written.pretty.includes(char <= '\u009f' ? '?' : escaped(char)),
    ).map(escaped);
    expect(hidden).toEqual([]);
  });
});

describe('bidirectional and zero-width characters in the JSON envsync writes', () => {
  it('are escaped in a saved plan, the state file, /status and the status page, the same data once parsed', async () => {
    const token = 'bidi-Qz7Lw2Xk9';
    const api = await startTestEmulator({
      profile: 'kosli',
      orgs: ['acme'],
      tokens: [{ token, orgs: null }],
    });
    const tmp = await tempDir();
    try {
      await api.putStore({
        orgs: { acme: [{ name: 'web', type: 'K8S', description: `live ${HOSTILE}` }] },
      });
      const manifest = (description: string) =>
        `org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: ${yamlQuoted(description)}\n    tags:\n      owner: ${yamlQuoted(`team ${HOSTILE}`)}\n`;
      await tmp.write('manifests/acme.yaml', manifest(`wanted ${HOSTILE}`));
      const run = (args: string[]) =>
        envsyncInProcess(
          [...args, '--manifests', 'manifests', '--api-url', api.url, '--state', 'state.json'],
          { cwd: tmp.dir, env: { ENVSYNC_TOKEN: token } },
        );
      expect((await run(['plan', '--out', 'plan.json'])).code).toBe(0);
      const plan = await readFile(tmp.path('plan.json'), 'utf8');
      // The digest is of the parsed content: the escaped file is still the plan that was made.
      const applied = await run(['sync', '--plan', 'plan.json']);
      expect(applied.code, applied.stderr).toBe(0);
      const state = await readFile(tmp.path('state.json'), 'utf8');

      // The daemon finds the next change to make, and shows it.
      await tmp.write('manifests/acme.yaml', manifest(`next ${HOSTILE}`));
      const daemon = await startTestDaemon({
        apiUrl: api.url,
        cwd: tmp.dir,
        token,
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

      const outputs = { plan, state, status, page };
      const leaks = Object.entries(outputs).flatMap(([name, text]) =>
        rawIn(text).length === 0 ? [] : [`${name}: ${rawIn(text).join(' ')}`],
      );
      expect(leaks).toEqual([]);
      // Shown, not dropped: each JSON holds the text once parsed.
      expect(JSON.stringify(JSON.parse(plan))).toContain(JSON.stringify(`wanted ${HOSTILE}`));
      expect(JSON.stringify(JSON.parse(state))).toContain(JSON.stringify(`team ${HOSTILE}`));
      expect(JSON.stringify(JSON.parse(status))).toContain(JSON.stringify(`next ${HOSTILE}`));
    } finally {
      await api.close();
      await tmp.cleanup();
    }
  });
});
