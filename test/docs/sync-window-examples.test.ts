/**
 * The sync window examples of docs/daemon.md state the local times at which each window starts
 * and ends in a week with no daylight saving change (test/core/windows.test.ts holds those nights).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseWindow, windowState } from '../../src/core/windows.ts';

const DOC = readFileSync(new URL('../../docs/daemon.md', import.meta.url), 'utf8');

/** Per example: an instant before the window starts and one inside it, in a week with no change. */
const CHECKED: Record<string, readonly [before: string, inside: string]> = {
  'allow mon-fri 09:00 8h Europe/Berlin': ['2026-11-23T06:00:00Z', '2026-11-23T10:00:00Z'],
  'deny fri 16:00 64h Europe/Berlin': ['2026-11-20T12:00:00Z', '2026-11-21T12:00:00Z'],
  'deny * 22:00 8h America/New_York': ['2026-11-24T17:00:00Z', '2026-11-25T04:00:00Z'],
};

/** The example lines of the block that starts with the form, split into window and words. */
function examples(): { window: string; words: string }[] {
  const block = /```text\nKIND DAYS START DURATION \[TIME-ZONE\]\n([\s\S]*?)```/.exec(DOC)?.[1];
  if (block === undefined) throw new Error('docs/daemon.md has no block of window examples');
  return block
    .split('\n')
    .filter((line) => /^(allow|deny) /.test(line))
    .map((line) => {
      const [window = '', words = ''] = line.split(/\s{3,}/);
      return { window: window.replace(/\s+/g, ' '), words };
    });
}

describe('the sync window examples of docs/daemon.md', () => {
  const found = examples();

  it('are all checked here', () => {
    expect(found.map((example) => example.window).sort()).toEqual(Object.keys(CHECKED).sort());
  });

  it.each(found)('$window: the times stated are the code’s', ({ window, words }) => {
    const parsed = parseWindow(window);
    if ('error' in parsed) throw new Error(parsed.error);
    const local = (ms: number | undefined) =>
      ms === undefined
        ? 'never'
        : new Intl.DateTimeFormat('en-GB', {
            timeZone: parsed.timeZone,
            hour: '2-digit',
            minute: '2-digit',
            hourCycle: 'h23',
          }).format(ms);
    const times = (CHECKED[window] ?? []).map((iso) => {
      const state = windowState([parsed], Date.parse(iso));
      return local(state.opensAt ?? state.closesAt);
    });
    expect(words.match(/\d\d:\d\d/g)).toEqual(times);
  });
});
