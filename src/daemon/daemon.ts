import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import {
  daemonStatus,
  EMPTY_DAEMON_MEMORY,
  nextAttemptAt,
  readinessOfMemory,
  type DaemonMemory,
  type Step,
  type Surroundings,
} from './daemon-memory.ts';
import { afterFailedRound, afterOrg, afterPass, beginPass, type PassEnd } from './daemon-pass.ts';
import { health, ownsOrg, stopBudget } from './daemon-policy.ts';
import type { DaemonStatus } from './daemon-status.ts';
import type { Masker } from '../core/mask.ts';
import { shownApiUrl } from '../config/api-url.ts';
import { errorMessage } from '../runtime/errors.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { DaemonMetrics } from './metrics.ts';
import type { DaemonOptions } from './daemon-options.ts';
import { openDaemonResources, type DaemonResources } from './notify-setup.ts';
import { passOrg, passTokens, type PassTokens } from './pass-org.ts';
import { PassTimers } from './pass-timers.ts';
import { runEngine } from './run-engine.ts';
import { PassScheduler } from './scheduler.ts';
import { SettledReader } from './settled-read.ts';
import { Shutdown } from './shutdown.ts';
import { ManifestWatcher } from './watcher.ts';
import { WEBHOOK_TRIGGER, WebhookSpacer } from './webhook-spacing.ts';
import { SendGate } from './send-gate.ts';

export type { DaemonOptions } from './daemon-options.ts';

/** What a pass has learned so far, before its outcome. */
type PassSoFar = { -readonly [K in Exclude<keyof PassEnd, 'outcome'>]: PassEnd[K] };

/**
 * The long-running reconciler: triggers (files, git-sync swaps, interval, webhook, SIGHUP) feed
 * one single-flight scheduler; each pass reads a settled snapshot and runs the same engine as
 * `envsync sync`. What a pass means is decided in daemon/daemon-pass.ts; this class carries it out.
 */
export class Daemon {
  readonly metrics = new DaemonMetrics();
  /** The API's address without credentials, query or fragment, for the status page. */
  readonly apiAddress: string;
  /** What every sink of the daemon masks (its endpoints: http.ts). */
  readonly secrets: Masker;
  readonly #options: DaemonOptions;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #scheduler: PassScheduler;
  readonly #shutdown: Shutdown;
  readonly #webhooks: WebhookSpacer;
  readonly #reader: SettledReader;
  #memory: DaemonMemory = EMPTY_DAEMON_MEMORY;
  readonly #watcher: ManifestWatcher;
  /** The state file, the notifier (none without --notify-url) and the passes' shared transport. */
  #open: DaemonResources | undefined;
  readonly #timers: PassTimers;
  /** Observe mode and the sync windows: whether a pass may send. */
  readonly #gate: SendGate;
  /** The last pass's tokens: where each org's came from, for `/status`. */
  #tokens: PassTokens | undefined;

