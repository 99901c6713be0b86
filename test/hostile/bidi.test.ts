/**
 * Text that reorders or hides what a reader sees: every Unicode bidirectional control (U+061C,
 * U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) and the zero-width characters (U+200B to
 * U+200D, and U+FEFF inside a text), in a manifest's description, the service's listing and its
 * error message. No output shows one raw: text and markdown show it as a visible \u escape, JSON
 * (the report and the log lines) as a \u escape that parses back to the same data, and pretty
 * log lines for a terminal as a visible escape.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/runtime/log.ts';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const HIDDEN = [
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
        `org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: "wanted ${Array.from(HOSTILE, (c) => (HIDDEN.includes(c) ? escaped(c) : c)).join('')}"\n`,
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
    const hidden = HIDDEN.filter((char) => !written.pretty.includes(escaped(char))).map(escaped);
    expect(hidden).toEqual([]);
  });
});
