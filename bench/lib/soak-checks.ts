/**
 * What the soak concludes from what it recorded: the writes replayed, the service against the
 * manifests, memory and descriptors per daemon life, and the token searched for in every output.
 */
import type { LandedWrite } from './soak-proxy.ts';
import type { Sample } from './soak-daemon.ts';

/** An environment as the manifests declare it (the soak declares these three fields only). */
export interface Declared {
  readonly name: string;
  readonly type: string;
  readonly description: string;
}

const FIELDS = ['type', 'description'] as const;

/**
 * Replays the landed writes in the order the service answered them. A daemon write that found
 * every field it carried already so (the service held that value before it) changed nothing:
 * it was sent twice. Returns those, and what the service holds per environment after the replay.
 */
export function replayWrites(writes: readonly LandedWrite[]): {
  held: Map<string, Record<string, unknown>>;
  duplicates: LandedWrite[];
  byWriter: { daemon: number; hand: number };
} {
  const held = new Map<string, Record<string, unknown>>();
  const duplicates: LandedWrite[] = [];
  const byWriter = { daemon: 0, hand: 0 };
  for (const write of writes) {
    byWriter[write.writer] += 1;
    const key = `${write.org}/${write.name}`;
    const before = held.get(key);
    const changes = Object.entries(write.fields).some(
      ([field, value]) => before === undefined || before[field] !== value,
    );
    if (!changes && write.writer === 'daemon') duplicates.push(write);
    held.set(key, { ...before, ...write.fields });
  }
  return { held, duplicates, byWriter };
}

/** A field that differs between the manifests and the service, or an environment on one side only. */
export interface Difference {
  readonly env: string;
  readonly what: string;
}

/** The service's live environments (the store document) beside the manifests, field for field. */
export function compareStore(
  manifests: ReadonlyMap<string, readonly Declared[]>,
  store: { orgs: Record<string, { name: string; archived?: boolean; [key: string]: unknown }[]> },
): Difference[] {
  const out: Difference[] = [];
  const orgs = new Set([...manifests.keys(), ...Object.keys(store.orgs)]);
  for (const org of orgs) {
    const declared = new Map((manifests.get(org) ?? []).map((env) => [env.name, env]));
    const live = new Map(
      (store.orgs[org] ?? []).filter((env) => env.archived !== true).map((env) => [env.name, env]),
    );
    for (const [name, env] of declared) {
      const found = live.get(name);
      if (found === undefined) {
        out.push({ env: `${org}/${name}`, what: 'declared, not in the service' });
        continue;
      }
      for (const field of FIELDS) {
        if (found[field] !== env[field]) {
          out.push({
            env: `${org}/${name}`,
            what: `${field}: the service has ${JSON.stringify(found[field])}, the manifests ${JSON.stringify(env[field])}`,
          });
        }
      }
    }
    for (const name of live.keys()) {
      if (!declared.has(name))
        out.push({ env: `${org}/${name}`, what: 'in the service, not declared' });
    }
  }
  return out;
}

/** Memory and descriptors over one daemon life, from 30 s after its start to its end. */
export interface LifeGrowth {
  readonly life: number;
  /** Ms between the baseline sample and the last one. */
  readonly spanMs: number;
  readonly baseline: Sample | undefined;
  readonly end: Sample | undefined;
  /** (end RSS - baseline RSS) / baseline RSS, in %. */
  readonly rssGrowthPercent: number;
  /** Descriptors other than sockets, end minus baseline. */
  readonly otherFdGrowth: number;
  /** The most sockets open at any sample of the life. */
  readonly maxSockets: number;
}

export const BASELINE_AGE_MS = 30_000;

/** `minAgeMs`: the baseline's least age (the first life's counts from the end of its big sync). */
export function lifeGrowth(
  life: number,
  samples: readonly Sample[],
  minAgeMs = BASELINE_AGE_MS,
): LifeGrowth {
  const baseline = samples.find((s) => s.ageMs >= minAgeMs);
  const end = samples.at(-1);
  const usable = baseline !== undefined && end !== undefined && end !== baseline;
  return {
    life,
    spanMs: usable ? end.ageMs - baseline.ageMs : 0,
    baseline,
    end,
    rssGrowthPercent: usable ? ((end.rssKb - baseline.rssKb) / baseline.rssKb) * 100 : Number.NaN,
    otherFdGrowth: usable ? end.fds.other - baseline.fds.other : Number.NaN,
    maxSockets: Math.max(0, ...samples.map((s) => s.fds.sockets)),
  };
}

/**
 * The forms a token could leak in: as it is, in hex, and in base64 or base64url. A token inside
 * a longer base64 text (a Basic header, a JSON document encoded whole) is encoded at one of three
 * alignments; each form keeps only the characters that depend on the token alone.
 */
export function tokenForms(token: string): { form: string; text: string }[] {
  const bytes = Buffer.from(token, 'utf8');
  const forms = [
    { form: 'raw', text: token },
    { form: 'hex', text: bytes.toString('hex') },
    { form: 'HEX', text: bytes.toString('hex').toUpperCase() },
  ];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    for (const encoding of ['base64', 'base64url'] as const) {
      const text = padded.toString(encoding);
      // Characters fed by the padding in front, and the last group (which the text after the
      // token also feeds), are cut.
      const start = Math.ceil((shift * 8) / 6);
      const end = Math.floor(((shift + bytes.length) * 8) / 6);
      forms.push({ form: `${encoding}@${shift}`, text: text.slice(start, end) });
    }
  }
  return forms;
}

/** Where the token shows in `text`: the forms found (a run of 16 of its characters counts). */
export function tokenHits(text: string, token: string): string[] {
  const hits = new Set<string>();
  for (const { form, text: needle } of tokenForms(token)) {
    if (needle.length > 0 && text.includes(needle)) hits.add(form);
  }
  // A cut or partly masked echo: any 16 characters of the token in a row.
  for (let i = 0; i + 16 <= token.length; i++) {
    if (text.includes(token.slice(i, i + 16))) {
      hits.add('16-character run');
      break;
    }
  }
  return [...hits];
}
