/**
 * The logger loads pino only when it writes a line: what it writes is pino's own, and a quiet
 * one-shot run (a valid `validate` at the default `warn`) never loads pino at all.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { CLI } from '../helpers/entry.ts';
import { tempDir } from '../helpers/tmp.ts';

function memory(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('writes what pino writes, at the levels enabled, with its bindings and redaction', () => {
    const out = memory();
    const logger = createLogger('warn', out.stream, { command: 'plan' });
    expect(logger.isLevelEnabled('info')).toBe(false);
    expect(logger.isLevelEnabled('warn')).toBe(true);
    logger.info('not written');
    logger.warn({ org: 'acme', authorization: 'Bearer x' }, 'written');
    logger.error(new Error('boom').message);
    const child = logger.child({ component: 'emulator' }, { level: 'error' });
    child.warn('below the child level');
    child.error({ code: 7 }, 'from the child');
    expect(out.lines().map((l) => [l['level'], l['msg']])).toEqual([
      [40, 'written'],
      [50, 'boom'],
      [50, 'from the child'],
    ]);
    expect(out.lines()[0]).toMatchObject({
      command: 'plan',
      org: 'acme',
      authorization: '[REDACTED]',
    });
    expect(out.lines()[0]?.['time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(out.lines()[2]).toMatchObject({ command: 'plan', component: 'emulator', code: 7 });
  });

  it('a quiet validate never loads pino; a run that logs does', async () => {
    const tmp = await tempDir();
    try {
      // A load hook in the CLI's own process, reporting every module it loads on stderr.
      const hook = tmp.path('hook.mjs');
      writeFileSync(
        hook,
        "import { registerHooks } from 'node:module';\nimport { writeSync } from 'node:fs';\n" +
          'registerHooks({ load(url, context, next) { writeSync(2, `LOADED ${url}\\n`); return next(url, context); } });\n',
      );
      const examples = fileURLToPath(new URL('../../examples/manifests', import.meta.url));
      const run = (args: string[]) =>
        spawnSync(process.execPath, ['--import', hook, CLI, ...args], {
          encoding: 'utf8',
          timeout: 30_000,
        });
      const quiet = run(['validate', '--manifests', examples]);
      expect(quiet.status).toBe(0);
      expect(quiet.stderr).toContain('LOADED ');
      expect(quiet.stderr).not.toMatch(/node_modules\/pino\//);
      const chatty = run(['validate', '--manifests', examples, '--log-level', 'debug']);
      expect(chatty.status).toBe(0);
      expect(chatty.stderr).toMatch(/node_modules\/pino\//);
    } finally {
      await tmp.cleanup();
    }
  });
});
