/** How logs look: the format and level chosen for a command, and one record as one pretty line. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chooseLogFormat, chooseLogLevel, formatLogLine } from '../../src/runtime/log-line.ts';

describe('the format and level of a command', () => {
  it.each([
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ] as const)('%s, on a terminal %s: %s', (setting, terminal, format) => {
    expect(chooseLogFormat(setting, terminal)).toBe(format);
  });

  it.each([
    [undefined, 'json', true, 'warn'],
    [undefined, 'pretty', true, 'info'],
    [undefined, 'json', false, 'info'],
    [undefined, 'pretty', false, 'info'],
    ['debug', 'json', true, 'debug'],
    ['error', 'pretty', false, 'error'],
  ] as const)('level %s, %s, one-shot %s: %s', (given, format, oneShot, level) => {
    expect(chooseLogLevel(given, format, { oneShot })).toBe(level);
  });
});

describe('formatLogLine', () => {
  const time = '2026-11-23T01:02:03.456Z';

  it.each([
    [
      'time of day (UTC, as the JSON time), level, message, then the fields the message does not say',
      { level: 40, command: 'run', org: 'acme', failures: 2, msg: 'org acme 503' },
      false,
      '01:02:03.456Z WARN  org acme 503 failures=2\n',
    ],
    [
      'an error by its message, lists by their items, text with spaces quoted, objects left out',
      {
        level: 50,
        msg: 'pass failed',
        err: { type: 'Error', message: 'boom\nat x', stack: 'Error: boom\n    at f (a.ts:1:1)' },
        fields: ['type', 'description'],
        stateFile: '/tmp/a b/state.json',
        nested: { a: 1, b: { c: 2 } },
        revision: null,
      },
      false,
      '01:02:03.456Z ERROR pass failed err="boom\\nat x" fields=type,description stateFile="/tmp/a b/state.json"\n',
    ],
    [
      'the time, the level and the fields coloured on a terminal',
      { level: 30, msg: 'stopped', signal: 'SIGTERM' },
      true,
      '\u001b[2m01:02:03.456Z\u001b[0m \u001b[32mINFO \u001b[0m stopped \u001b[2msignal=SIGTERM\u001b[0m\n',
    ],
    [
      'a long value cut',
      { level: 30, msg: 'm', path: 'x'.repeat(500) },
      false,
      `01:02:03.456Z INFO  m path=${'x'.repeat(79)}…\n`,
    ],
  ])('shows %s', (_what, record, color, line) => {
    expect(formatLogLine({ ...record, time }, { color })).toBe(line);
  });

  it('is always exactly one line, whatever the record holds', () => {
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }),
      fc.record({ message: fc.string() }),
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), value, { maxKeys: 8 }),
        fc.string(),
        fc.constantFrom(10, 20, 30, 40, 50, 60, 35),
        fc.boolean(),
        (fields, msg, level, color) => {
          const line = formatLogLine({ ...fields, level, time, msg }, { color });
          expect(line.endsWith('\n')).toBe(true);
          expect(line.slice(0, -1)).not.toMatch(/[\n\r]/);
        },
      ),
    );
  });
});
