/**
 * Sync windows as pure functions of their lines and an instant: what is read, what is refused,
 * whether changes may be sent, and when that changes, across midnight, weeks and daylight saving
 * time. Every instant is given; nothing waits.
 */
import { describe, expect, it } from 'vitest';
import {
  isOpen,
  parseWindow,
  waitingWords,
  windowState,
  type SyncWindow,
} from '../../src/core/windows.ts';

function windows(...lines: string[]): SyncWindow[] {
  return lines.map((line) => {
    const parsed = parseWindow(line);
    if ('error' in parsed) throw new Error(parsed.error);
    return parsed;
  });
}

const at = (iso: string) => Date.parse(iso);

describe('parseWindow', () => {
  it('reads kind, days, start, duration and zone', () => {
    expect(parseWindow('allow  mon-fri 09:00 8h Europe/Berlin')).toEqual({
      kind: 'allow',
      days: [1, 2, 3, 4, 5],
      startMinutes: 540,
      durationMs: 8 * 3600_000,
      timeZone: 'Europe/Berlin',
      text: 'allow mon-fri 09:00 8h Europe/Berlin',
    });
    expect(parseWindow('deny fri-mon 16:00 1h30m')).toMatchObject({
      days: [0, 1, 5, 6],
      durationMs: 90 * 60_000,
      timeZone: 'UTC',
    });
    expect(parseWindow('allow * 0:05 2d')).toMatchObject({
      days: [0, 1, 2, 3, 4, 5, 6],
      startMinutes: 5,
    });
    expect(parseWindow('deny sat,sun 00:00 24h')).toMatchObject({ days: [0, 6] });
  });

  it.each([
    ['allow mon-fri 09:00', /is not a window: write KIND DAYS START DURATION/],
    ['open mon 09:00 1h', /"open" is not allow or deny/],
    ['allow mond 09:00 1h', /"mond" is not a day or a range of days/],
    ['allow mon 9am 1h', /"9am" is not a time HH:MM/],
    ['allow mon 24:00 1h', /"24:00" is not a time HH:MM/],
    ['allow mon 09:00 8 hours', /"8" is not a duration/],
    ['allow mon 09:00 8x', /"8x" is not a duration/],
    ['allow mon 09:00 0h', /"0h" must be more than 0 and at most 7d/],
    ['allow mon 09:00 8d', /"8d" must be more than 0 and at most 7d/],
    ['allow mon 09:00 1h Mars/Olympus', /"Mars\/Olympus" is not an IANA time zone/],
  ])('refuses %j', (line, message) => {
    const parsed = parseWindow(line);
    expect('error' in parsed && parsed.error).toMatch(message);
  });
});

