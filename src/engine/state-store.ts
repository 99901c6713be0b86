import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { AppliedLookup, AppliedRecord, Records } from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import { isPlainObject } from '../core/plain-object.ts';
import { removeStaleTempFiles, writeFileAtomic } from './files.ts';
import {
  orgPart,
  readOrgs,
  recordsOf,
  stateText,
  STATE_VERSION,
  toGroups,
  type Group,
} from './state-codec.ts';

/**
 * The state file in memory: per org and environment, what envsync last applied of the fields a
 * listing may not carry. It is a cache, never the truth: a missing or broken file costs one extra
 * PUT per environment, never a crash. Saved atomically (temp file + rename), writes coalesced.
 */
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
  readonly #parts = new Map<string, string>();
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
    return recordsOf(this.#orgs.get(org) ?? []);
  }

  /** Replaces the records of one org. */
  set(org: string, records: Readonly<Records>): void {
    this.#orgs.set(org, toGroups(records));
    this.#parts.delete(org);
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
      let part = this.#parts.get(org);
      if (part === undefined) {
        part = orgPart(org, this.#orgs.get(org) ?? []);
        this.#parts.set(org, part);
      }
      parts.push(part);
    }
    await writeFileAtomic(this.file, stateText(this.api, parts));
  }
}
