/**
 * The emulator's in-memory store: environments per org, with the upsert rules of both profiles.
 * All operations are synchronous, so concurrent requests cannot interleave inside one.
 */
import type { Profile } from './options.ts';

/** An environment as the emulator keeps it (the kosli listing's fields plus two of its own). */
export interface StoredEnvironment {
  org: string;
  name: string;
  type: string;
  description: string;
  include_scaling: boolean;
  /** Kept and shown by the read of one environment, never by the listing. */
  require_provenance: boolean;
  policies: string[] | null;
  tags: Record<string, string>;
  /** Epoch seconds (float) of the last PUT that landed on this environment. */
  last_modified_at: number;
  last_reported_at: number | null;
  /** Epoch seconds (float) of the last PUT that changed a field (or created it). */
  last_changed_at: number | null;
  state: boolean | null;
  /** The members of a `logical` environment; null for every other type. */
  included_environments: string[] | null;
  archived: boolean;
}

/** The whole store as JSON: GET/PUT /_emulator/store and the `--data` file. */
export interface StoreDocument {
  version: 1;
  orgs: Record<string, StoredEnvironment[]>;
}

/**
 * A validated create/update request body. `undefined`: not given (absent, or null in the kosli
 * profile), so a create takes the default and an update keeps the old value.
 */
export interface EnvironmentInput {
  name: string;
  description: string;
  type: string;
  include_scaling: boolean | undefined;
  require_provenance: boolean | undefined;
  policies: string[] | undefined;
  included_environments: string[] | undefined;
}

export interface UpsertResult {
  readonly created: boolean;
  readonly changed: boolean;
  readonly environment: StoredEnvironment;
}

interface OrgEntries {
  /**
   * Live environments by name: at most one per name. Archived ones are kept apart and never
   * listed (docs/api-behaviour.md#archived-environments).
   */
  readonly live: Map<string, StoredEnvironment>;
  readonly archived: StoredEnvironment[];
}

/** Compares by UTF-16 code units, so the order never depends on the machine's locale. */
function byName(a: StoredEnvironment, b: StoredEnvironment): number {
  if (a.name < b.name) return -1;
  if (a.name > b.name) return 1;
  return 0;
}

function copyEnvironment(env: StoredEnvironment): StoredEnvironment {
  return {
    ...env,
    policies: env.policies === null ? null : [...env.policies],
    tags: { ...env.tags },
    included_environments:
      env.included_environments === null ? null : [...env.included_environments],
  };
}

/** Null and [] count as the same list: both mean "none". */
function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  const left = a ?? [];
  const right = b ?? [];
  return left.length === right.length && left.every((item, i) => item === right[i]);
}

/** The members an environment ends up with after an update to `input.type`. */
function membersAfter(existing: StoredEnvironment, input: EnvironmentInput): string[] | null {
  if (input.type !== 'logical') return null;
  if (input.included_environments !== undefined) return [...input.included_environments];
  return existing.type === 'logical' ? [...(existing.included_environments ?? [])] : [];
}

export class EnvironmentStore {
  readonly #orgs = new Map<string, OrgEntries>();
  readonly #listeners = new Set<() => void>();

  /** Calls `listener` after every change (for persistence). */
  onChange(listener: () => void): void {
    this.#listeners.add(listener);
  }

