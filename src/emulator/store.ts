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

/** Fields of an environment to change; undefined: kept. */
export type EnvironmentChange = {
  [K in keyof StoredEnvironment]?: StoredEnvironment[K] | undefined;
};

/** Compares by UTF-16 code units, so the order never depends on the machine's locale. */
export function byName(a: { name?: unknown }, b: { name?: unknown }): number {
  const [x, y] = [String(a.name), String(b.name)];
  return x < y ? -1 : x > y ? 1 : 0;
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

/** Sorted by name, copied, as an object by org (from entries: `__proto__` stays a key). */
function sortedByOrg<T extends { name: string }>(orgs: Map<string, T[]>): Record<string, T[]> {
  const sorted = [...orgs.keys()]
    .toSorted()
    .map((org) => [org, (orgs.get(org) ?? []).toSorted(byName).map(copy)]);
  return Object.fromEntries(sorted);
}

export class EnvironmentStore {
  /** The wall clock in epoch seconds, for the timestamps the store writes. */
  readonly #now: () => number;
  /** Per org, its environments, live and archived (never listed); one live one per name. */
  readonly #environments = new Map<string, StoredEnvironment[]>();
  readonly #policies = new Map<string, PolicyDocument[]>();
  /** `org/name` of the creates in flight, which hold their names (docs/emulator.md). */
  readonly #creating = new Set<string>();
  readonly #listeners = new Set<() => void>();

  constructor(nowSeconds: () => number) {
    this.#now = nowSeconds;
  }

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
      if (this.#live(org, member) !== undefined) return [];
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
  upsert(org: string, input: EnvironmentInput, profile: Profile): void {
    const existing = this.#live(org, input.name);
    const now = this.#now();
    const kosli = profile === 'kosli';
    const logical = input.type === 'logical';
    if (existing === undefined) {
      this.#org(org).push({
        org,
        name: input.name,
        type: input.type,
        description: input.description,
        include_scaling: !kosli && (input.include_scaling ?? false),
        require_provenance: input.require_provenance ?? false,
        policies: [...(input.policies ?? [])],
        tags: {},
        last_modified_at: now,
        last_reported_at: null,
        last_changed_at: now,
        state: null,
        included_environments: logical ? [...(input.included_environments ?? [])] : null,
        archived: false,
      });
      this.#changed();
      return;
    }
    const members = existing.type === 'logical' ? existing.included_environments : [];
    this.#apply(
      existing,
      {
        type: input.type,
        description: kosli && input.description === '' ? existing.description : input.description,
        include_scaling: kosli
          ? existing.include_scaling
          : (input.include_scaling ?? existing.include_scaling),
        require_provenance: input.require_provenance ?? existing.require_provenance,
        policies: input.policies ?? existing.policies,
        included_environments: logical ? (input.included_environments ?? members) : null,
        last_modified_at: now,
      },
      now,
    );
  }

  /**
   * Applies `change` to the live environment `name`: the environment after it, or undefined when
   * there is none. A change moves `last_modified_at` and `last_changed_at`; no change moves neither.
   */
  update(org: string, name: string, change: EnvironmentChange): StoredEnvironment | undefined {
    const environment = this.#live(org, name);
    if (environment === undefined) return undefined;
    const now = this.#now();
    if (this.#apply(environment, change, now)) environment.last_modified_at = now;
    return copy(environment);
  }

  /**
   * Archives the live environment `name`: it leaves the listing and every logical environment's
   * members, and its policies are detached. False when there is no live environment of that name.
   */
  archive(org: string, name: string): boolean {
    const environment = this.#live(org, name);
    if (environment === undefined) return false;
    this.#apply(environment, { policies: [], archived: true });
    this.#renameMember(org, name, undefined);
    return true;
  }

  /**
   * Renames the live environment `from` to `to`, keeping every field, tag, policy and timestamp.
   * Logical environments that include it name it by its new name.
   */
  rename(org: string, from: string, to: string): 'missing' | 'taken' | undefined {
    const environment = this.#live(org, from);
    if (environment === undefined) return 'missing';
    if (this.#live(org, to) !== undefined) return 'taken';
    environment.name = to;
    this.#renameMember(org, from, to);
    return undefined;
  }

  /** True when `name` has no live environment in `org` but has an archived one. */
  isArchived(org: string, name: string): boolean {
    const all = this.#environments.get(org) ?? [];
    return this.#live(org, name) === undefined && all.some((env) => env.name === name);
  }

  /** The live environments of `org`, sorted by name (copies). */
  list(org: string): StoredEnvironment[] {
    return (this.#environments.get(org) ?? [])
      .filter((env) => !env.archived)
      .toSorted(byName)
      .map(copy);
  }

  /** One live environment (a copy), or undefined. */
  get(org: string, name: string): StoredEnvironment | undefined {
    const env = this.#live(org, name);
    return env === undefined ? undefined : copy(env);
  }

  /** The number of live environments over all orgs. */
  get size(): number {
    return [...this.#environments.values()].flat().filter((env) => !env.archived).length;
  }

  /** The policy documents of `org`, sorted by name (copies). */
  policies(org: string): PolicyDocument[] {
    return (this.#policies.get(org) ?? []).toSorted(byName).map(copy);
  }

  /** One policy document (a copy), or undefined. */
  policy(org: string, name: string): PolicyDocument | undefined {
    const document = this.#policies.get(org)?.find((item) => item.name === name);
    return document === undefined ? undefined : copy(document);
  }

  /**
   * Creates or updates the policy document `name`: a new version when `yaml` differs from the
   * latest version's (byte for byte), the description when one is given. True when created.
   */
  savePolicy(org: string, name: string, description: string | undefined, yaml: string): boolean {
    const now = this.#now();
    const documents = this.#policies.get(org) ?? [];
    this.#policies.set(org, documents);
    const existing = documents.find((item) => item.name === name);
    const latest = existing?.versions.at(-1);
    const version = {
      version: (latest?.version ?? 0) + 1,
      policy_yaml: yaml,
      timestamp: now,
      created_by: CREATED_BY,
    };
    if (existing === undefined) {
      documents.push({
        name,
        description: description ?? '',
        created_at: now,
        versions: [version],
      });
    } else {
      const newContent = latest?.policy_yaml !== yaml;
      if (!newContent && (description ?? existing.description) === existing.description)
        return false;
      existing.description = description ?? existing.description;
      if (newContent) existing.versions.push(version);
    }
    this.#changed();
    return existing === undefined;
  }

  /** The whole store as a JSON-ready document (orgs and their entries sorted by name). */
  toDocument(): StoreDocument {
    return {
      version: 1,
      orgs: sortedByOrg(this.#environments),
      policies: sortedByOrg(this.#policies),
    };
  }

  /** Replaces the whole store with `stored` (already checked: store-document.ts). */
  replace(stored: StoreDocument): void {
    this.#environments.clear();
    this.#policies.clear();
    for (const [org, list] of Object.entries(stored.orgs)) {
      this.#environments.set(
        org,
        list.map((env) => ({ ...copy(env), org })),
      );
    }
    for (const [org, list] of Object.entries(stored.policies ?? {}))
      this.#policies.set(org, list.map(copy));
    this.#changed();
  }

  /** Empties the store. */
  clear(): void {
    this.replace({ version: 1, orgs: {} });
  }

  #org(org: string): StoredEnvironment[] {
    const list = this.#environments.get(org) ?? [];
    this.#environments.set(org, list);
    return list;
  }

  #live(org: string, name: string): StoredEnvironment | undefined {
    return this.#environments.get(org)?.find((env) => !env.archived && env.name === name);
  }

  /**
   * Applies `change` to `environment`, moving `last_changed_at` when a field changed. Detaching
   * the last policy makes compliance unknown. Returns whether a field changed; tells the listeners.
   */
  #apply(environment: StoredEnvironment, change: EnvironmentChange, now = this.#now()): boolean {
    const given = Object.entries(change).filter(([, value]) => value !== undefined);
    const next: StoredEnvironment = { ...environment, ...copy(Object.fromEntries(given)) };
    const changed = FIELDS.some((key) => !same(environment[key], next[key]));
    const detached = (environment.policies ?? []).length > 0 && (next.policies ?? []).length === 0;
    Object.assign(environment, next, detached ? { state: null } : {});
    if (changed) environment.last_changed_at = now;
    this.#changed();
    return changed;
  }

  /** Renames (or, with `to` undefined, removes) a member in every logical environment of the org. */
  #renameMember(org: string, from: string, to: string | undefined): void {
    for (const other of this.list(org)) {
      const members = other.included_environments;
      if (members?.includes(from) !== true) continue;
      const renamed = members.flatMap((member) =>
        member !== from ? [member] : to === undefined ? [] : [to],
      );
      this.#apply(this.#live(org, other.name) ?? other, {
        included_environments: renamed,
      });
    }
    this.#changed();
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
