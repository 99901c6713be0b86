import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { clientFromSettings, connectionPool, type Transport } from '../api/client.ts';
import { RequestGate } from '../api/gate.ts';
import { shownApiUrl } from '../config/api-url.ts';
import type { DaemonSettings } from '../config/daemon-settings.ts';
import {
  readSecretFile,
  tokenFor,
  tokenGetter,
  tokenSourceOf,
  tokensOf,
  type TokenSet,
} from '../config/tokens.ts';
import { SETTINGS, type Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import type { Masker } from '../core/mask.ts';
import { waitingWords, windowReport, windowState } from '../core/windows.ts';
import { reconcile } from '../engine/reconcile.ts';
import type { OrgManifest } from '../manifests/load.ts';
import { Notifier, type NotifierOptions } from '../notify/delivery.ts';
import { errorMessage } from '../runtime/errors.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { StateStore } from '../state/store.ts';
import { DaemonMetrics } from './metrics.ts';
import {
  afterFailedRound,
  afterOrg,
  afterPass,
  beginPass,
  daemonStatus,
  EMPTY_DAEMON_MEMORY,
  liveness,
  nextAttemptAt,
  ownsOrg,
  readiness,
  type DaemonMemory,
  type PassEnd,
  type PassOrg,
  type Step,
  type Surroundings,
} from './pass.ts';
import { PassScheduler } from './scheduler.ts';
import { Shutdown, stopBudget } from './shutdown.ts';
import { MAX_ENVIRONMENT_ROWS, type DaemonStatus } from './status.ts';
import { ManifestWatcher } from './watcher.ts';

/** What tests may replace in the notifier: the sender and the delivery's limits. */
export type NotifyDeps = Pick<NotifierOptions, 'policy'>;

/** What a daemon is made of: its settings, and the outside world, passed in. */
export interface DaemonOptions {
  readonly settings: Settings;
  readonly daemon: DaemonSettings;
  readonly apiUrl: URL;
  /**
   * The tokens, read before each pass, so that a rotated token file (or a file of the token
   * directory) is used without a restart.
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
  readonly notify?: NotifyDeps;
}

/** The trigger a webhook pass carries. */
const WEBHOOK = 'webhook';

/** An org's manifests as the pass's decisions see them: its files, and its content as text. */
function passOrg(org: OrgManifest): PassOrg {
  const environments = org.environments.map(({ source: _source, ...env }) => env);
  // Policy documents count too: an edit of a policy file is a change of the manifests.
  const documents = (org.policies ?? []).map((doc) => [
    doc.name,
    doc.description ?? null,
    createHash('sha256').update(doc.content).digest('hex'),
  ]);
  return {
    org: org.org,
    files: org.files,
    manifestsKey: JSON.stringify(
      documents.length === 0 ? environments : { environments, documents },
    ),
    types: org.environments
      .slice(0, MAX_ENVIRONMENT_ROWS)
      .map((env) => [env.name, env.type] as const),
  };
}

/** What a daemon holds open for its life. */
interface Resources {
  readonly notifier: Notifier | undefined;
  readonly state: StateStore;
  /** One pool and one gate for every pass: connections and the pace learned carry over. */
  readonly transport: Transport;
}

/**
 * The long-running reconciler: triggers (files, git-sync swaps, interval, webhook, SIGHUP, a
 * backoff ending, a sync window opening) feed one single-flight scheduler; each pass reads a
 * settled snapshot and runs the same engine as `envsync sync`. What a pass means is decided in
 * daemon/pass.ts; this class carries it out.
 */
export class Daemon {
  readonly metrics = new DaemonMetrics();
  /** The API's address without credentials, query or fragment, for the status page. */
  readonly apiAddress: string;
  /** What every sink of the daemon masks (its endpoints: http.ts). */
  readonly secrets: Masker;
  readonly #options: DaemonOptions;
  readonly #clock: Clock;
  readonly #scheduler: PassScheduler;
  readonly #shutdown: Shutdown;
  readonly #watcher: ManifestWatcher;
  #memory: DaemonMemory = EMPTY_DAEMON_MEMORY;
  #open: Resources | undefined;
  /** The last pass's tokens: where each org's came from, for `/status`. */
  #tokens: TokenSet | undefined;
  /** When the last webhook pass started, and when the next one is due while one is asked for. */
  #lastWebhookPass = -Infinity;
  #webhookDue: number | undefined;

  constructor(options: DaemonOptions) {
    const { settings, daemon, logger, cwd } = options;
    this.#options = options;
    this.apiAddress = shownApiUrl(options.apiUrl);
    this.secrets = options.secrets;
    const clock = (this.#clock = options.clock ?? systemClock);
    this.#shutdown = new Shutdown(clock);
    this.#scheduler = new PassScheduler((r) => this.#pass(r), daemon.debounceMs, clock);
    this.#watcher = new ManifestWatcher({
      settings,
      cwd,
      settleMs: daemon.settleMs,
      clock,
      logger,
      stop: this.#shutdown.stopping,
      onFileEvent: (reason) => this.#scheduler.debounced(reason),
      onRetarget: ({ revision, realRoot }) =>
        this.#scheduler.now(`revision ${revision ?? realRoot}`),
    });
  }

  /**
   * Opens what the daemon holds for its life, in this order: its notifier (a notify secret that
   * cannot be read stops the start before the state's lock is taken), its state file, and the
   * transport its passes share; then starts watching and runs the first pass (not awaited).
   */
  async start(): Promise<void> {
    const { settings, daemon, cwd, logger, apiUrl, secrets } = this.#options;
    const { targets, secretFile } = daemon.notify;
    const secret =
      secretFile === undefined
        ? undefined
        : await readSecretFile(
            '--notify-secret-file',
            path.resolve(cwd, secretFile),
            'signing secret',
            settings.deadlineMs,
          );
    const notifier =
      targets.length === 0
        ? undefined
        : new Notifier({
            targets,
            secret,
            source: daemon.publicUrl ?? `urn:envsync:${hostname()}`,
            link: daemon.publicUrl === undefined ? undefined : `${daemon.publicUrl}/`,
            clock: this.#clock,
            logger,
            secrets,
            ...this.#options.notify,
            count: (result) => this.metrics.notifications.inc({ result }),
            queued: (count) => this.metrics.notificationsQueued.set(count),
          });
    const state = await StateStore.load(path.resolve(cwd, settings.state), logger, apiUrl.href, {
      secrets,
      lockTimeoutMs: settings.stateLockTimeoutMs,
      // The default path in the working directory: say once that it was made there.
      announceCreation: settings.state === SETTINGS.state.default,
      readTimeoutMs: settings.deadlineMs,
    });
    const { concurrency, timeoutMs } = settings;
    const transport = {
      pool: connectionPool(apiUrl.origin, { concurrency, timeoutMs, ca: this.#options.ca }),
      gate: new RequestGate(concurrency, this.#clock),
    };
    this.#open = { notifier, state, transport };
    await this.#watcher.start();
    this.#scheduler.now('start');
  }

  /** Starts a pass now (SIGHUP). */
  trigger(reason: string): void {
    this.#scheduler.now(reason);
  }

  /**
   * A webhook: a pass starts at once when none started from a webhook within
   * `--webhook-min-interval`; otherwise the post joins the next webhook pass, which starts when
   * that interval is over. A burst of pushes makes at most one pass per interval, none is lost.
   * Returns when its pass is due (ms since the epoch), and whether it joined one.
   */
  webhook(): { runAt: number; joined: boolean } {
    const now = this.#clock.now();
    if (this.#webhookDue !== undefined)
      return { runAt: Math.max(now, this.#webhookDue), joined: true };
    const at = Math.max(now, this.#lastWebhookPass + this.#options.daemon.webhookMinIntervalMs);
    this.#webhookDue = at;
    if (at <= now) this.#scheduler.now(WEBHOOK);
    else this.#scheduler.at(WEBHOOK, at - now, WEBHOOK);
    return { runAt: at, joined: false };
  }

  /** Ready once the first pass ended, while passes keep ending and an org is reconciled. */
  get ready(): { ready: boolean; reason?: string } {
    return readiness(this.#memory, this.#around());
  }

  /** Not live when a pass has been running for far too long (the loop is wedged). */
  get liveness(): { live: boolean; reason?: string } {
    const { intervalMs } = this.#options.daemon;
    return liveness(this.#scheduler.passStartedAt, intervalMs, this.#clock.now());
  }

  status(): DaemonStatus {
    const { state, notifier } = this.#open ?? {};
    const { settings, daemon } = this.#options;
    const windows = settings.syncWindows ?? [];
    return daemonStatus(this.#memory, {
      manifests: settings.manifests,
      ready: this.ready.ready,
      passRunning: this.#scheduler.running,
      shard: daemon.shard ?? null,
      stateFile: { path: state?.file ?? null, writeError: state?.writeError ?? null },
      mode: daemon.observe ? 'observe' : 'normal',
      window: windows.length === 0 ? null : windowReport(windowState(windows, this.#clock.now())),
      ...(notifier === undefined ? {} : { notifications: notifier.status() }),
      tokenSource: (org) => (this.#tokens === undefined ? null : tokenSourceOf(this.#tokens, org)),
    });
  }

  /** Resolves when no pass runs or is pending (for tests). */
  idle(): Promise<void> {
    return this.#scheduler.idle();
  }

  /**
   * Graceful stop: no new triggers or rounds; every wait (Retry-After, a throttle pause) ends at
   * once, and requests being retried are cancelled (shutdown.ts); a healthy pass in flight may
   * finish within the shutdown timeout (then its requests are aborted); the state is written, and
   * the notifications drained for a bounded time.
   */
  async stop(): Promise<void> {
    if (this.#shutdown.stopping.aborted) return;
    const { passMs } = stopBudget(this.#options.daemon.shutdownTimeoutMs);
    const stopped = this.#shutdown.stop(this.#scheduler.stop(), passMs, this.#options.logger);
    await this.#watcher.close();
    await stopped;
    await this.#open?.state.save();
    await this.#open?.notifier?.close();
    await this.#open?.transport.pool.close();
  }

  async #pass(reasons: readonly string[]): Promise<void> {
    const startedAt = this.#clock.now();
    if (reasons.includes(WEBHOOK)) {
      this.#lastWebhookPass = startedAt;
      this.#webhookDue = undefined;
    }
    const { settings, daemon, logger } = this.#options;
    const end: { -readonly [K in keyof PassEnd]: PassEnd[K] } = {
      startedAt,
      settleWaitMs: 0,
      reasons,
      owned: [],
      skipped: 0,
      outcome: { kind: 'error', message: 'not run' },
    };
    try {
      const read = await this.#watcher.read();
      if (read === undefined) return; // stopping: the pass never began
      end.settleWaitMs = read.settleWaitMs;
      const { manifests, revision } = read.snapshot;
      const owned = manifests.orgs.filter((o) => ownsOrg(o.org, daemon.shard, settings.orgs));
      end.owned = owned.map(passOrg);
      const tokens = (this.#tokens = await this.#options.readTokens());
      for (const token of tokensOf(tokens)) this.secrets.add(token);
      // A token as the decisions may see it: hashed, never kept (for an org with none, why).
      const tokenKey = (org: string) => {
        const chosen = tokenFor(tokens, org);
        const text = 'token' in chosen ? chosen.token : chosen.error;
        return createHash('sha256').update(text).digest('hex').slice(0, 16);
      };
      const begun = this.#carry(
        beginPass(
          this.#memory,
          {
            owned: end.owned,
            reasons,
            changedFiles: read.changedFiles,
            tokenKey,
            revision,
            unattributed: manifests.unattributed.map(({ org: _org, ...problem }) => problem),
          },
          this.#clock.now(),
        ),
      );
      end.skipped = begun.skipped;
      const due = new Map(begun.due.map((org) => [org.org, org]));
      const { state, transport } = this.#open as Resources;
      const shutdown = this.#shutdown;
      // A client for this pass (the same engine as `envsync sync`), that the stop can cut short.
      const client = clientFromSettings(settings, {
        apiUrl: this.#options.apiUrl,
        getToken: tokenGetter(tokens),
        mask: this.secrets.mask,
        logger,
        ca: this.#options.ca,
        signal: shutdown.abort,
        stop: shutdown.stopping,
        events: shutdown.events(this.metrics.clientEvents()),
        clock: this.#clock,
        transport,
      });
      try {
        const report = await reconcile({
          manifests: { ...manifests, orgs: owned.filter((org) => due.has(org.org)) },
          client,
          state,
          logger,
          dryRun: this.#mayNotSend(),
          revision,
          maxArchive: settings.maxArchive,
          signal: shutdown.stopping,
          onRoundFailed: (org) =>
            this.#carry(afterFailedRound(this.#memory, org, this.#clock.now())),
          onOrgDone: (org) =>
            this.#carry(
              afterOrg(this.#memory, org, due.get(org.org), tokenKey(org.org), this.#around()),
            ),
        });
        end.outcome = { kind: 'done', report, cutShort: shutdown.stopping.aborted };
      } finally {
        await client.close();
      }
    } catch (error) {
      end.outcome = { kind: 'error', message: errorMessage(error) };
    }
    const ended = this.#carry(afterPass(this.#memory, end, this.#clock.now()));
    this.#open?.notifier?.notify(ended.events);
    // The next periodic pass (the interval, ±10% jitter, so replicas drift apart), and the
    // earliest end of an org's backoff.
    const { intervalMs } = daemon;
    const random = this.#options.random ?? Math.random;
    if (intervalMs > 0)
      this.#scheduler.at('interval', Math.round(intervalMs * (0.9 + 0.2 * random())), 'interval');
    const backoffEnds = nextAttemptAt(this.#memory);
    if (backoffEnds === undefined) this.#scheduler.cancel('backoff');
    else this.#scheduler.at('backoff', backoffEnds - this.#clock.now(), 'backoff');
  }

  /**
   * Whether this pass plans only: always in observe mode (`--observe`), and while the sync
   * windows are closed, when a pass is started the moment the next window opens, so the changes
   * it planned go out then, whatever the interval.
   */
  #mayNotSend(): boolean {
    const { settings, daemon, logger } = this.#options;
    const now = this.#clock.now();
    const window = windowState(settings.syncWindows ?? [], now);
    if (!window.open && window.opensAt !== undefined) {
      this.#scheduler.at('window', window.opensAt - now, 'sync window opens', { unref: true });
    } else this.#scheduler.cancel('window');
    const dryRun = daemon.observe || !window.open;
    if (dryRun) {
      logger.info(
        { mode: daemon.observe ? 'observe' : 'normal', window: windowReport(window) },
        `this pass plans only, nothing is sent: ${daemon.observe ? 'observe mode' : waitingWords(window)}`,
      );
    }
    return dryRun;
  }

  /** Carries out a decision: keeps its memory, writes its log lines, updates the metrics. */
  #carry<S extends Step>(step: S): S {
    this.#memory = step.memory;
    for (const { level, fields, message } of step.logs)
      this.#options.logger[level](fields, message);
    this.metrics.apply(step.metrics);
    this.metrics.ready.set(this.ready.ready ? 1 : 0);
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
