/** The logger: what it writes is pino's own, at the levels enabled, masked. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/runtime/log.ts';

describe('createLogger', () => {
  it('writes what pino writes, at the levels enabled, with its bindings and redaction', () => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    const logger = createLogger('warn', stream, { command: 'plan' });
    expect(logger.isLevelEnabled('info')).toBe(false);
    expect(logger.isLevelEnabled('warn')).toBe(true);
    logger.info('not written');
    logger.warn({ org: 'acme', authorization: 'Bearer x' }, 'written');
    logger.error(new Error('boom').message);
    const child = logger.child({ component: 'emulator' }, { level: 'error' });
    child.warn('below the child level');
    child.error({ code: 7 }, 'from the child');
    const lines = text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((l) => [l['level'], l['msg']])).toEqual([
      [40, 'written'],
      [50, 'boom'],
      [50, 'from the child'],
    ]);
    expect(lines[0]).toMatchObject({ command: 'plan', org: 'acme', authorization: '[REDACTED]' });
    expect(lines[0]?.['time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lines[2]).toMatchObject({ command: 'plan', component: 'emulator', code: 7 });
  });
});
