/**
 * Sync windows (docs/daemon.md, "Sync windows"): a window opens at the first instant the zone's
 * clock reads its start time (or later) on a start day, and lasts its duration of elapsed time.
 */

export interface SyncWindow {
  readonly kind: 'allow' | 'deny';
  /** The days it starts on, 0 = Sunday (as Date#getUTCDay counts). */
  readonly days: readonly number[];
  /** After local midnight. */
  readonly startMinutes: number;
  readonly durationMs: number;
  readonly timeZone: string;
  /** The line it was read from, for messages and the status page. */
  readonly text: string;
}

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MAX_DURATION = 7 * DAY;

function parseDays(text: string): number[] | string {
  if (text === '*') return [0, 1, 2, 3, 4, 5, 6];
  const days = new Set<number>();
  for (const part of text.split(',')) {
    const [a = -1, b = a, extra] = part.split('-').map((name) => DAY_NAMES.indexOf(name as 'sun'));
    if (a < 0 || b < 0 || extra !== undefined) {
      return `"${part}" is not a day or a range of days (mon, tue, wed, thu, fri, sat, sun; mon-fri; or * for every day)`;
    }
    // A range may wrap around the week: fri-mon is fri, sat, sun, mon.
    for (let day = a; ; day = (day + 1) % 7) {
      days.add(day);
      if (day === b) break;
    }
  }
  return [...days].sort((x, y) => x - y);
}