  constructor(options: DaemonOptions) {
    const { settings, daemon } = options;
    this.#options = options;
    this.apiAddress = shownApiUrl(options.apiUrl);
    this.secrets = options.secrets;
    this.#logger = options.logger;
    this.#clock = options.clock ?? systemClock;
    this.#shutdown = new Shutdown(this.#clock);
    this.#scheduler = new PassScheduler((r) => this.#pass(r), daemon.debounceMs, this.#clock);
    this.#webhooks = new WebhookSpacer(this.#clock, daemon.webhookMinIntervalMs, () =>
      this.#scheduler.now(WEBHOOK_TRIGGER),
    );
    const start = (reason: string) => this.#scheduler.now(reason);
    const random = options.random ?? Math.random;
    const [clock, logger, windows] = [this.#clock, this.#logger, settings.syncWindows ?? []];
    this.#timers = new PassTimers({ clock, intervalMs: daemon.intervalMs, random, start });
    this.#gate = new SendGate({ clock, windows, observe: daemon.observe, logger, start });
    this.#watcher = new ManifestWatcher({
      root: settings.manifests,
      cwd: options.cwd,
      exclude: settings.exclude ?? [],
      maxFileBytes: settings.maxFileBytes,
      logger: this.#logger,
      clock: this.#clock,
      onFileEvent: (reason) => {
        this.#reader.fileEvent(reason);
        this.#scheduler.debounced(reason);
      },
      onRetarget: (resolution) => {
        this.#reader.newRevision();
        this.#scheduler.now(`revision ${resolution.revision ?? resolution.realRoot}`);
      },
    });
    this.#reader = new SettledReader({
      root: settings.manifests,
      cwd: options.cwd,
      maxFileBytes: settings.maxFileBytes,
      exclude: settings.exclude,
      strict: settings.strict,
      settleMs: daemon.settleMs,
      clock: this.#clock,
      logger: this.#logger,
      stop: this.#shutdown.stopping,
    });
  }

  /** Loads the state, starts watching and runs the first pass (not awaited). */
  async start(): Promise<void> {
    this.#open = await openDaemonResources(this.#options, this.#clock, this.metrics);
    await this.#watcher.start();
    this.#scheduler.now('start');
  }

  /** Starts a pass now (SIGHUP). */
  trigger(reason: string): void {
    this.#scheduler.now(reason);
  }

  /** A webhook: when its pass is due (ms since the epoch), and whether it joined one (webhook-spacing.ts). */
  webhook(): { runAt: number; joined: boolean } {
    return this.#webhooks.request();
  }

  /** Ready once the first pass ended, while passes keep ending and an org is reconciled. */
  get ready(): { ready: boolean; reason?: string } {
    return readinessOfMemory(this.#memory, this.#around());
  }

  /** False when a pass has been running for far too long (the loop is wedged). */
  get healthy(): { healthy: boolean; reason?: string } {
    const { intervalMs } = this.#options.daemon;
    return health(this.#scheduler.passStartedAt, intervalMs, this.#clock.now());
  }

  status(): DaemonStatus {
    const { state, notifier } = this.#open ?? {};
    return daemonStatus(this.#memory, {
      manifests: this.#options.settings.manifests,
      ready: this.ready.ready,
      passRunning: this.#scheduler.running,
      shard: this.#options.daemon.shard ?? null,
      stateFile: { path: state?.file ?? null, writeError: state?.writeError ?? null },
      mode: this.#gate.mode,
      window: this.#gate.report(),
      ...(notifier === undefined ? {} : { notifications: notifier.status() }),
      tokenSource: (org) => this.#tokens?.sourceOf(org) ?? null,
    });
  }

  /** Resolves when no pass runs or is pending (for tests). */
  idle(): Promise<void> {
    return this.#scheduler.idle();
  }

  /**
   * Graceful stop: no new triggers or rounds; every wait (Retry-After, a throttle pause) ends at
   * once, and requests being retried are cancelled (shutdown.ts); a healthy pass in flight may
   * finish within the shutdown timeout (then its requests are aborted); the state is written.
   */
  async stop(): Promise<void> {
    if (this.#shutdown.stopping.aborted) return;
    this.#timers.stop();
    this.#gate.stop();
    this.#webhooks.stop();
    const stopped = this.#scheduler.stop();
    this.#shutdown.begin();
    await this.#watcher.close();
    const { passMs } = stopBudget(this.#options.daemon.shutdownTimeoutMs);
    await this.#shutdown.finish(stopped, passMs, this.#logger);
    await this.#open?.state.save();
    // Bounded: a receiver that is down or hung holds the stop for the drain time at most.
    await this.#open?.notifier?.close();
    await this.#open?.transport.pool.close();
  }

  async #pass(reasons: readonly string[]): Promise<void> {
    const startedAt = this.#clock.now();
    this.#webhooks.passStarted(reasons, startedAt);
    const end: PassSoFar = { startedAt, settleWaitMs: 0, reasons, owned: [], due: [], skipped: 0 };
    let outcome: PassEnd['outcome'];
    try {
      const read = await this.#reader.read();
      if (read === undefined) return; // stopping: the pass never began
      end.settleWaitMs = read.settleWaitMs;
      const { manifests, revision } = read.snapshot;
      const { daemon, settings } = this.#options;
      const owned = manifests.orgs.filter((o) => ownsOrg(o.org, daemon.shard, settings.orgs));
      end.owned = owned.map(passOrg);
      const tokens = (this.#tokens = passTokens(await this.#options.readTokens()));
      for (const token of tokens.all) this.secrets.add(token);
      const unattributed = manifests.unattributed.map(({ org: _org, ...problem }) => problem);
      const { changedFiles } = read;
      const start = { owned: end.owned, reasons, changedFiles, tokenKey: tokens.keyOf };
      const begun = this.#carry(
        beginPass(this.#memory, { ...start, revision, unattributed }, this.#around()),
      );
      ({ due: end.due, skipped: end.skipped } = begun);
      const due = new Map(begun.due.map((org) => [org.org, org]));
      const gate = this.#gate.check();
      const report = await runEngine({
        dryRun: gate.dryRun,
        transport: (this.#open as DaemonResources).transport,
        settings,
        apiUrl: this.#options.apiUrl,
        ca: this.#options.ca,
        tokens,
        mask: this.secrets.mask,
        manifests: { ...manifests, orgs: owned.filter((org) => due.has(org.org)) },
        revision,
        state: (this.#open as DaemonResources).state,
        logger: this.#logger,
        clock: this.#clock,
        shutdown: this.#shutdown,
        metrics: this.metrics,
        onRoundFailed: (org) => this.#carry(afterFailedRound(this.#memory, org, this.#around())),
        onOrgDone: (org) =>
          this.#carry(
            afterOrg(this.#memory, org, due.get(org.org), tokens.keyOf(org.org), this.#around()),
          ),
      });
      outcome = { kind: 'done', report, cutShort: this.#shutdown.stopping.aborted };
    } catch (error) {
      outcome = { kind: 'error', message: errorMessage(error) };
    }
    const ended = this.#carry(afterPass(this.#memory, { ...end, outcome }, this.#around()));
    this.#open?.notifier?.notify(ended.events);
    this.#timers.arm(nextAttemptAt(this.#memory));
  }

  /** Carries out a decision: keeps its memory, writes its log lines, updates the metrics. */
  #carry<S extends Step>(step: S): S {
    this.#memory = step.memory;
    for (const { level, fields, message } of step.logs) this.#logger[level](fields, message);
    this.metrics.apply(step.metrics);
    return step;
  }

  #around(): Surroundings {
    return {
      now: this.#clock.now(),
      intervalMs: this.#options.daemon.intervalMs,
      stateWriteError: this.#open?.state.writeError,
    };
  }
}
