/**
 * The emulator's in-memory store: environments per org, with the upsert rules of both profiles,
 * and the kosli profile's policy documents (policy-store.ts). All operations are synchronous, so
 * concurrent requests cannot interleave inside one.
 */
import type { Profile } from './options.ts';
import { PolicyDocuments } from './policy-store.ts';
import type { EnvironmentInput, StoreDocument, StoredEnvironment } from './store-types.ts';
import { byName, copyEnvironment, membersAfter, sameList, sameTags } from './environment-values.ts';

export type {
  EnvironmentInput,
  PolicyDocument,
  PolicyVersion,
  StoreDocument,
  StoredEnvironment,
} from './store-types.ts';

/** What the tags and policy routes may change on an environment (tags.ts, policies.ts). */
export type EnvironmentPatch = Partial<Pick<StoredEnvironment, 'tags' | 'policies'>>;

/** Why a rename did not happen: no live environment of the old name, or one of the new. */
export type RenameRefusal = 'missing' | 'taken';

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

export class EnvironmentStore {
  readonly #orgs = new Map<string, OrgEntries>();
  readonly #listeners = new Set<() => void>();
  /** The org's policy documents, kept and persisted with the environments. */
  readonly policies = new PolicyDocuments(() => this.#changed());

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

  /**
   * Applies the patch `change` returns for the live environment `name`: undefined when there is
   * none, else whether anything changed. A change moves `last_modified_at` and `last_changed_at`;
   * a patch that changes nothing (or none) moves neither.
   */
  update(
    org: string,
    name: string,
    change: (env: StoredEnvironment) => EnvironmentPatch | undefined,
    nowSeconds: number,
  ): boolean | undefined {
    const environment = this.#orgs.get(org)?.live.get(name);
    if (environment === undefined) return undefined;
    const patch = change(copyEnvironment(environment));
    const tags = patch?.tags;
    const policies = patch?.policies;
    const changed =
      (tags !== undefined && !sameTags(environment.tags, tags)) ||
      (policies !== undefined && !sameList(environment.policies, policies));
    if (!changed) return false;
    if (tags !== undefined) environment.tags = { ...tags };
    if (policies !== undefined) environment.policies = policies === null ? null : [...policies];
    environment.last_modified_at = nowSeconds;
    environment.last_changed_at = nowSeconds;
    this.#changed();
    return true;
  }

  /**
   * Renames the live environment `from` to `to`, keeping every field, tag, policy and timestamp.
   * Logical environments that include it name it by its new name (their `last_changed_at` moves).
   */
  rename(org: string, from: string, to: string, nowSeconds: number): RenameRefusal | undefined {
    const entries = this.#orgs.get(org);
    const environment = entries?.live.get(from);
    if (entries === undefined || environment === undefined) return 'missing';
    if (entries.live.has(to)) return 'taken';
    entries.live.delete(from);
    environment.name = to;
    entries.live.set(to, environment);
    for (const other of entries.live.values()) {
      const members = other.included_environments;
      if (members?.includes(from) !== true) continue;
      other.included_environments = members.map((member) => (member === from ? to : member));
      other.last_changed_at = nowSeconds;
    }
    this.#changed();
    return undefined;
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
    return { version: 1, orgs, policies: this.policies.toDocument() };
  }

  /** Replaces the whole store with `document` (already validated; see validate-store-document.ts). */
  replace(document: StoreDocument): void {
    this.#orgs.clear();
    this.policies.replace(document.policies ?? {});
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
    this.policies.clear();
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
