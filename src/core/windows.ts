/**
 * Sync windows: when envsync may send changes. A window is written as one line,
 *
 *   KIND DAYS START DURATION [TIME-ZONE]      e.g.  allow mon-fri 09:00 8h Europe/Berlin
 *
 * - KIND: `allow` (changes are sent only inside some allow window) or `deny` (never inside one);
 * - DAYS: `*` for every day, or days and ranges of `mon tue wed thu fri sat sun`, comma-separated
 *   (`mon-fri`, `sat,sun`, `mon,wed-fri`): the days a window starts on;
 * - START: the local time it starts, `HH:MM` (24 hours);
 * - DURATION: how long it lasts, `8h`, `30m`, `1h30m`, `2d` (up to 7 days; it may run past
 *   midnight and into the next days);
 * - TIME-ZONE: an IANA zone (`Europe/Berlin`, `America/New_York`), UTC when left out. Daylight
 *   saving time is the zone's: `09:00` is nine o'clock on the wall clock, summer and winter.
 *
 * The rule across daylight saving changes (docs/daemon.md): a window opens at the first instant
 * the zone's clock reads its start time (or later) on a start day, and lasts its duration of
 * elapsed time. On the night clocks go back, a start in the repeated hour is its first pass; on
 * the night they go forward, a start the clock skips opens the window as the clock jumps, at the
 * first instant after the gap.
 *
 * Changes may be sent at an instant when no deny window covers it and, if there is any allow
 * window, one covers it. Pure: the time comes in as epoch milliseconds; the zones' rules come
 * from the JavaScript engine's Intl data.
 */

export type WindowKind = 'allow' | 'deny';

