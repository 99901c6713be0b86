/**
 * `npm run soak`: the daemon for a long while against a service that misbehaves, then the
 * verdict. Not part of `npm test` (it takes minutes). docs/guarantees.md ("The soak test") says
 * what it checks and the figures of a run.
 *
 * The emulator runs as a separate process (profile kosli, one token accepted), with 20% of the
 * requests answered 503 and 5% of the connections reset; every ~30 s its rate limit is switched
 * on (5 requests/s, 429 with Retry-After beyond) or off. The daemon (`envsync run`, a child
 * process) keeps 50 orgs x 40 environments in step with a git-sync style checkout: every 5 s a new
 * revision changing a few random environments' descriptions is published by swapping the
 * `current` symlink; every 30 s one managed environment's description is changed by hand in the
 * service (a PUT with the token); every 2 minutes the daemon is SIGKILLed in the middle of the
 * writes of a larger swap, and started again on the same state file. Every other hand edit goes
 * to an environment such a kill left in doubt in the state file, once settled. The daemon's
 * notifications go to a receiver on loopback.
 *
 * The daemon talks to the emulator through a recording proxy (lib/soak-proxy.ts), which is how
 * the soak knows every write that landed, in order. At the end it checks: converged within 2
 * passes of the last edit; the service equal to the manifests field for field, and no write sent
 * twice; every hand edit healed and counted as drift (envsync_drift_healed_total, summed over the
 * daemon's lives); resident memory and descriptors flat within each life; the token in no output,
 * log, notification or state file. Exit 0 only if every check passes.
 *
 *   node bench/soak.ts [--minutes 10] [--seed N] [--keep]
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import {
  link,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { mulberry32 } from '../src/emulator/faults.ts';
import { StateStore } from '../src/state/store.ts';
import { type BenchEmulator, startBenchEmulator } from './lib/emulator.ts';
import { envsyncCommand } from './lib/proc.ts';
import { renderTable } from './lib/report.ts';
import {
  BASELINE_AGE_MS,
  compareStore,
  type Declared,
  lifeGrowth,
  replayWrites,
  tokenHits,
} from './lib/soak-checks.ts';
import { counterSum, type DaemonLife, startDaemonLife } from './lib/soak-daemon.ts';
import { type LandedWrite, type SoakProxy, startSoakProxy } from './lib/soak-proxy.ts';
import { manifestFile, orgName } from './lib/tree.ts';

const { values: flags } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    seed: { type: 'string' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (flags.help) {
  process.stdout.write(`Usage: node bench/soak.ts [flags]
  --minutes N   how long the faults, swaps, hand edits and kills go on (default 10)
  --seed N      seed of the soak's choices and of the emulator's faults (default: random, printed)
  --keep        keep the work directory (logs, state file, revisions)
`);
  process.exit(0);
}

const MINUTES = Number(flags.minutes);
if (!Number.isFinite(MINUTES) || MINUTES <= 0) throw new Error('--minutes: a positive number');
const SEED = flags.seed === undefined ? randomBytes(4).readUInt32LE(0) : Number(flags.seed);
if (!Number.isInteger(SEED) || SEED < 0 || SEED > 0xffffffff)
  throw new Error('--seed: 0 to 4294967295');

const ORGS = 50;
const ENVS = 40;
const FAIL_RATE = 0.2;
const RESET_RATE = 0.05;
/** The rate limit while a burst is on, requests per second: below a full pass's pace. */
const BURST_RATE = 5;
const SWAP_EVERY_MS = 5_000;
const HAND_EDIT_EVERY_MS = 30_000;
const RATE_TOGGLE_EVERY_MS = 30_000;
const KILL_EVERY_MS = 120_000;
const SAMPLE_EVERY_MS = 5_000;
/** The daemon's periodic resync: what heals a hand edit. */
const INTERVAL = '10s';
/** Environments a swap changes right before a kill, so the kill lands in the middle of writes. */
const KILL_BATCH = 20;
/** A hand edit goes to an environment whose manifest value is at least this old. */
const SETTLED_MS = 60_000;
/** Before a kill, hand edits get this long to be healed (so no heal is cut from its count). */
const HEAL_WAIT_MS = 60_000;
/** A daemon life's growth is checked when its samples span at least this long. */
const MIN_SPAN_MS = 60_000;
const RSS_GROWTH_LIMIT_PERCENT = 10;
/** Descriptors besides sockets may move by this many (a watcher's, a file being written). */
const OTHER_FD_SLACK = 2;
/** Sockets: the pool's connections (--concurrency, 8 by default) and the listeners, with room. */
const MAX_SOCKETS = 8 + 8;