describe('isOpen and windowState', () => {
  // 2026-11-23 is a Monday. Berlin is UTC+1 in November, UTC+2 in July.
  const office = windows('allow mon-fri 09:00 8h Europe/Berlin');

  it.each([
    ['2026-11-23T07:59:59Z', false], // Monday 08:59:59 in Berlin
    ['2026-11-23T08:00:00Z', true], // Monday 09:00
    ['2026-11-23T15:59:59Z', true], // Monday 16:59:59
    ['2026-11-23T16:00:00Z', false], // Monday 17:00: closed
    ['2026-11-28T10:00:00Z', false], // Saturday
    ['2026-07-06T07:00:00Z', true], // a Monday in summer: 09:00 in Berlin is 07:00 UTC
    ['2026-07-06T06:59:00Z', false],
  ])('an allow window: at %s open is %s', (iso, open) => {
    expect(isOpen(office, at(iso))).toBe(open);
  });

  it('says when a closed window opens and an open one closes', () => {
    expect(windowState(office, at('2026-11-27T17:00:00Z'))).toEqual({
      open: false,
      opensAt: at('2026-11-30T08:00:00Z'), // Friday evening: next Monday 09:00 Berlin
    });
    expect(windowState(office, at('2026-11-23T10:00:00Z'))).toEqual({
      open: true,
      closesAt: at('2026-11-23T16:00:00Z'),
    });
    expect(waitingWords({ open: false, opensAt: at('2026-11-30T08:00:00Z') })).toBe(
      'waiting for a sync window (opens at 2026-11-30T08:00:00.000Z)',
    );
  });

  it('a deny window wins over an allow window, and may run over midnight and days', () => {
    const freeze = windows('allow * 00:00 24h', 'deny fri 16:00 64h UTC');
    expect(isOpen(freeze, at('2026-11-27T15:59:00Z'))).toBe(true); // Friday before the freeze
    expect(isOpen(freeze, at('2026-11-27T16:00:00Z'))).toBe(false);
    expect(isOpen(freeze, at('2026-11-29T23:00:00Z'))).toBe(false); // Sunday night
    expect(isOpen(freeze, at('2026-11-30T08:00:00Z'))).toBe(true); // Monday 08:00: 64h later
    expect(windowState(freeze, at('2026-11-28T12:00:00Z'))).toMatchObject({
      open: false,
      opensAt: at('2026-11-30T08:00:00Z'),
    });
  });

  it('is always open without windows, and with deny windows only, outside them', () => {
    expect(windowState([], at('2026-11-23T00:00:00Z'))).toEqual({ open: true });
    const nights = windows('deny * 22:00 8h America/New_York');
    expect(isOpen(nights, at('2026-11-24T02:59:00Z'))).toBe(true); // 21:59 EST
    expect(isOpen(nights, at('2026-11-24T03:00:00Z'))).toBe(false); // 22:00 EST
    expect(isOpen(nights, at('2026-11-24T11:00:00Z'))).toBe(true); // 06:00 EST: over
    expect(isOpen(nights, at('2026-11-24T10:59:00Z'))).toBe(false);
  });

  // The rule: a window opens at the first instant the zone's clock reads its start (or later) on
  // a start day, and lasts its duration of elapsed time. Berlin: clocks go forward on 2026-03-29
  // at 02:00 CET (01:00 UTC) to 03:00 CEST, and back on 2026-10-25 at 03:00 CEST (01:00 UTC) to
  // 02:00 CET. New York: forward on 2026-03-08 at 02:00 EST (07:00 UTC) to 03:00 EDT, and back on
  // 2026-11-01 at 02:00 EDT (06:00 UTC) to 01:00 EST. Each row: the window; two instants open and
  // two closed; an open instant and when it closes; a closed one and when it opens (times UTC).
  it.each([
    [
      'Berlin, clocks back: a start in the repeated hour is its first pass',
      'deny sun 02:00 1h Europe/Berlin',
      ['2026-10-24T23:59:59', '2026-10-25T01:00:00'], // 01:59:59 CEST; 02:00 CET
      ['2026-10-25T00:00:00', '2026-10-25T00:59:59'], // 02:00 and 02:59:59 CEST
      ['2026-10-24T23:00:00', '2026-10-25T00:00:00', '2026-10-25T00:30:00', '2026-10-25T01:00:00'],
    ],
    [
      'Berlin, clocks back: a start after the repeated hour',
      'deny sun 03:00 1h Europe/Berlin',
      ['2026-10-25T01:59:59', '2026-10-25T03:00:00'], // 02:59:59 CET; 04:00 CET
      ['2026-10-25T02:00:00', '2026-10-25T02:59:59'],
      ['2026-10-25T00:30:00', '2026-10-25T02:00:00', '2026-10-25T02:30:00', '2026-10-25T03:00:00'],
    ],
    [
      'Berlin, clocks forward: a start the clock skips opens as it jumps',
      'deny sun 02:30 1h Europe/Berlin',
      ['2026-03-29T00:59:59', '2026-03-29T02:00:00'], // 01:59:59 CET; 04:00 CEST
      ['2026-03-29T01:00:00', '2026-03-29T01:59:59'], // 03:00 and 03:59:59 CEST
      ['2026-03-29T00:00:00', '2026-03-29T01:00:00', '2026-03-29T01:30:00', '2026-03-29T02:00:00'],
    ],
    [
      'Berlin, clocks forward: a start at the gap opens as the clock jumps',
      'allow sun 02:00 1h Europe/Berlin',
      ['2026-03-29T01:00:00', '2026-03-29T01:59:59'], // 03:00 and 03:59:59 CEST
      ['2026-03-29T00:59:59', '2026-03-29T02:00:00'],
      ['2026-03-29T01:30:00', '2026-03-29T02:00:00', '2026-03-29T00:00:00', '2026-03-29T01:00:00'],
    ],
    [
      'New York, clocks back: a start in the repeated hour is its first pass',
      'deny sun 01:30 1h America/New_York',
      ['2026-11-01T05:29:59', '2026-11-01T06:30:00'], // 01:29:59 EDT; 01:30 EST
      ['2026-11-01T05:30:00', '2026-11-01T06:29:59'], // 01:30 EDT; 01:29:59 EST
      ['2026-11-01T05:00:00', '2026-11-01T05:30:00', '2026-11-01T06:00:00', '2026-11-01T06:30:00'],
    ],
    [
      'New York, clocks forward: a start the clock skips opens as it jumps',
      'deny sun 02:30 1h America/New_York',
      ['2026-03-08T06:59:59', '2026-03-08T08:00:00'], // 01:59:59 EST; 04:00 EDT
      ['2026-03-08T07:00:00', '2026-03-08T07:59:59'], // 03:00 and 03:59:59 EDT
      ['2026-03-08T06:00:00', '2026-03-08T07:00:00', '2026-03-08T07:30:00', '2026-03-08T08:00:00'],
    ],
  ])('across a daylight saving change: %s', (_night, line, open, closed, changes) => {
    const rule = windows(line);
    const utc = (time: string) => at(`${time}Z`);
    for (const time of open) expect(isOpen(rule, utc(time)), time).toBe(true);
    for (const time of closed) expect(isOpen(rule, utc(time)), time).toBe(false);
    const [before, closes, inside, opens] = changes.map(utc) as [number, number, number, number];
    expect(windowState(rule, before)).toEqual({ open: true, closesAt: closes });
    expect(windowState(rule, inside)).toEqual({ open: false, opensAt: opens });
  });

  it('lasts its duration of elapsed time over a change: 64h from Friday 16:00 in Berlin', () => {
    const freeze = windows('deny fri 16:00 64h Europe/Berlin');
    // Monday 08:00 on a weekend with no change; 07:00 CET when the clocks went back, 09:00 CEST
    // when they went forward (64 hours after Friday 16:00 either way).
    for (const [friday, monday] of [
      ['2026-11-20T15:00:00Z', '2026-11-23T07:00:00Z'],
      ['2026-10-23T14:00:00Z', '2026-10-26T06:00:00Z'],
      ['2026-03-27T15:00:00Z', '2026-03-30T07:00:00Z'],
    ] as const) {
      expect(windowState(freeze, at(friday) - 1000)).toEqual({ open: true, closesAt: at(friday) });
      expect(windowState(freeze, at(friday))).toEqual({ open: false, opensAt: at(monday) });
      expect(at(monday) - at(friday)).toBe(64 * 3600_000);
    }
  });

  it('says when no window opens within 8 days', () => {
    const never = windows('allow mon 09:00 1h', 'deny * 00:00 24h');
    expect(windowState(never, at('2026-11-23T09:30:00Z'))).toEqual({
      open: false,
      opensAt: undefined,
    });
    expect(waitingWords({ open: false })).toBe(
      'waiting for a sync window (none opens within 8 days)',
    );
  });
});
