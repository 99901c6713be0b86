/**
 * The policy documents of each org (kosli profile; docs/api-behaviour.md#policies). A document is
 * never deleted, and its versions are immutable: an upload whose YAML differs from the latest
 * version adds a version, one with the same YAML adds none.
 */
import type { PolicyDocument, PolicyVersion } from './store-types.ts';

/** A validated upload: `description` undefined when the payload left it out. */
export interface PolicyUpload {
  readonly name: string;
  readonly description: string | undefined;
  readonly policyYaml: string;
}

/**
 * What an upload did: `created` a document (version 1), added a `version`, changed only the
 * `description`, or nothing (`unchanged`).
 */
export type SaveOutcome = 'created' | 'version' | 'description' | 'unchanged';

/** The author the emulator writes on every version it makes (it has no users). */
export const CREATED_BY = 'envsync-emulator';

/** Compares by UTF-16 code units, like the listing of environments. */
function byName(a: PolicyDocument, b: PolicyDocument): number {
  if (a.name < b.name) return -1;
  if (a.name > b.name) return 1;
  return 0;
}

function copyDocument(document: PolicyDocument): PolicyDocument {
  return { ...document, versions: document.versions.map((version) => ({ ...version })) };
}

export class PolicyDocuments {
  readonly #orgs = new Map<string, Map<string, PolicyDocument>>();
  readonly #changed: () => void;

  /** `changed` is called after every change (the store's persistence). */
  constructor(changed: () => void) {
    this.#changed = changed;
  }

  /** The documents of `org`, sorted by name (copies). */
  list(org: string): PolicyDocument[] {
    return [...(this.#orgs.get(org)?.values() ?? [])].toSorted(byName).map(copyDocument);
  }

  /** One document (a copy), or undefined. */
  get(org: string, name: string): PolicyDocument | undefined {
    const document = this.#orgs.get(org)?.get(name);
    return document === undefined ? undefined : copyDocument(document);
  }

  has(org: string, name: string): boolean {
    return this.#orgs.get(org)?.has(name) === true;
  }

  /**
   * Creates the document or updates it: a new version when the YAML differs from the latest
   * version's (compared exactly, byte for byte), the description when one is given and differs.
   */
  save(org: string, upload: PolicyUpload, nowSeconds: number): SaveOutcome {
    let documents = this.#orgs.get(org);
    if (documents === undefined) {
      documents = new Map();
      this.#orgs.set(org, documents);
    }
    const version = (number: number): PolicyVersion => ({
      version: number,
      policy_yaml: upload.policyYaml,
      timestamp: nowSeconds,
      created_by: CREATED_BY,
    });
    const existing = documents.get(upload.name);
    if (existing === undefined) {
      documents.set(upload.name, {
        name: upload.name,
        description: upload.description ?? '',
        created_at: nowSeconds,
        versions: [version(1)],
      });
      this.#changed();
      return 'created';
    }
    const latest = existing.versions.at(-1);
    const newContent = latest?.policy_yaml !== upload.policyYaml;
    const newDescription =
      upload.description !== undefined && upload.description !== existing.description;
    if (!newContent && !newDescription) return 'unchanged';
    if (newDescription) existing.description = upload.description ?? existing.description;
    if (newContent) existing.versions.push(version((latest?.version ?? 0) + 1));
    this.#changed();
    return newContent ? 'version' : 'description';
  }

  /** Every org's documents, orgs and documents sorted by name (copies). */
  toDocument(): Record<string, PolicyDocument[]> {
    const orgs: Record<string, PolicyDocument[]> = {};
    for (const org of [...this.#orgs.keys()].toSorted()) {
      Object.defineProperty(orgs, org, {
        value: this.list(org),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return orgs;
  }

  /** Replaces every document (already validated), without calling `changed`. */
  replace(orgs: Readonly<Record<string, readonly PolicyDocument[]>>): void {
    this.#orgs.clear();
    for (const [org, documents] of Object.entries(orgs)) {
      this.#orgs.set(
        org,
        new Map(documents.map((document) => [document.name, copyDocument(document)])),
      );
    }
  }

  /** Forgets every document, without calling `changed`. */
  clear(): void {
    this.#orgs.clear();
  }
}
