/**
 * The emulator's in-memory store: the environments of each org, live and archived, and the kosli
 * profile's policy documents. Every operation is synchronous, so concurrent requests cannot
 * interleave inside one.
 */
import type { Profile } from './options.ts';
import {
  CREATED_BY,
  type PolicyDocument,
  type StoreDocument,
  type StoredEnvironment,
} from './store-document.ts';

/**
 * A checked PUT body. `undefined`: not given (absent, or null in the kosli profile), so a create
 * takes the default and an update keeps the old value.
 */
export interface EnvironmentInput {
  name: string;
  description: string;
  type: string;
  include_scaling?: boolean | undefined;
  require_provenance?: boolean | undefined;
  policies?: string[] | undefined;
  included_environments?: string[] | undefined;
}

/** The fields the routes for one environment change (PATCH, tags, policies); undefined: kept. */
export type EnvironmentChange = {
  [K in 'description' | 'included_environments' | 'tags' | 'policies']?:
    | StoredEnvironment[K]
    | undefined;
};

/** A checked policy upload: `description` undefined when the payload left it out. */
export interface PolicyUpload {
  readonly name: string;
  readonly description: string | undefined;
  readonly policyYaml: string;
}

/** Compares by UTF-16 code units, so the order never depends on the machine's locale. */
export function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** A deep copy of a stored value (they are plain JSON). */
const copy = <T>(value: T): T => structuredClone(value);

/** Equal as JSON, a missing list counting as none. */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

/** The fields whose change moves `last_changed_at`. */
const FIELDS = [
  'type',
  'description',
  'include_scaling',
  'require_provenance',
  'policies',
  'tags',
  'included_environments',
] as const;

/** A plain object whose keys are org names: `__proto__` and the like stay ordinary keys. */
function byOrg<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  return Object.fromEntries(entries);
}

interface OrgEntries {
  /** Live environments by name: at most one per name. */
  readonly live: Map<string, StoredEnvironment>;
  /** Archived ones, never listed (docs/api-behaviour.md#archived-environments). */
  readonly archived: StoredEnvironment[];
}

export class EnvironmentStore {
  readonly #orgs = new Map<string, OrgEntries>();
  readonly #policies = new Map<string, Map<string, PolicyDocument>>();
  /** `org/name` of the creates in flight, which hold their names (docs/emulator.md). */
  readonly #creating = new Set<string>();
  readonly #listeners = new Set<() => void>();

  /** Calls `listener` after every change (for persistence). */
  onChange(listener: () => void): void {
    this.#listeners.add(listener);
  }

