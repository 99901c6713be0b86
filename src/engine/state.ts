import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { AppliedRecord } from '../core/model.ts';
import { compareNames, type AppliedLookup } from '../core/plan.ts';

/**
 * The state file: per org and environment, the last applied `include_scaling` and `policies`
 * (the fields the spec's listing does not carry). It is a cache, never the truth: a missing or
 * broken file costs one extra PUT per environment, never a crash (issue 3, Applying).
 */

/**
 * Version 2 groups an org's environments by record: a fleet has few distinct
 * (include_scaling, policies) pairs, so 100,000 environments take about 1.4 MB instead of the
 * 5.8 MB of version 1 (one object per environment), and load in a third of the time. Version 1
 * files are still read (and rewritten as version 2 at the next change).
 */
export const STATE_VERSION = 2;

/** One group of environments sharing a record, as version 2 spells it. */
interface GroupJson {
  include_scaling: boolean;
  policies: string[];
  not_converged?: { desired: string; observed: string };
  environments: string[];
}

type Records = Record<string, AppliedRecord>;

/**
 * Reads one record (a version 1 entry or a version 2 group) by hand rather than through a
 * schema: a state file can hold 100,000 of them. Records without `not_converged` are shared
 * through `interned`, so the state costs one reference per environment. Undefined when it is
 * not a record.
 */
function toRecord(entry: unknown, interned: Map<string, AppliedRecord>): AppliedRecord | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const {
    include_scaling: includeScaling,
    policies,
    not_converged: stuck,
  } = entry as Record<string, unknown>;
  if (typeof includeScaling !== 'boolean' || !Array.isArray(policies)) return undefined;
  for (const policy of policies) if (typeof policy !== 'string') return undefined;
  if (stuck === undefined) {
    // JSON, not a join: a policy may hold any character, and ["a,b"] is not ["a", "b"].
    const key = JSON.stringify([includeScaling, policies]);
    let record = interned.get(key);
    if (record === undefined) {
      record = Object.freeze({
        includeScaling,
        policies: Object.freeze([...policies] as string[]),
      });
      interned.set(key, record);
    }
    return record;
  }
  const { desired, observed } = (stuck ?? {}) as Record<string, unknown>;
  if (typeof desired !== 'string' || typeof observed !== 'string') return undefined;
  return {
    includeScaling,
    policies: [...(policies as string[])],
    notConverged: { desired, observed },
  };
}

/** The key a record is grouped by when written. */
function groupKey(record: AppliedRecord): string {
  return JSON.stringify([
    record.includeScaling,
    record.policies,
    record.notConverged?.desired ?? null,
    record.notConverged?.observed ?? null,
  ]);
}

/** Environments sharing one record: the state's form in memory and in the file (version 2). */
interface Group {
  readonly record: AppliedRecord;
  readonly names: readonly string[];
}

/** One org's records grouped, in a stable order (by record, names sorted). */
function toGroups(records: Readonly<Records>): Group[] {
  const groups = new Map<string, { record: AppliedRecord; names: string[] }>();
  for (const name of Object.keys(records).sort()) {
    const record = records[name] as AppliedRecord;
    const key = groupKey(record);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { record, names: [name] });
    else group.names.push(name);
  }
  return [...groups.keys()].sort().map((key) => groups.get(key) as Group);
}

