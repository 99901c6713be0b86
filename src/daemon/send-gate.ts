import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.ts';
import {
  windowReport,
  waitingWords,
  windowState,
  type SyncWindow,
  type WindowReport,
  type WindowState,
} from '../core/windows.ts';

/** What the daemon does with a pass: send its changes, or plan only and say why. */
export type DaemonMode = 'normal' | 'observe';

/**
 * Whether a daemon pass may send: never in observe mode (`--observe`), and only while the sync
 * windows are open (core/windows.ts). When a pass finds them closed, a pass is started the moment
 * the next window opens, so the changes it planned go out then, whatever the interval.
 */
export class SendGate {
  readonly #clock: Clock;
  readonly #windows: readonly SyncWindow[];
  readonly #observe: boolean;
  readonly #start: (reason: string) => void;
  readonly #logger: Logger;
  #opening: Timer | undefined;
  #stopped = false;

  constructor(options: {
    readonly clock: Clock;
    readonly windows: readonly SyncWindow[];
    readonly observe: boolean;
    readonly logger: Logger;
    readonly start: (reason: string) => void;
  }) {
    this.#logger = options.logger;
    this.#clock = options.clock;
    this.#windows = options.windows;
    this.#observe = options.observe;
    this.#start = options.start;
  }

  get mode(): DaemonMode {
    return this.#observe ? 'observe' : 'normal';
  }

  /** At a pass's start: whether it plans only, and the windows' state now. */
  check(): { readonly dryRun: boolean; readonly window: WindowState } {
    const window = windowState(this.#windows, this.#clock.now());
    this.#opening?.cancel();
    this.#opening = undefined;
    if (!window.open && window.opensAt !== undefined && !this.#stopped) {
      const delay = Math.max(0, window.opensAt - this.#clock.now());
      this.#opening = this.#clock.setTimer(delay, () => this.#start('sync window opens'), {
        unref: true,
      });
    }
    const dryRun = this.#observe || !window.open;
    if (dryRun) {
      const why = this.#observe ? 'observe mode' : waitingWords(window);
      this.#logger.info(
        { mode: this.mode, window: windowReport(window) },
        `this pass plans only, nothing is sent: ${why}`,
      );
    }
    return { dryRun, window };
  }

  /** The windows' state now, for /status and the page; null without windows. */
  report(): WindowReport | null {
    if (this.#windows.length === 0) return null;
    return windowReport(windowState(this.#windows, this.#clock.now()));
  }

  stop(): void {
    this.#stopped = true;
    this.#opening?.cancel();
  }
}
