import type { Logger } from 'pino';
import type { DaemonSettings } from '../config/daemon-settings.ts';
import type { Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import type { TokenSet } from '../config/tokens.ts';
import type { Masker } from '../core/mask.ts';
import type { NotifyDeps } from './notify-setup.ts';

/** What a daemon is made of: its settings, and the outside world, passed in. */
export interface DaemonOptions {
  readonly settings: Settings;
  readonly daemon: DaemonSettings;
  readonly apiUrl: URL;
  /**
   * The tokens, read before each pass, so that a rotated token file (or a file of the token
   * directory) is used without a restart (config/tokens.ts's readTokens).
   */
  readonly readTokens: () => Promise<TokenSet>;
  readonly ca?: string | undefined;
  readonly cwd: string;
  readonly logger: Logger;
  /** Source of randomness for the interval's jitter (tests pass a fixed one). */
  readonly random?: () => number;
  /** Time and timers, for passes, backoff, readiness and the client (the real clock by default). */
  readonly clock?: Clock;
  /**
   * The secrets every sink of the daemon masks (its logs, HTTP answers, notifications, state
   * file): the daemon adds each token it reads, and the notify secret and URL credentials.
   */
  readonly secrets: Masker;
  /** The notifications' sender and limits (tests replace them). */
  readonly notify?: NotifyDeps;
}