function toJson({ record, names }: Group): GroupJson {
  return {
    include_scaling: record.includeScaling,
    policies: [...record.policies],
    ...(record.notConverged ? { not_converged: { ...record.notConverged } } : {}),
    environments: [...names],
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A record's map with no prototype: an environment named like an Object method is just a key. */
function emptyRecords(): Records {
  return Object.create(null) as Records;
}

/**
 * Reads the `orgs` of a version 1 or 2 file into groups. Undefined (and `bad` called) at the
 * first thing that is not a record.
 */
function readOrgs(
  version: number,
  entries: Record<string, unknown>,
  bad: (org: string, env: string) => void,
): Map<string, readonly Group[]> | undefined {
  const orgs = new Map<string, readonly Group[]>();
  const interned = new Map<string, AppliedRecord>();
  for (const [org, value] of Object.entries(entries)) {
    if (version === 1) {
      if (!isPlainObject(value)) return undefined;
      const records = emptyRecords();
      for (const [name, entry] of Object.entries(value)) {
        const record = toRecord(entry, interned);
        if (record === undefined) return (bad(org, name), undefined);
        records[name] = record;
      }
      orgs.set(org, toGroups(records));
      continue;
    }
    if (!Array.isArray(value)) return undefined;
    const groups: Group[] = [];
    for (const group of value as unknown[]) {
      const record = toRecord(group, interned);
      const names = (group as { environments?: unknown } | null)?.environments;
      if (record === undefined || !Array.isArray(names)) return (bad(org, '(group)'), undefined);
      for (const name of names as unknown[]) {
        if (typeof name !== 'string') return (bad(org, String(name)), undefined);
      }
      // Sorted, as envsync writes them; a file written otherwise is sorted here, once.
      const sorted = (names as string[]).every(
        (name, i, all) => i === 0 || compareNames(all[i - 1] as string, name) <= 0,
      );
      groups.push({ record, names: sorted ? names : [...names].sort(compareNames) });
    }
    orgs.set(org, groups);
  }
  return orgs;
}

/** The state in memory, saved atomically (temp file + rename) and with writes coalesced. */
export class StateStore {
  readonly file: string;
  readonly api: string | undefined;
  /**
   * Each org's records, grouped as the file has them: a reference per environment, and no
   * per-org dictionary until the org is asked for (at 300,000 environments those dictionaries
   * were 18 MB).
   */
  #orgs: Map<string, readonly Group[]>;
  /** Each org's part of the file, serialized once per change (a big state is written often). */
  readonly #fragments = new Map<string, string>();
  #saving: Promise<void> | undefined;
  #dirty = false;

  private constructor(file: string, api: string | undefined, orgs: Map<string, readonly Group[]>) {
    this.file = file;
    this.api = api;
    this.#orgs = orgs;
  }

  /** Loads the state file; anything wrong with it is a warning and an empty state. */
  static async load(file: string, logger: Logger, api?: string): Promise<StateStore> {
    await removeStaleTempFiles(file);
    const empty = () => new StateStore(file, api, new Map());
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        logger.debug({ stateFile: file }, 'no state file yet; starting empty');
      } else {
        logger.warn(
          { stateFile: file, code },
          'state file cannot be read; starting empty (one extra PUT per environment whose listing hides include_scaling/policies)',
        );
      }
      return empty();
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      logger.warn(
        { stateFile: file },
        'state file is not valid JSON; starting empty (it will be rewritten)',
      );
      return empty();
    }
    const version = (json as { version?: unknown } | null)?.version;
    if (typeof version === 'number' && version > STATE_VERSION) {
      logger.warn(
        { stateFile: file, version },
        `state file has version ${version}, newer than this envsync understands (${STATE_VERSION}); starting empty`,
      );
      return empty();
    }
    const { api: recordedFor, orgs: entries } = (json ?? {}) as Record<string, unknown>;
    const shapeIsWrong = () => {
      logger.warn(
        { stateFile: file },
        'state file has an unexpected shape; starting empty (it will be rewritten)',
      );
      return empty();
    };
    if (
      !isPlainObject(json) ||
      (version !== 1 && version !== STATE_VERSION) ||
      (recordedFor !== undefined && typeof recordedFor !== 'string') ||
      !isPlainObject(entries)
    ) {
      return shapeIsWrong();
    }
    if (api !== undefined && recordedFor !== undefined && recordedFor !== api) {
      logger.warn(
        { stateFile: file, recordedFor, api },
        'state file was written for another API address; starting empty',
      );
      return empty();
    }
    let malformed = false;
    const orgs = readOrgs(version, entries, (org, env) => {
      malformed = true;
      logger.warn(
        { stateFile: file, org, env },
        'state file has a malformed record; starting empty (it will be rewritten)',
      );
    });
    if (orgs === undefined) return malformed ? empty() : shapeIsWrong();
    return new StateStore(file, api, orgs);
  }

  /**
   * The records of one org as a lookup, without building a table (the planner asks once per
   * environment): a binary search in each group's sorted names, the last group first, as `get`.
   */
  lookup(org: string): AppliedLookup {
    const groups = this.#orgs.get(org) ?? [];
    return (name) => {
      for (let g = groups.length - 1; g >= 0; g--) {
        const { record, names } = groups[g] as Group;
        let low = 0;
        let high = names.length - 1;
        while (low <= high) {
          const middle = (low + high) >> 1;
          const order = compareNames(names[middle] as string, name);
          if (order === 0) return record;
          if (order < 0) low = middle + 1;
          else high = middle - 1;
        }
      }
      return undefined;
    };
  }

  /** The records of one org, by environment name (a new object each time). */
  get(org: string): Readonly<Record<string, AppliedRecord>> {
    const records = emptyRecords();
    for (const { record, names } of this.#orgs.get(org) ?? []) {
      for (const name of names) records[name] = record;
    }
    return records;
  }

  /** Replaces the records of one org. */
  set(org: string, records: Readonly<Record<string, AppliedRecord>>): void {
    this.#orgs.set(org, toGroups(records));
    this.#fragments.delete(org);
    this.#dirty = true;
  }

  /**
   * Writes the state if it changed. Calls during a write coalesce into one more write, so
   * "after each org" costs at most two writes in flight, however many orgs finish at once.
   */
  async save(): Promise<void> {
    while (this.#saving !== undefined) await this.#saving;
    if (!this.#dirty) return;
    this.#dirty = false;
    this.#saving = this.#write().finally(() => {
      this.#saving = undefined;
    });
    await this.#saving;
  }

  async #write(): Promise<void> {
    const parts: string[] = [];
    for (const org of [...this.#orgs.keys()].sort()) {
      let fragment = this.#fragments.get(org);
      if (fragment === undefined) {
        fragment = `${JSON.stringify(org)}:${JSON.stringify((this.#orgs.get(org) ?? []).map(toJson))}`;
        this.#fragments.set(org, fragment);
      }
      parts.push(fragment);
    }
    const head = JSON.stringify({
      version: STATE_VERSION,
      ...(this.api === undefined ? {} : { api: this.api }),
    });
    await writeFileAtomic(this.file, `${head.slice(0, -1)},"orgs":{${parts.join(',')}}}\n`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes temp files that a killed writer left beside `file` (`file.<pid>.<random>.tmp`). */
async function removeStaleTempFiles(file: string): Promise<void> {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const match = /^(\d+)\.[a-z0-9]+\.tmp$/.exec(
      name.startsWith(prefix) ? name.slice(prefix.length) : '',
    );
    if (match !== null && !isAlive(Number(match[1])))
      await unlink(path.join(dir, name)).catch(() => undefined);
  }
}

/** Writes a file so that readers see the old or the new content, never a part (temp + rename). */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await writeFile(temp, content, { flush: true });
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