  /** Holds `name` for a create in flight; false when another create holds it already. */
  hold(org: string, name: string): boolean {
    const key = `${org}/${name}`;
    if (this.#creating.has(key)) return false;
    this.#creating.add(key);
    return true;
  }

  release(org: string, name: string): void {
    this.#creating.delete(`${org}/${name}`);
  }

  /**
   * Why `members` cannot be the members of the environment `name` in `org`, naming each member
   * that is not a live environment there; undefined when they can.
   */
  membersProblem(org: string, name: string, members: readonly string[]): string | undefined {
    const problems = members.flatMap((member) => {
      if (member === name) return [`'${name}' cannot include itself`];
      if (this.get(org, member) !== undefined) return [];
      if (this.isArchived(org, member)) {
        return [`environment '${member}' in organization '${org}' has been archived`];
      }
      return [`environment '${member}' does not exist in organization '${org}'`];
    });
    return problems.length === 0 ? undefined : problems.join('; ');
  }

  /**
   * Creates or updates the live environment `input.name`. On an update the kosli profile keeps
   * the old description for `""` (docs/api-behaviour.md#successful-writes); `include_scaling` is
   * retired there and stays false.
   */
  upsert(org: string, input: EnvironmentInput, profile: Profile, nowSeconds: number): void {
    const entries = this.#entries(org);
    const existing = entries.live.get(input.name);
    const kosli = profile === 'kosli';
    const logical = input.type === 'logical';
    if (existing === undefined) {
      entries.live.set(input.name, {
        org,
        name: input.name,
        type: input.type,
        description: input.description,
        include_scaling: !kosli && (input.include_scaling ?? false),
        require_provenance: input.require_provenance ?? false,
        policies: [...(input.policies ?? [])],
        tags: {},
        last_modified_at: nowSeconds,
        last_reported_at: null,
        last_changed_at: nowSeconds,
        state: null,
        included_environments: logical ? [...(input.included_environments ?? [])] : null,
        archived: false,
      });
      this.#changed();
      return;
    }
    const wasLogical = existing.type === 'logical';
    const next: StoredEnvironment = {
      ...existing,
      type: input.type,
      description: kosli && input.description === '' ? existing.description : input.description,
      include_scaling: kosli
        ? existing.include_scaling
        : (input.include_scaling ?? existing.include_scaling),
      require_provenance: input.require_provenance ?? existing.require_provenance,
      policies: input.policies ?? existing.policies,
      included_environments: !logical
        ? null
        : (input.included_environments ?? (wasLogical ? existing.included_environments : [])),
    };
    this.#apply(existing, { ...next, last_modified_at: nowSeconds }, nowSeconds);
  }

  /**
   * Applies `change` to the live environment `name`: the environment after it, or undefined when
   * there is none. A change moves `last_modified_at` and `last_changed_at`; no change moves neither.
   */
  update(
    org: string,
    name: string,
    change: EnvironmentChange,
    nowSeconds: number,
  ): StoredEnvironment | undefined {
    const environment = this.#orgs.get(org)?.live.get(name);
    if (environment === undefined) return undefined;
    const given = Object.entries(change).filter(([, value]) => value !== undefined);
    if (this.#apply(environment, { ...environment, ...Object.fromEntries(given) }, nowSeconds)) {
      environment.last_modified_at = nowSeconds;
    }
    return copy(environment);
  }

  /**
   * Archives the live environment `name`: it leaves the listing and every logical environment's
   * members, and its policies are detached. False when there is no live environment of that name.
   */
  archive(org: string, name: string, nowSeconds: number): boolean {
    const entries = this.#orgs.get(org);
    const environment = entries?.live.get(name);
    if (entries === undefined || environment === undefined) return false;
    entries.live.delete(name);
    this.#apply(environment, { ...environment, policies: [], archived: true }, nowSeconds);
    entries.archived.push(environment);
    this.#renameMember(entries, name, undefined, nowSeconds);
    this.#changed();
    return true;
  }

  /**
   * Renames the live environment `from` to `to`, keeping every field, tag, policy and timestamp.
   * Logical environments that include it name it by its new name.
   */
  rename(
    org: string,
    from: string,
    to: string,
    nowSeconds: number,
  ): 'missing' | 'taken' | undefined {
    const entries = this.#orgs.get(org);
    const environment = entries?.live.get(from);
    if (entries === undefined || environment === undefined) return 'missing';
    if (entries.live.has(to)) return 'taken';
    entries.live.delete(from);
    environment.name = to;
    entries.live.set(to, environment);
    this.#renameMember(entries, from, to, nowSeconds);
    this.#changed();
    return undefined;
  }

  /** True when `name` has no live environment in `org` but has an archived one. */
  isArchived(org: string, name: string): boolean {
    const entries = this.#orgs.get(org);
    return entries?.live.has(name) === false && entries.archived.some((env) => env.name === name);
  }

  /** The live environments of `org`, sorted by name (copies). */
  list(org: string): StoredEnvironment[] {
    return [...(this.#orgs.get(org)?.live.values() ?? [])].toSorted(byName).map(copy);
  }

  /** One live environment (a copy), or undefined. */
  get(org: string, name: string): StoredEnvironment | undefined {
    const env = this.#orgs.get(org)?.live.get(name);
    return env === undefined ? undefined : copy(env);
  }

  /** The number of live environments over all orgs. */
  get size(): number {
    return [...this.#orgs.values()].reduce((total, entries) => total + entries.live.size, 0);
  }

  /** The policy documents of `org`, sorted by name (copies). */
  policies(org: string): PolicyDocument[] {
    return [...(this.#policies.get(org)?.values() ?? [])].toSorted(byName).map(copy);
  }

  /** One policy document (a copy), or undefined. */
  policy(org: string, name: string): PolicyDocument | undefined {
    const document = this.#policies.get(org)?.get(name);
    return document === undefined ? undefined : copy(document);
  }

  /**
   * Creates or updates a policy document: a new version when the YAML differs from the latest
   * version's (byte for byte), the description when one is given. True when it was created.
   */
  savePolicy(org: string, upload: PolicyUpload, nowSeconds: number): boolean {
    const documents = this.#policies.get(org) ?? new Map<string, PolicyDocument>();
    this.#policies.set(org, documents);
    const existing = documents.get(upload.name);
    const latest = existing?.versions.at(-1);
    const version = (latest?.version ?? 0) + 1;
    const newVersion = {
      version,
      policy_yaml: upload.policyYaml,
      timestamp: nowSeconds,
      created_by: CREATED_BY,
    };
    if (existing === undefined) {
      documents.set(upload.name, {
        name: upload.name,
        description: upload.description ?? '',
        created_at: nowSeconds,
        versions: [newVersion],
      });
    } else {
      const newContent = latest?.policy_yaml !== upload.policyYaml;
      const description = upload.description ?? existing.description;
      if (!newContent && description === existing.description) return false;
      existing.description = description;
      if (newContent) existing.versions.push(newVersion);
    }
    this.#changed();
    return existing === undefined;
  }

  /** The whole store as a JSON-ready document (orgs and their entries sorted by name). */
  toDocument(): StoreDocument {
    const orgs = [...this.#orgs.keys()].toSorted().map((org) => {
      const entries = this.#orgs.get(org);
      const all = [...(entries?.live.values() ?? []), ...(entries?.archived ?? [])];
      return [org, all.toSorted(byName).map(copy)] as const;
    });
    const policies = [...this.#policies.keys()]
      .toSorted()
      .map((org) => [org, this.policies(org)] as const);
    return { version: 1, orgs: byOrg(orgs), policies: byOrg(policies) };
  }

  /** Replaces the whole store with `document` (already checked: store-document.ts). */
  replace(stored: StoreDocument): void {
    this.#orgs.clear();
    this.#policies.clear();
    for (const [org, environments] of Object.entries(stored.orgs)) {
      const entries = this.#entries(org);
      for (const env of environments.map(copy)) {
        if (env.archived) entries.archived.push({ ...env, org });
        else entries.live.set(env.name, { ...env, org });
      }
    }
    for (const [org, documents] of Object.entries(stored.policies ?? {})) {
      this.#policies.set(
        org,
        new Map(documents.map((document) => [document.name, copy(document)])),
      );
    }
    this.#changed();
  }

  /** Empties the store. */
  clear(): void {
    this.replace({ version: 1, orgs: {} });
  }

  /**
   * Sets `environment` to `next`, moving `last_changed_at` when a field changed. Detaching the
   * last policy makes compliance unknown. Returns whether anything changed; tells the listeners.
   */
  #apply(environment: StoredEnvironment, next: StoredEnvironment, nowSeconds: number): boolean {
    const changed = FIELDS.some((key) => !same(environment[key], next[key]));
    const detached = (environment.policies ?? []).length > 0 && (next.policies ?? []).length === 0;
    Object.assign(environment, copy(next), detached ? { state: null } : {});
    if (changed) environment.last_changed_at = nowSeconds;
    this.#changed();
    return changed;
  }

  /** Renames (or, with `to` undefined, removes) a member in every logical environment of the org. */
  #renameMember(
    entries: OrgEntries,
    from: string,
    to: string | undefined,
    nowSeconds: number,
  ): void {
    for (const other of entries.live.values()) {
      const members = other.included_environments;
      if (members?.includes(from) !== true) continue;
      other.included_environments = members.flatMap((member) =>
        member !== from ? [member] : to === undefined ? [] : [to],
      );
      other.last_changed_at = nowSeconds;
    }
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
