import type { Writable } from 'node:stream';
import type { ApplyProgress } from '../engine/reconcile.ts';

/** Above this many changes, a sync on a terminal shows its progress. */
const SHOW_ABOVE = 50;
const REDRAW_MS = 100;

/** A one-line progress display of a sync with many changes, on a terminal only. */
export function terminalProgress(
  stream: Writable & { isTTY?: boolean },
  now: () => number = Date.now,
): ApplyProgress & { finish(): void } {
  const started = now();
  let total = 0;
  let done = 0;
  let failed = 0;
  let drawn = false;
  let lastDraw = 0;
  const draw = (force: boolean) => {
    if (!stream.isTTY || total <= SHOW_ABOVE) return;
    const time = now();
    if (!force && time - lastDraw < REDRAW_MS) return;
    lastDraw = time;
    const seconds = Math.max(0.001, (time - started) / 1000);
    const percent = Math.floor((done / total) * 100);
    stream.write(
      `\r\u001b[2Kapplying: ${done}/${total} (${percent}%), ${failed} failed, ${(done / seconds).toFixed(1)}/s`,
    );
    drawn = true;
  };
  return {
    planned(count) {
      total += count;
      draw(false);
    },
    done(didFail) {
      done++;
      if (didFail) failed++;
      draw(done === total);
    },
    finish() {
      if (drawn) stream.write('\n');
    },
  };
}