function parseDuration(text: string): number | string {
  const match = /^(?=\d)(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/.exec(text);
  if (match === null) return `"${text}" is not a duration (8h, 30m, 1h30m, 2d)`;
  const [, d = 0, h = 0, m = 0] = match.map((group) => Number(group ?? 0));
  const ms = d * DAY + h * HOUR + m * MINUTE;
  if (ms <= 0 || ms > MAX_DURATION) return `"${text}" must be more than 0 and at most 7d`;
  return ms;
}

function knownZone(zone: string): boolean {
  try {
    return Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone !== '';
  } catch {
    return false;
  }
}

/** One window read from its line, or what is wrong with it. */
export function parseWindow(line: string): SyncWindow | { readonly error: string } {
  const text = line.trim().replace(/\s+/g, ' ');
  const parts = text.split(' ');
  if (parts.length < 4 || parts.length > 5) {
    return {
      error: `"${text}" is not a window: write KIND DAYS START DURATION [TIME-ZONE], e.g. "allow mon-fri 09:00 8h Europe/Berlin" or "deny fri 16:00 64h"`,
    };
  }
  const [kind = '', daysText = '', start = '', durationText = '', zone = 'UTC'] = parts;
  const refused = (what: string) => ({ error: `${what}, in window "${text}"` });
  if (kind !== 'allow' && kind !== 'deny') return refused(`"${kind}" is not allow or deny`);
  const days = parseDays(daysText.toLowerCase());
  if (typeof days === 'string') return refused(days);
  const time = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(start);
  if (time === null) return refused(`"${start}" is not a time HH:MM`);
  const durationMs = parseDuration(durationText);
  if (typeof durationMs === 'string') return refused(durationMs);
  if (!knownZone(zone)) return refused(`"${zone}" is not an IANA time zone (Europe/Berlin, UTC)`);
  const startMinutes = Number(time[1]) * 60 + Number(time[2]);
  return { kind, days, startMinutes, durationMs, timeZone: zone, text };
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's wall clock at `ms`, written as UTC (so its offset is the difference). */
function wallClock(ms: number, zone: string): number {
  const format =
    formats.get(zone) ??
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  formats.set(zone, format);
  const part: Record<string, number> = {};
  for (const { type, value } of format.formatToParts(ms)) part[type] = Number(value);
  const { year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = part;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

/**
 * The first instant the zone's wall clock reads `wall` (written as UTC) or later: of two (clocks
 * went back), the earlier; for a time skipped (clocks went forward), the jump. The zone's offsets
 * a day before and after bracket a daylight saving change near `wall`.
 */
function firstInstantAt(wall: number, zone: string): number {
  const a = wall - (wallClock(wall - DAY, zone) - (wall - DAY));
  const b = wall - (wallClock(wall + DAY, zone) - (wall + DAY));
  const [early, late] = a < b ? [a, b] : [b, a];
  if (wallClock(early, zone) === wall) return early;
  if (wallClock(late, zone) === wall) return late;
  // Skipped: the jump is found to the second by halving (a gap of an hour takes 12 steps).
  let [before, after] = [early, late];
  while (after - before > 1000) {
    const middle = before + Math.floor((after - before) / 2000) * 1000;
    if (wallClock(middle, zone) < wall) before = middle;
    else after = middle;
  }
  return after;
}

/** The starts and ends of `window`'s occurrences that touch [from, to). */
function occurrences(window: SyncWindow, from: number, to: number): [number, number][] {
  const found: [number, number][] = [];
  const firstDay = Math.floor(wallClock(from - window.durationMs, window.timeZone) / DAY) - 1;
  const lastDay = Math.floor(wallClock(to, window.timeZone) / DAY) + 1;
  for (let day = firstDay; day <= lastDay; day++) {
    if (!window.days.includes(new Date(day * DAY).getUTCDay())) continue;
    const start = firstInstantAt(day * DAY + window.startMinutes * MINUTE, window.timeZone);
    const end = start + window.durationMs;
    if (end > from && start < to) found.push([start, end]);
  }
  return found;
}

function covers(window: SyncWindow, at: number): boolean {
  return occurrences(window, at, at + 1).some(([start, end]) => start <= at && at < end);
}

export function isOpen(windows: readonly SyncWindow[], at: number): boolean {
  if (windows.some((w) => w.kind === 'deny' && covers(w, at))) return false;
  const allows = windows.filter((w) => w.kind === 'allow');
  return allows.length === 0 || allows.some((w) => covers(w, at));
}

/** How far ahead the next opening or closing is looked for. */
const HORIZON = 8 * DAY;

/** The first boundary after `at` (within HORIZON) at which `isOpen` says `open`. */
function nextBoundary(windows: readonly SyncWindow[], at: number, open: boolean) {
  const boundaries = windows.flatMap((w) => occurrences(w, at, at + HORIZON).flat());
  return boundaries
    .filter((t) => t > at)
    .sort((a, b) => a - b)
    .find((t) => isOpen(windows, t) === open);
}

/** Whether changes may be sent now, and when that changes (undefined: not within 8 days). */
interface WindowState {
  readonly open: boolean;
  readonly opensAt?: number | undefined;
  readonly closesAt?: number | undefined;
}

/** Open, with nothing to say, when there are no windows. */
export function windowState(windows: readonly SyncWindow[], now: number): WindowState {
  if (windows.length === 0) return { open: true };
  const open = isOpen(windows, now);
  return open
    ? { open, closesAt: nextBoundary(windows, now, false) }
    : { open, opensAt: nextBoundary(windows, now, true) };
}

/** "waiting for a sync window (opens at ...)", the time in ISO 8601 UTC. */
export function waitingWords(state: WindowState | WindowReport): string {
  return state.opensAt === undefined
    ? 'waiting for a sync window (none opens within 8 days)'
    : `waiting for a sync window (opens at ${new Date(state.opensAt).toISOString()})`;
}

/** As reports and `/status` show it: times in ISO 8601 UTC. */
export interface WindowReport {
  readonly open: boolean;
  readonly opensAt?: string;
  readonly closesAt?: string;
  /** `--ignore-windows`: a sync sent its changes although no window was open. */
  readonly ignored?: true;
}

export function windowReport(state: WindowState, ignored = false): WindowReport {
  return {
    open: state.open,
    ...(state.opensAt === undefined ? {} : { opensAt: new Date(state.opensAt).toISOString() }),
    ...(state.closesAt === undefined ? {} : { closesAt: new Date(state.closesAt).toISOString() }),
    ...(ignored && !state.open ? { ignored: true as const } : {}),
  };
}

/** What a run's report says of the sync windows, if anything. */
export function windowLine(report: { readonly window?: WindowReport }): string | undefined {
  const window = report.window;
  if (window === undefined) return undefined;
  if (window.ignored === true) return 'Outside the sync windows: sent anyway (--ignore-windows).';
  if (window.open) return undefined;
  return `Outside the sync windows: nothing was sent; ${waitingWords(window)}.`;
}