export interface SyncWindow {
  readonly kind: WindowKind;
  /** The days it starts on, 0 = Sunday ... 6 = Saturday (as Date#getUTCDay counts). */
  readonly days: readonly number[];
  /** Minutes after local midnight it starts. */
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

/** How a window is written, for messages. */
export const WINDOW_FORM =
  'KIND DAYS START DURATION [TIME-ZONE], e.g. "allow mon-fri 09:00 8h Europe/Berlin" or "deny fri 16:00 64h"';

function dayIndex(name: string): number | undefined {
  const index = (DAY_NAMES as readonly string[]).indexOf(name);
  return index < 0 ? undefined : index;
}

function parseDays(text: string): number[] | string {
  if (text === '*') return [0, 1, 2, 3, 4, 5, 6];
  const days = new Set<number>();
  for (const part of text.split(',')) {
    const [from, to, extra] = part.split('-');
    const a = dayIndex(from ?? '');
    const b = to === undefined ? a : dayIndex(to);
    if (a === undefined || b === undefined || extra !== undefined) {
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
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/.exec(text);
  const ms =
    match === null || text === ''
      ? Number.NaN
      : Number(match[1] ?? 0) * DAY + Number(match[2] ?? 0) * HOUR + Number(match[3] ?? 0) * MINUTE;
  if (Number.isNaN(ms)) return `"${text}" is not a duration (8h, 30m, 1h30m, 2d)`;
  if (ms <= 0 || ms > MAX_DURATION) return `"${text}" must be more than 0 and at most 7d`;
  return ms;
}

/** Whether the engine knows the zone. */
function knownZone(zone: string): boolean {
  try {
    // The constructor refuses a zone it does not know (RangeError).
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
    return { error: `"${text}" is not a window: write ${WINDOW_FORM}` };
  }
  const [kind, daysText, start, durationText, zone = 'UTC'] = parts as [
    string,
    string,
    string,
    string,
    string?,
  ];
  if (kind !== 'allow' && kind !== 'deny') {
    return { error: `"${kind}" is not allow or deny, in window "${text}"` };
  }
  const days = parseDays(daysText.toLowerCase());
  if (typeof days === 'string') return { error: `${days}, in window "${text}"` };
  const time = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(start);
  if (time === null) return { error: `"${start}" is not a time HH:MM, in window "${text}"` };
  const durationMs = parseDuration(durationText);
  if (typeof durationMs === 'string') return { error: `${durationMs}, in window "${text}"` };
  if (!knownZone(zone)) {
    return {
      error: `"${zone}" is not an IANA time zone (Europe/Berlin, UTC), in window "${text}"`,
    };
  }
  return {
    kind,
    days,
    startMinutes: Number(time[1]) * 60 + Number(time[2]),
    durationMs,
    timeZone: zone,
    text,
  };
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The zone's wall clock at `ms`, as if it were UTC (so its offset is the difference). */
function wallClock(ms: number, zone: string): number {
  let format = formats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
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
  }
  const part: Record<string, number> = {};
  for (const { type, value } of format.formatToParts(ms)) part[type] = Number(value);
  return Date.UTC(
    part['year'] ?? 1970,
    (part['month'] ?? 1) - 1,
    part['day'] ?? 1,
    part['hour'] ?? 0,
    part['minute'] ?? 0,
    part['second'] ?? 0,
  );
}

/** The zone's offset from UTC at the instant `ms`, in ms. */
function offsetAt(ms: number, zone: string): number {
  return wallClock(ms, zone) - ms;
}

/**
 * The first instant at which the zone's wall clock reads `wall` (a local time written as UTC) or
 * later: of two instants that read it (clocks went back), the earlier; for a time the clock skips
 * (clocks went forward), the instant it jumps. The offsets a day before and after bracket a
 * daylight saving change near `wall`.
 */
function firstInstantAt(wall: number, zone: string): number {
  const a = wall - offsetAt(wall - DAY, zone);
  const b = wall - offsetAt(wall + DAY, zone);
  const [early, late] = a < b ? [a, b] : [b, a];
  if (wallClock(early, zone) === wall) return early;
  if (wallClock(late, zone) === wall) return late;
  // Skipped: the clock reads less than `wall` at `early` and more at `late`. The jump is found to
  // the second by halving (a gap of an hour takes 12 steps).
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

/** Whether `window` covers the instant `at`. */
function covers(window: SyncWindow, at: number): boolean {
  return occurrences(window, at, at + 1).some(([start, end]) => start <= at && at < end);
}

/** Whether changes may be sent at `at`. */
export function isOpen(windows: readonly SyncWindow[], at: number): boolean {
  if (windows.some((w) => w.kind === 'deny' && covers(w, at))) return false;
  const allows = windows.filter((w) => w.kind === 'allow');
  return allows.length === 0 || allows.some((w) => covers(w, at));
}

/** How far ahead `windowState` looks for the next opening or closing. */
const HORIZON = 8 * DAY;

/** The first boundary after `at` (within HORIZON) at which `isOpen` says `open`. */
function nextBoundary(
  windows: readonly SyncWindow[],
  at: number,
  open: boolean,
): number | undefined {
  const boundaries = windows
    .flatMap((w) => occurrences(w, at, at + HORIZON).flat())
    .filter((t) => t > at)
    .sort((a, b) => a - b);
  return boundaries.find((t) => isOpen(windows, t) === open);
}

/** Whether changes may be sent now, and when that changes (undefined: not within 8 days). */
export interface WindowState {
  readonly open: boolean;
  /** When closed: when the next window opens. */
  readonly opensAt?: number | undefined;
  /** When open and some window bounds it: when it closes. */
  readonly closesAt?: number | undefined;
}

/** The windows' state at `now`; open, with nothing to say, when there are none. */
export function windowState(windows: readonly SyncWindow[], now: number): WindowState {
  if (windows.length === 0) return { open: true };
  const open = isOpen(windows, now);
  return open
    ? { open, closesAt: nextBoundary(windows, now, false) }
    : { open, opensAt: nextBoundary(windows, now, true) };
}

/** "waiting for a sync window (opens at ...)" in words, the time in ISO 8601 UTC. */
export function waitingWords(state: WindowState): string {
  return state.opensAt === undefined
    ? 'waiting for a sync window (none opens within 8 days)'
    : `waiting for a sync window (opens at ${new Date(state.opensAt).toISOString()})`;
}

/** A window state as reports and `/status` show it: times as ISO 8601 UTC. */
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

/** A reported state read back (for its words). */
export function stateOf(report: WindowReport): WindowState {
  return {
    open: report.open,
    opensAt: report.opensAt === undefined ? undefined : Date.parse(report.opensAt),
    closesAt: report.closesAt === undefined ? undefined : Date.parse(report.closesAt),
  };
}

/** What a run's report says of the sync windows, when there is something to say. */
export function windowLine(report: { readonly window?: WindowReport }): string | undefined {
  const window = report.window;
  if (window === undefined) return undefined;
  if (window.ignored === true) return 'Outside the sync windows: sent anyway (--ignore-windows).';
  if (window.open) return undefined;
  return `Outside the sync windows: nothing was sent; ${waitingWords(stateOf(window))}.`;
}