  /**
   * Why `members` cannot be the members of the environment `name` in `org`, naming each member
   * that is not a live environment there; undefined when they can.
   */
  membersProblem(org: string, name: string, members: readonly string[]): string | undefined {
    const problems = members.flatMap((member) => {
      if (member === name) return [`'${name}' cannot include itself`];
      if (this.#orgs.get(org)?.live.has(member) === true) return [];
      if (this.isArchived(org, member)) {
        return [`environment '${member}' in organization '${org}' has been archived`];
      }
      return [`environment '${member}' does not exist in organization '${org}'`];
    });
    return problems.length === 0 ? undefined : problems.join('; ');
  }

  /** Creates or updates the live environment `input.name` in `org`. `nowSeconds`: epoch seconds. */
  upsert(org: string, input: EnvironmentInput, profile: Profile, nowSeconds: number): UpsertResult {
    const entries = this.#entries(org);
    const existing = entries.live.get(input.name);
    if (existing === undefined) {
      const environment: StoredEnvironment = {
        org,
        name: input.name,
        type: input.type,
        description: input.description,
        include_scaling: input.include_scaling ?? false,
        require_provenance: input.require_provenance ?? false,
        policies: [...(input.policies ?? [])],
        tags: {},
        last_modified_at: nowSeconds,
        last_reported_at: null,
        last_changed_at: nowSeconds,
        state: null,
        included_environments:
          input.type === 'logical' ? [...(input.included_environments ?? [])] : null,
        archived: false,
      };
      entries.live.set(input.name, environment);
      this.#changed();
      return { created: true, changed: true, environment: copyEnvironment(environment) };
    }
    // Production ignores these two on an update (docs/api-behaviour.md#successful-writes).
    const description =
      profile === 'kosli' && input.description === '' ? existing.description : input.description;
    const includeScaling =
      input.include_scaling === undefined || (profile === 'kosli' && input.include_scaling)
        ? existing.include_scaling
        : input.include_scaling;
    const requireProvenance = input.require_provenance ?? existing.require_provenance;
    const policies = input.policies === undefined ? existing.policies : [...input.policies];
    const members = membersAfter(existing, input);
    const changed =
      existing.type !== input.type ||
      existing.description !== description ||
      existing.include_scaling !== includeScaling ||
      existing.require_provenance !== requireProvenance ||
      !sameList(existing.policies, policies) ||
      !sameList(existing.included_environments, members);
    existing.type = input.type;
    existing.description = description;
    existing.include_scaling = includeScaling;
    existing.require_provenance = requireProvenance;
    existing.policies = policies;
    existing.included_environments = members;
    existing.last_modified_at = nowSeconds;
    if (changed) existing.last_changed_at = nowSeconds;
    this.#changed();
    return { created: false, changed, environment: copyEnvironment(existing) };
  }

  /**
   * Archives the live environment `name`: it leaves the listing and every logical environment's
   * members, so no listed environment ever names one that is not listed. False when there is no
   * live environment of that name.
   */
  archive(org: string, name: string, nowSeconds: number): boolean {
    const entries = this.#orgs.get(org);
    const environment = entries?.live.get(name);
    if (entries === undefined || environment === undefined) return false;
    entries.live.delete(name);
    environment.archived = true;
    entries.archived.push(environment);
    for (const other of entries.live.values()) {
      const members = other.included_environments;
      if (members?.includes(name) !== true) continue;
      other.included_environments = members.filter((member) => member !== name);
      other.last_changed_at = nowSeconds;
    }
    this.#changed();
    return true;
  }

  /** True when `name` has no live environment in `org` but has an archived one. */
  isArchived(org: string, name: string): boolean {
    const entries = this.#orgs.get(org);
    if (entries === undefined || entries.live.has(name)) return false;
    return entries.archived.some((env) => env.name === name);
  }

  /** The live environments of `org`, sorted by name (copies). */
  list(org: string): StoredEnvironment[] {
    const entries = this.#orgs.get(org);
    if (entries === undefined) return [];
    return [...entries.live.values()].toSorted(byName).map(copyEnvironment);
  }

  /** One live environment, or undefined. */
  get(org: string, name: string): StoredEnvironment | undefined {
    const env = this.#orgs.get(org)?.live.get(name);
    return env === undefined ? undefined : copyEnvironment(env);
  }

  /** The number of live environments over all orgs. */
  get size(): number {
    let total = 0;
    for (const entries of this.#orgs.values()) total += entries.live.size;
    return total;
  }

  /** The whole store as a JSON-ready document (orgs and environments sorted by name). */
  toDocument(): StoreDocument {
    const orgs: Record<string, StoredEnvironment[]> = {};
    for (const org of [...this.#orgs.keys()].toSorted()) {
      const entries = this.#orgs.get(org);
      if (entries === undefined) continue;
      const all = [...entries.live.values(), ...entries.archived].toSorted(byName);
      Object.defineProperty(orgs, org, {
        value: all.map(copyEnvironment),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return { version: 1, orgs };
  }

  /** Replaces the whole store with `document` (already validated; see validate-store-document.ts). */
  replace(document: StoreDocument): void {
    this.#orgs.clear();
    for (const [org, environments] of Object.entries(document.orgs)) {
      const entries = this.#entries(org);
      for (const env of environments) {
        const copy = copyEnvironment({ ...env, org });
        if (copy.archived) entries.archived.push(copy);
        else entries.live.set(copy.name, copy);
      }
    }
    this.#changed();
  }

  /** Empties the store. */
  clear(): void {
    this.#orgs.clear();
    this.#changed();
  }

  #entries(org: string): OrgEntries {
    let entries = this.#orgs.get(org);
    if (entries === undefined) {
      entries = { live: new Map(), archived: [] };
      this.#orgs.set(org, entries);
    }
    return entries;
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
