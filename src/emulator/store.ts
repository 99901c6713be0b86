/** The in-memory store; every operation is synchronous, so requests cannot interleave in one. */
import type { Profile } from './options.ts';
import {
  CREATED_BY,
  newEnvironment,
  type PolicyDocument,
  type StoreDocument,
  type StoredEnvironment,
} from './store-document.ts';

/** A checked PUT body; `undefined`: not given, so a create takes the default, an update keeps. */
export interface EnvironmentInput {
  name: string;
  description: string;
  type: string;
  include_scaling?: boolean | undefined;
  require_provenance?: boolean | undefined;
  policies?: string[] | undefined;
  included_environments?: string[] | undefined;
}

type EnvironmentChange = { [K in keyof StoredEnvironment]?: StoredEnvironment[K] | undefined };

/** Compares by UTF-16 code units, so the order never depends on the machine's locale. */
export function byName(a: { name?: unknown }, b: { name?: unknown }): number {
  const [x, y] = [String(a.name), String(b.name)];
  return x < y ? -1 : x > y ? 1 : 0;
}

const copy = <T>(value: T): T => structuredClone(value);

/** The fields whose change moves `last_changed_at`. */
const WATCHED = 'type description include_scaling require_provenance policies tags';
const FIELDS = `${WATCHED} included_environments`.split(' ') as (keyof StoredEnvironment)[];

/** Sorted by name, copied, as an object by org (from entries: `__proto__` stays a key). */
function sortedByOrg<T extends { name: string }>(orgs: Map<string, T[]>): Record<string, T[]> {
  const sorted = [...orgs.keys()]
    .toSorted()
    .map((org) => [org, (orgs.get(org) ?? []).toSorted(byName).map(copy)]);
  return Object.fromEntries(sorted);
}

export class EnvironmentStore {
  readonly #now: () => number;
  readonly #changed: () => void;
  /** Per org, its environments, live and archived (never listed); one live one per name. */
  #environments = new Map<string, StoredEnvironment[]>();
  #policies = new Map<string, PolicyDocument[]>();
  /** `org/name` of the creates in flight, which hold their names. */
  readonly #creating = new Set<string>();

  constructor(nowSeconds: () => number, changed: () => void) {
    this.#now = nowSeconds;
    this.#changed = changed;
  }