/** Everything the soak prints goes through here, so its own output is searched for the token too. */
const transcript: string[] = [];
function say(line: string): void {
  transcript.push(line);
  process.stdout.write(`${line}\n`);
}
function progress(line: string): void {
  transcript.push(line);
  process.stderr.write(`[soak] ${line}\n`);
}

const random = mulberry32(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const clock = (ms: number) =>
  `${Math.floor(ms / 60_000)}:${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}`;

// ---- the manifests: a git-sync checkout of revisions -------------------------------------------

const orgs = Array.from({ length: ORGS }, (_, i) => orgName(i, ORGS));
const manifests = new Map<string, Declared[]>(
  orgs.map((org) => [
    org,
    Array.from({ length: ENVS }, (_, i) => ({
      name: `env-${String(i).padStart(3, '0')}`,
      type: i % 2 === 0 ? 'K8S' : 'S3',
      description: `Environment ${i} of ${org}`,
    })),
  ]),
);
/** When each environment's manifest value last changed (epoch ms; absent: never). */
const changedAt = new Map<string, number>();

function manifestText(org: string): string {
  const lines = [`# ${org}: written by bench/soak.ts`, `org: ${org}`, 'environments:'];
  for (const env of manifests.get(org) ?? []) {
    lines.push(
      `  - name: ${env.name}`,
      `    type: ${env.type}`,
      `    description: ${JSON.stringify(env.description)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

class Checkout {
  readonly root: string;
  readonly current: string;
  revision = 0;
  #pruned = 1;

  constructor(root: string) {
    this.root = root;
    this.current = path.join(root, 'current');
  }

  #dir(n: number): string {
    return path.join(this.root, `rev-${n}`);
  }

  /** A new revision (the orgs in `changed` written new, the other files linked), then the swap. */
  async publish(changed: ReadonlySet<string>): Promise<void> {
    const next = this.revision + 1;
    for (const [i, org] of orgs.entries()) {
      const file = manifestFile(this.#dir(next), i, ORGS);
      await mkdir(path.dirname(file), { recursive: true });
      if (this.revision === 0 || changed.has(org)) await writeFile(file, manifestText(org));
      else await link(manifestFile(this.#dir(this.revision), i, ORGS), file);
    }
    const nextLink = path.join(this.root, `.current-${next}`);
    await symlink(`rev-${next}`, nextLink);
    await rename(nextLink, this.current);
    this.revision = next;
    // As git-sync does, the old worktrees go; the one before the current stays a little longer.
    for (; this.#pruned < this.revision - 1; this.#pruned++) {
      await rm(this.#dir(this.#pruned), { recursive: true, force: true });
    }
  }
}

// ---- a notification receiver on loopback --------------------------------------------------------

async function startReceiver() {
  const bodies: string[] = [];
  const byType = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      try {
        const type = String((JSON.parse(body) as { type?: unknown }).type);
        byType.set(type, (byType.get(type) ?? 0) + 1);
      } catch {
        byType.set('(not JSON)', (byType.get('(not JSON)') ?? 0) + 1);
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/events`,
    bodies,
    byType,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- the soak ------------------------------------------------------------------------------------

interface LifeRecord {
  readonly life: DaemonLife;
  /** envsync_drift_healed_total summed over orgs, read just before the life ended. */
  driftHealed: number | undefined;
  end: 'SIGKILL' | 'SIGTERM' | undefined;
}

async function main(): Promise<number> {
  const loadBefore = loadavg();
  const token = randomBytes(32).toString('base64url');
  const work = await mkdtemp(path.join(tmpdir(), 'envsync-soak-'));
  progress(
    `seed ${SEED}; work dir ${work}; ${MINUTES} min; load average ${loadBefore.map((n) => n.toFixed(2)).join(' ')}`,
  );
  const checkout = new Checkout(path.join(work, 'git'));
  const state = path.join(work, 'state', 'state.json');
  await mkdir(path.dirname(state), { recursive: true });
  await mkdir(path.join(work, 'logs'));

  let emulator: BenchEmulator | undefined;
  let proxy: SoakProxy | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  let current: LifeRecord | undefined;
  const lives: LifeRecord[] = [];
  /** Texts read from the daemon's endpoints, searched for the token at the end. */
  const endpointTexts: string[] = [];
  try {
    emulator = await startBenchEmulator([
      '--profile',
      'kosli',
      '--token',
      token,
      '--fail-rate',
      String(FAIL_RATE),
      '--reset-rate',
      String(RESET_RATE),
      '--seed',
      String(SEED),
    ]);
    proxy = await startSoakProxy(emulator.url);
    receiver = await startReceiver();
    await checkout.publish(new Set(orgs));

    // Hand edits waiting for their heal: environment -> the edit.
    const unhealed = new Map<string, { id: string; at: number }>();
    const landedEdits = new Set<string>();
    let handEdits = 0;
    let heals = 0;
    /** Each heal's environment and when it landed. */
    const healed: { key: string; at: number }[] = [];
    const strayHeals: LandedWrite[] = [];
    proxy.onWrite((write) => {
      const key = `${write.org}/${write.name}`;
      if (write.writer === 'hand') {
        if (write.editId !== undefined) landedEdits.add(write.editId);
        unhealed.set(key, { id: write.editId ?? '', at: write.at });
        handEdits += 1;
        return;
      }
      if (!unhealed.has(key)) return;
      unhealed.delete(key);
      const declared = manifests.get(write.org)?.find((env) => env.name === write.name);
      if (declared !== undefined && write.fields['description'] === declared.description) {
        heals += 1;
        healed.push({ key, at: write.at });
      } else strayHeals.push(write);
    });

    const childEnv: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith('ENVSYNC_')),
    );
    childEnv['ENVSYNC_TOKEN'] = token;
    childEnv['PATH'] =
      `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`;
    delete childEnv['NODE_OPTIONS'];
    const command = envsyncCommand([
      'run',
      '--manifests',
      checkout.current,
      '--api-url',
      proxy.url,
      '--state',
      state,
      '--interval',
      INTERVAL,
      '--listen',
      '127.0.0.1:0',
      '--notify-url',
      receiver.url,
    ]);
    const startLife = async () => {
      const life = await startDaemonLife(lives.length + 1, command, {
        env: childEnv,
        cwd: work,
        logBase: path.join(work, 'logs', `daemon-${lives.length + 1}`),
      });
      const record: LifeRecord = { life, driftHealed: undefined, end: undefined };
      lives.push(record);
      current = record;
      return record;
    };
    /** The life's envsync_drift_healed_total, summed over its orgs (a failed read: undefined). */
    const driftOf = async (record: LifeRecord) => {
      try {
        const metrics = await record.life.get('/metrics');
        endpointTexts.push(metrics);
        return counterSum(metrics, 'envsync_drift_healed_total');
      } catch {
        return undefined;
      }
    };
    const countedBefore = (record: LifeRecord) =>
      lives.filter((l) => l !== record).reduce((n, l) => n + (l.driftHealed ?? 0), 0);
    /**
     * Waits (up to `ms`) until the life has counted every heal that landed: a heal's write lands
     * before its org is done and counted. Returns its counter as last read.
     */
    const driftCaughtUp = async (record: LifeRecord, ms: number) => {
      const until = Date.now() + ms;
      let counted = await driftOf(record);
      while (
        (counted === undefined || counted < heals - countedBefore(record) - uncounted) &&
        Date.now() < until
      ) {
        await sleep(250);
        counted = await driftOf(record);
      }
      return counted;
    };
    /** Heals that landed and that no life counted (a heal named a change): known shortfall. */
    let uncounted = 0;
    /** Ends a life with `signal`, its drift counter read just before. */
    const endLife = async (
      record: LifeRecord,
      signal: 'SIGKILL' | 'SIGTERM',
      beforeSignal?: () => Promise<void>,
    ) => {
      record.driftHealed = await driftCaughtUp(record, 20_000);
      uncounted = Math.max(0, heals - countedBefore(record) - (record.driftHealed ?? 0));
      await beforeSignal?.();
      record.life.sample();
      record.end = signal;
      record.life.signal(signal);
      const timer = setTimeout(() => record.life.signal('SIGKILL'), 30_000);
      await record.life.exited;
      clearTimeout(timer);
    };
    const status = async (life: DaemonLife) => {
      const text = await life.get('/status');
      endpointTexts.push(text);
      return JSON.parse(text) as {
        passes: number;
        passRunning: boolean;
        lastPass: { startedAt: string; finishedAt: string; result: string } | null;
        orgs: Record<string, { status: string; state: string; pending: number }>;
      };
    };
    const unsynced = (s: Awaited<ReturnType<typeof status>>) =>
      orgs.filter((org) => {
        const o = s.orgs[org];
        return o === undefined || o.state !== 'synced' || o.pending !== 0 || o.status !== 'ok';
      });

    // The first life makes the 2,000 environments, under the faults; the clock starts after.
    const initialStarted = Date.now();
    await startLife();
    for (;;) {
      const life = (current as LifeRecord).life;
      if (!life.alive()) throw new Error('the daemon exited during its first pass');
      if (life.passes.length > 0) {
        const s = await status(life);
        if (unsynced(s).length === 0) break;
      }
      if (Date.now() - initialStarted > 600_000) throw new Error('no initial sync within 10 min');
      await sleep(500);
    }
    const initialSyncMs = Date.now() - initialStarted;
    progress(`initial sync of ${ORGS * ENVS} environments: ${(initialSyncMs / 1000).toFixed(1)} s`);

    const sampler = setInterval(() => current?.life.sample(), SAMPLE_EVERY_MS);
    const started = Date.now();
    const endAt = started + MINUTES * 60_000;
    let nextSwap = started + SWAP_EVERY_MS;
    let nextHand = started + HAND_EDIT_EVERY_MS / 2;
    let nextToggle = started + RATE_TOGGLE_EVERY_MS;
    let nextKill = started + KILL_EVERY_MS;
    let nextReport = started + 60_000;
    let burst = false;
    let bursts = 0;
    let swaps = 0;
    let manifestEdits = 0;
    let lastEditAt = 0;
    let handEditFailures = 0;
    let kills = 0;
    const healWaits: number[] = [];

    /** Environments changed by the swap right before a kill. */
    const killBatches = new Set<string>();
    /**
     * Environments a kill left without the fingerprint of the last apply although their write had
     * landed, not edited by hand yet.
     */
    const inDoubt = new Set<string>();
    /** Environments edited by hand while their record was in doubt. */
    const editedInDoubt = new Set<string>();
    /** Per kill, the records it left in doubt, and those of them whose write had landed. */
    const leftInDoubt: { left: number; landed: number }[] = [];
    const swap = async (count = 1 + Math.floor(random() * 4), batch = false) => {
      const changed = new Set<string>();
      const keys = new Set<string>();
      for (let k = 0; k < count; k++) {
        const org = pick(orgs);
        const envs = manifests.get(org) as Declared[];
        const index = Math.floor(random() * envs.length);
        const old = envs[index] as Declared;
        // An environment edited by hand keeps its manifest value until healed, so the heal is drift.
        if (unhealed.has(`${org}/${old.name}`)) continue;
        envs[index] = {
          ...old,
          description: `Environment ${index} of ${org}, revision ${checkout.revision + 1}`,
        };
        changedAt.set(`${org}/${old.name}`, Date.now());
        if (batch) killBatches.add(`${org}/${old.name}`);
        keys.add(`${org}/${old.name}`);
        changed.add(org);
        manifestEdits += 1;
      }
      if (changed.size === 0) return keys;
      await checkout.publish(changed);
      swaps += 1;
      lastEditAt = Date.now();
      return keys;
    };

    const handEdit = async () => {
      const now = Date.now();
      const eligible = (key: string) =>
        !unhealed.has(key) && now - (changedAt.get(key) ?? 0) >= SETTLED_MS;
      let target: { org: string; env: Declared } | undefined;
      // Every other hand edit goes to an environment a kill left in doubt, if one is settled:
      // drift there must still be named drift.
      const doubted = [...inDoubt].filter(eligible);
      if ((handEdits + handEditFailures) % 2 === 1 && doubted.length > 0) {
        const key = pick(doubted);
        inDoubt.delete(key);
        const [org, name] = key.split('/') as [string, string];
        const env = manifests.get(org)?.find((e) => e.name === name);
        if (env !== undefined) {
          target = { org, env };
          editedInDoubt.add(key);
        }
      }
      for (let tries = 0; tries < 100 && target === undefined; tries++) {
        const org = pick(orgs);
        const env = pick(manifests.get(org) as Declared[]);
        if (eligible(`${org}/${env.name}`)) target = { org, env };
      }
      if (target === undefined) return;
      const id = `edit-${handEdits + handEditFailures + 1}`;
      const body = JSON.stringify({
        name: target.env.name,
        type: target.env.type,
        description: `Changed by hand in the service (${id})`,
      });
      const deadline = Date.now() + 60_000;
      while (!landedEdits.has(id)) {
        if (Date.now() > deadline) {
          handEditFailures += 1;
          progress(`hand edit ${id} did not land within 60 s`);
          return;
        }
        try {
          const answer = await fetch(`${proxy?.url}/api/v2/environments/${target.org}`, {
            method: 'PUT',
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': 'application/json',
              'x-soak-writer': 'hand',
              'x-soak-edit': id,
            },
            body,
            signal: AbortSignal.timeout(10_000),
          });
          await answer.arrayBuffer();
          if (answer.status === 429) {
            await sleep(Number(answer.headers.get('retry-after') ?? '1') * 1000);
          } else if (answer.status >= 300) {
            await sleep(200);
          }
        } catch {
          await sleep(200); // a reset: it did not land (the emulator cuts before it handles)
        }
      }
      lastEditAt = Date.now();
    };

    /**
     * Every hand edit healed and counted first (a heal cut by the kill would be healed but never
     * counted); then a swap of a batch of environments, and the kill in the middle of its pass,
     * while its PUTs go out.
     */
    const killAndRestart = async () => {
      const record = current as LifeRecord;
      const waitFrom = Date.now();
      while (unhealed.size > 0 && Date.now() - waitFrom < HEAL_WAIT_MS) await sleep(100);
      healWaits.push(Date.now() - waitFrom);
      if (unhealed.size > 0) {
        progress(
          `kill: ${unhealed.size} hand edit(s) still not healed after ${HEAL_WAIT_MS / 1000} s`,
        );
      }
      let batch = new Set<string>();
      let swappedAt = 0;
      await endLife(record, 'SIGKILL', async () => {
        swappedAt = Date.now();
        batch = await swap(KILL_BATCH, true);
        // The kill lands among the batch's writes: after the first has landed.
        const firstWrite = () =>
          proxy?.writes.some(
            (w) => w.writer === 'daemon' && w.at >= swappedAt && batch.has(`${w.org}/${w.name}`),
          ) === true;
        while (!firstWrite() && Date.now() - swappedAt < 30_000) await sleep(10);
        await sleep(Math.floor(random() * 500));
      });
      // What the kill left in doubt: records without the fingerprint of what was last applied.
      // Those whose write had landed get their fingerprint back from the next pass, which finds
      // the service as declared and sends nothing; the others are written, and recorded, by the
      // next life.
      const killedAt = Date.now();
      const landed = new Set(
        (proxy?.writes ?? [])
          .filter((w) => w.writer === 'daemon' && w.at >= swappedAt && w.at <= killedAt)
          .map((w) => `${w.org}/${w.name}`),
      );
      const store = await StateStore.load(state, pino({ level: 'silent' }));
      let left = 0;
      let landedLeft = 0;
      for (const org of orgs) {
        for (const [name, applied] of Object.entries(store.get(org))) {
          if (applied.fingerprint !== undefined) continue;
          left += 1;
          if (landed.has(`${org}/${name}`)) {
            inDoubt.add(`${org}/${name}`);
            landedLeft += 1;
          }
        }
      }
      leftInDoubt.push({ left, landed: landedLeft });
      progress(
        `kill ${kills + 1}: ${landed.size} write(s) had landed since the swap of ${batch.size}; ` +
          `${left} record(s) left in doubt, ${landedLeft} of them written`,
      );
      kills += 1;
      await startLife();
    };

    while (Date.now() < endAt) {
      const now = Date.now();
      if (!(current as LifeRecord).life.alive()) throw new Error('the daemon died on its own');
      if (now >= nextKill) {
        await killAndRestart();
        nextKill = Math.max(nextKill + KILL_EVERY_MS, Date.now());
      } else if (now >= nextToggle) {
        burst = !burst;
        if (burst) bursts += 1;
        await emulator.setFaults({ rateLimit: burst ? BURST_RATE : 0 });
        nextToggle = Math.max(nextToggle + RATE_TOGGLE_EVERY_MS, Date.now());
      } else if (now >= nextSwap) {
        await swap();
        nextSwap = Math.max(nextSwap + SWAP_EVERY_MS, Date.now());
      } else if (now >= nextHand) {
        await handEdit();
        nextHand = Math.max(nextHand + HAND_EDIT_EVERY_MS, Date.now());
      } else if (now >= nextReport) {
        const life = (current as LifeRecord).life;
        const last = life.samples.at(-1);
        progress(
          `${clock(now - started)} life ${life.index}: ${life.passes.length} passes; ` +
            `${swaps} swaps, ${handEdits} hand edits (${heals} healed), ${proxy.writes.length} writes landed; ` +
            `rate limit ${burst ? 'on' : 'off'}; RSS ${last === undefined ? '-' : `${(last.rssKb / 1024).toFixed(1)} MiB`}, ` +
            `${last?.fds.total ?? '-'} fds`,
        );
        nextReport = Math.max(nextReport, Date.now()) + 60_000;
      } else {
        await sleep(100);
      }
    }

    // The end: the last burst off, then passes until every org is synced (at most 2).
    if (burst) await emulator.setFaults({ rateLimit: 0 });
    const last = current as LifeRecord;
    // Passes are counted from the last edit on, a pass running then included (it may have read
    // the manifests before the edit: counting it is the strict way).
    const basePasses = (await status(last.life)).passes;
    last.life.signal('SIGHUP');
    // Each pass is judged by its own verdict line, which sums up the daemon's memory at the
    // pass's end: orgs failed or invalid, changes pending, over every org (what /status shows
    // between passes). Passes can run back to back (the SIGHUP's after the one running, an org's
    // backoff right after), so /status read between passes would miss some of their ends. A pass
    // that started before the last edit counts as one of the 2 but cannot show convergence: it
    // read the manifests, or listed the service, before the edit.
    let passesAfterEdit = 0;
    let convergedAfter: number | undefined;
    let convergedMs = 0;
    let notSynced: string[] = [];
    const waitFrom = Date.now();
    while (passesAfterEdit < 2 && Date.now() - waitFrom < 300_000) {
      const line = last.life.passes[basePasses + passesAfterEdit];
      if (line === undefined) {
        await sleep(100);
        continue;
      }
      passesAfterEdit += 1;
      if (!(line.startedAt >= lastEditAt)) {
        notSynced = ['the pass started before the last edit'];
        continue;
      }
      // An error pass says no counts (it read no org): never a converged one.
      if (
        line.result === 'success' &&
        line.failed === 0 &&
        line.invalid === 0 &&
        line.pending === 0
      ) {
        convergedAfter = passesAfterEdit;
        convergedMs = line.at - lastEditAt;
        break;
      }
      notSynced = [
        `pass ${line.result}: ${line.failed} org(s) failed, ${line.invalid} invalid, ${line.pending} change(s) pending`,
      ];
      // The second pass comes on its own (an org's backoff or the interval); a SIGHUP now
      // would find the failed org not yet due.
    }
    if (convergedAfter === undefined) {
      // Which orgs, for the verdict's detail.
      const s = await status(last.life);
      notSynced = [...notSynced, ...unsynced(s)];
    }
    clearInterval(sampler);
    await endLife(last, 'SIGTERM');
    const endedAt = Date.now();

    // ---- the verdict ----------------------------------------------------------------------------
    const store = (await emulator.store()) as {
      orgs: Record<string, { name: string; archived?: boolean; [key: string]: unknown }[]>;
    };
    const differences = compareStore(manifests, store);
    const replay = replayWrites(proxy.writes);
    // The proxy saw every write: what it replays is what the service holds.
    const unwitnessed = compareStore(
      new Map(
        orgs.map((org) => [
          org,
          [...replay.held.entries()]
            .filter(([key]) => key.startsWith(`${org}/`))
            .map(([, value]) => value as unknown as Declared),
        ]),
      ),
      store,
    );
    const driftCounted = lives.reduce((n, l) => n + (l.driftHealed ?? 0), 0);
    // How the daemon named each heal: its log line for the environment, the first after the heal.
    const appliedLines = lives.flatMap((l) => l.life.applied);
    const namedOtherwise = healed.flatMap(({ key, at }) => {
      const line = appliedLines.find((a) => `${a.org}/${a.env}` === key && a.at >= at);
      if (line?.cause === 'drift') return [];
      return [
        `${key} ${line === undefined ? '(no log line: its life was killed)' : `named "${line.cause}"`}` +
          (editedInDoubt.has(key)
            ? ', its record left without its fingerprint by a kill'
            : killBatches.has(key)
              ? ', in a batch written when a daemon was killed'
              : ''),
      ];
    });
    // The first life made 2,000 environments before the soak began: its memory is measured from
    // 30 s after that sync, as every later life's is from 30 s after its start.
    const growth = lives.map((l) =>
      lifeGrowth(
        l.life.index,
        l.life.samples,
        l.life.index === 1 ? initialSyncMs + BASELINE_AGE_MS : BASELINE_AGE_MS,
      ),
    );
    const checked = growth.filter((g) => g.spanMs >= MIN_SPAN_MS);
    const tooShort = `no life had ${MIN_SPAN_MS / 1000} s between its first sample and its last: nothing measured (--minutes 3 or more)`;
    const emulatorStats = (await emulator.stats()) as unknown as {
      total: number;
      byStatus: Record<string, number>;
      throttled: number;
      faults: Record<string, number>;
    };

    // The token: the daemon's stdout and stderr of every life, the state file and whatever else
    // is beside it, every notification, what its endpoints answered, and this script's output.
    const searched: { what: string; text: string }[] = [];
    for (const name of await readdir(path.join(work, 'logs'))) {
      searched.push({
        what: `logs/${name}`,
        text: await readFile(path.join(work, 'logs', name), 'latin1'),
      });
    }
    for (const name of await readdir(path.dirname(state))) {
      searched.push({
        what: `state/${name}`,
        text: await readFile(path.join(path.dirname(state), name), 'latin1'),
      });
    }
    receiver.bodies.forEach((text, i) => searched.push({ what: `notification ${i + 1}`, text }));
    endpointTexts.forEach((text, i) => searched.push({ what: `endpoint answer ${i + 1}`, text }));
    searched.push({ what: 'the soak output', text: transcript.join('\n') });
    const leaks = searched.flatMap(({ what, text }) => {
      const hits = tokenHits(text, token);
      return hits.length === 0 ? [] : [`${what}: ${hits.join(', ')}`];
    });
    const searchedBytes = searched.reduce((n, s) => n + s.text.length, 0);
    const loadAfter = loadavg();

    const checks: { name: string; pass: boolean; detail: string }[] = [
      {
        name: 'converged within 2 passes of the last edit',
        pass: convergedAfter !== undefined,
        detail:
          convergedAfter === undefined
            ? `not synced after ${passesAfterEdit} pass(es): ${notSynced.slice(0, 5).join(', ')}`
            : `every org synced, 0 pending, after ${convergedAfter} pass(es), ${(convergedMs / 1000).toFixed(1)} s after the last edit`,
      },
      {
        name: 'no lost write: the service equals the manifests',
        pass: differences.length === 0,
        detail:
          differences.length === 0
            ? `${ORGS * ENVS} environments equal field for field`
            : `${differences.length} difference(s): ${differences
                .slice(0, 3)
                .map((d) => `${d.env} ${d.what}`)
                .join('; ')}`,
      },
      {
        name: 'every write applied once (none sent again)',
        pass:
          replay.duplicates.length === 0 &&
          unwitnessed.length === 0 &&
          proxy.counts.otherWrites === 0,
        detail:
          `${replay.byWriter.daemon} daemon writes landed, ${replay.duplicates.length} changed nothing` +
          (replay.duplicates.length === 0
            ? ''
            : ` (${replay.duplicates
                .slice(0, 3)
                .map((w) => `${w.org}/${w.name} #${w.seq}`)
                .join(', ')})`) +
          (unwitnessed.length === 0
            ? ''
            : `; ${unwitnessed.length} store entries the proxy never saw written`) +
          (proxy.counts.otherWrites === 0 ? '' : `; ${proxy.counts.otherWrites} other writes`),
      },
      {
        name: 'every hand edit healed and counted as drift',
        pass:
          handEditFailures === 0 &&
          heals === handEdits &&
          strayHeals.length === 0 &&
          driftCounted === handEdits,
        detail:
          `${handEdits} hand edits, ${heals} healed, envsync_drift_healed_total summed over ${lives.length} lives: ${driftCounted}` +
          (namedOtherwise.length === 0
            ? ''
            : `; not counted as drift: ${namedOtherwise.slice(0, 5).join('; ')}`) +
          (strayHeals.length === 0
            ? ''
            : `; ${strayHeals.length} written back with another value`) +
          (handEditFailures === 0 ? '' : `; ${handEditFailures} hand edits never landed`),
      },
      {
        name: `RSS growth per life < ${RSS_GROWTH_LIMIT_PERCENT}%`,
        pass:
          checked.length > 0 && checked.every((g) => g.rssGrowthPercent < RSS_GROWTH_LIMIT_PERCENT),
        detail:
          checked.length === 0
            ? tooShort
            : checked
                .map(
                  (g) =>
                    `life ${g.life}: ${((g.baseline?.rssKb ?? 0) / 1024).toFixed(1)} -> ${((g.end?.rssKb ?? 0) / 1024).toFixed(1)} MiB (${g.rssGrowthPercent >= 0 ? '+' : ''}${g.rssGrowthPercent.toFixed(1)}%)`,
                )
                .join('; '),
      },
      {
        name: 'open descriptors flat per life',
        pass:
          checked.length > 0 &&
          checked.every((g) => g.otherFdGrowth <= OTHER_FD_SLACK) &&
          growth.every((g) => g.maxSockets <= MAX_SOCKETS),
        detail:
          checked.length === 0
            ? tooShort
            : checked
                .map(
                  (g) =>
                    `life ${g.life}: ${g.baseline?.fds.other}->${g.end?.fds.other} non-socket, sockets max ${g.maxSockets}`,
                )
                .join('; '),
      },
      {
        name: 'the token in no output',
        pass: leaks.length === 0,
        detail:
          leaks.length === 0
            ? `0 hits in ${searched.length} texts (${(searchedBytes / 1e6).toFixed(1)} MB): raw, hex, base64/base64url at 3 alignments, any 16-character run`
            : leaks.slice(0, 5).join('; '),
      },
    ];

    const passes = lives.flatMap((l) => l.life.passes);
    say('');
    say(`envsync soak: ${MINUTES} min, ${ORGS} orgs x ${ENVS} environments, seed ${SEED}`);
    say(
      `load average before ${loadBefore.map((n) => n.toFixed(2)).join(' ')}, after ${loadAfter.map((n) => n.toFixed(2)).join(' ')}`,
    );
    say('');
    say(
      renderTable(
        [
          [
            'initial sync',
            `${ORGS * ENVS} environments created in ${(initialSyncMs / 1000).toFixed(1)} s`,
          ],
          [
            'soak',
            `${clock(endedAt - started)} from the end of the initial sync to the daemon's stop`,
          ],
          [
            'daemon lives',
            `${lives.length} (${kills} ended by SIGKILL in the middle of a pass, the last by SIGTERM)`,
          ],
          [
            'passes',
            `${passes.length}: ${['success', 'partial', 'error'].map((r) => `${passes.filter((p) => p.result === r).length} ${r}`).join(', ')}`,
          ],
          ['swaps', `${swaps} revisions, ${manifestEdits} environment edits`],
          [
            'hand edits',
            `${handEdits} landed; kills waited for heals ${healWaits.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ') || '-'}`,
          ],
          [
            'kills',
            `each among the writes of a ${KILL_BATCH}-environment swap; records left without a fingerprint ` +
              `(of them, written before the kill): ${leftInDoubt.map((k) => `${k.left} (${k.landed})`).join(', ') || '-'}; ` +
              `${editedInDoubt.size} of the written ones edited by hand later`,
          ],
          ['rate-limit bursts', `${bursts} (${BURST_RATE} req/s while on)`],
          [
            'emulator',
            `${emulatorStats.total} API requests: ${emulatorStats.faults['fail'] ?? 0} answered 503, ` +
              `${emulatorStats.faults['reset'] ?? 0} reset, ${emulatorStats.throttled} answered 429`,
          ],
          [
            'writes landed',
            `${replay.byWriter.daemon} by the daemon, ${replay.byWriter.hand} by hand`,
          ],
          [
            'notifications',
            [...receiver.byType].map(([type, n]) => `${n} ${type}`).join(', ') || 'none',
          ],
          [
            'memory method',
            `VmRSS and /proc/<pid>/fd every ${SAMPLE_EVERY_MS / 1000} s; per life, the first sample ${BASELINE_AGE_MS / 1000} s or more after its start (the first life's: after the initial sync) against its last (read just before the kill); lives with less than ${MIN_SPAN_MS / 1000} s between the two are not checked`,
          ],
        ],
        ['What', 'Figure'],
        [],
      ),
    );
    say('');
    say(
      renderTable(
        checks.map((c) => [c.name, c.pass ? 'PASS' : 'FAIL', c.detail]),
        ['Check', 'Result', 'Detail'],
        [],
      ),
    );
    say('');
    const failed = checks.filter((c) => !c.pass).length;
    say(failed === 0 ? 'soak passed' : `soak FAILED: ${failed} check(s)`);
    if (flags.keep) progress(`kept ${work}`);
    return failed === 0 ? 0 : 1;
  } finally {
    if (current?.life.alive()) {
      current.life.signal('SIGKILL');
      await current.life.exited;
    }
    await proxy?.close();
    await receiver?.close();
    await emulator?.stop();
    if (!flags.keep) await rm(work, { recursive: true, force: true });
  }
}

process.exitCode = await main();