  /** Holds `name` for a create while it waits; false when another create holds it. */
  async holding(org: string, name: string, wait: () => Promise<void>): Promise<boolean> {
    const key = `${org}/${name}`;
    if (this.#creating.has(key)) return false;
    this.#creating.add(key);
    await wait().finally(() => this.#creating.delete(key));
    return true;
  }

  /** Why `members` cannot be the members of `name` in `org`, naming each bad one; or undefined. */
  membersProblem(org: string, name: string, members: readonly string[]): string | undefined {
    const problems = members.flatMap((member) => {
      if (member === name) return [`'${name}' cannot include itself`];
      if (this.#live(org, member) !== undefined) return [];
      if (this.isArchived(org, member))
        return [`environment '${member}' in organization '${org}' has been archived`];
      return [`environment '${member}' does not exist in organization '${org}'`];
    });
    return problems.length === 0 ? undefined : problems.join('; ');
  }

  /** Creates or updates; kosli keeps the description for `""`, never stores `include_scaling`. */
  upsert(org: string, input: EnvironmentInput, profile: Profile): void {
    const existing = this.#live(org, input.name);
    const now = this.#now();
    const kosli = profile === 'kosli';
    const logical = input.type === 'logical';
    if (existing === undefined) {
      const list = this.#environments.get(org) ?? [];
      this.#environments.set(org, list);
      list.push(
        newEnvironment({ ...input, org, include_scaling: !kosli && input.include_scaling }, now),
      );
      return this.#changed();
    }
    const members = existing.type === 'logical' ? existing.included_environments : [];
    this.#apply(existing, now, {
      type: input.type,
      description: kosli && input.description === '' ? existing.description : input.description,
      include_scaling: kosli ? undefined : input.include_scaling,
      require_provenance: input.require_provenance,
      policies: input.policies,
      included_environments: logical ? (input.included_environments ?? members) : null,
      last_modified_at: now,
    });
  }

  /** Applies `change` to a live environment: a change moves both timestamps, none moves neither. */
  update(org: string, name: string, change: EnvironmentChange): StoredEnvironment | undefined {
    const environment = this.#live(org, name);
    if (environment === undefined) return undefined;
    const now = this.#now();
    if (this.#apply(environment, now, change)) environment.last_modified_at = now;
    return copy(environment);
  }

  /** Archives: out of the listing and every logical environment, its policies detached. */
  archive(org: string, name: string): void {
    const environment = this.#live(org, name);
    if (environment === undefined) return;
    this.#apply(environment, this.#now(), { policies: [], archived: true });
    this.#renameMember(org, name, undefined);
  }

  /** Renames, keeping all else, in the logical environments too; false when `to` is taken. */
  rename(org: string, from: string, to: string): boolean {
    const environment = this.#live(org, from);
    if (this.#live(org, to) !== undefined) return false;
    if (environment !== undefined) environment.name = to;
    this.#renameMember(org, from, to);
    return true;
  }

  isArchived(org: string, name: string): boolean {
    const all = this.#environments.get(org) ?? [];
    return this.#live(org, name) === undefined && all.some((env) => env.name === name);
  }

  list(org: string): StoredEnvironment[] {
    const all = this.#environments.get(org) ?? [];
    return all
      .filter((env) => !env.archived)
      .toSorted(byName)
      .map(copy);
  }

  get(org: string, name: string): StoredEnvironment | undefined {
    const env = this.#live(org, name);
    return env === undefined ? undefined : copy(env);
  }

  get size(): number {
    return [...this.#environments.values()].flat().filter((env) => !env.archived).length;
  }

  policies(org: string): PolicyDocument[] {
    return (this.#policies.get(org) ?? []).toSorted(byName).map(copy);
  }

  policy(org: string, name: string): PolicyDocument | undefined {
    const document = this.#policies.get(org)?.find((item) => item.name === name);
    return document === undefined ? undefined : copy(document);
  }

  /** A new version when `yaml` differs from the latest byte for byte; true when created. */
  savePolicy(org: string, name: string, description: string | undefined, yaml: string): boolean {
    const now = this.#now();
    const documents = this.#policies.get(org) ?? [];
    this.#policies.set(org, documents);
    const existing = documents.find((item) => item.name === name);
    const document = existing ?? { name, description: '', created_at: now, versions: [] };
    const before = JSON.stringify(document);
    const latest = document.versions.at(-1);
    document.description = description ?? document.description;
    if (latest?.policy_yaml !== yaml) {
      const version = (latest?.version ?? 0) + 1;
      document.versions.push({
        version,
        policy_yaml: yaml,
        timestamp: now,
        created_by: CREATED_BY,
      });
    }
    if (existing === undefined) documents.push(document);
    if (JSON.stringify(document) !== before) this.#changed();
    return existing === undefined;
  }

  toDocument(): StoreDocument {
    return {
      version: 1,
      orgs: sortedByOrg(this.#environments),
      policies: sortedByOrg(this.#policies),
    };
  }

  replace(stored: StoreDocument): void {
    this.#environments = new Map(Object.entries(copy(stored.orgs)));
    this.#policies = new Map(Object.entries(copy(stored.policies ?? {})));
    this.#changed();
  }

  #live(org: string, name: string): StoredEnvironment | undefined {
    return this.#environments.get(org)?.find((env) => !env.archived && env.name === name);
  }

  /** Whether a field changed; detaching the last policy makes compliance unknown. */
  #apply(environment: StoredEnvironment, now: number, change: EnvironmentChange): boolean {
    const given = Object.entries(change).filter(([, value]) => value !== undefined);
    const next: StoredEnvironment = { ...environment, ...copy(Object.fromEntries(given)) };
    const changed = FIELDS.some(
      (key) => JSON.stringify(environment[key] ?? []) !== JSON.stringify(next[key] ?? []),
    );
    const detached = (environment.policies ?? []).length > 0 && (next.policies ?? []).length === 0;
    Object.assign(environment, next, detached ? { state: null } : {});
    if (changed) environment.last_changed_at = now;
    this.#changed();
    return changed;
  }

  /** Renames (or, with `to` undefined, removes) a member in every logical environment of `org`. */
  #renameMember(org: string, from: string, to: string | undefined): void {
    for (const other of this.#environments.get(org) ?? []) {
      const members = other.included_environments;
      if (other.archived || members?.includes(from) !== true) continue;
      const renamed = members.flatMap((member) =>
        member !== from ? [member] : to === undefined ? [] : [to],
      );
      this.#apply(other, this.#now(), { included_environments: renamed });
    }
    this.#changed();
  }
}
