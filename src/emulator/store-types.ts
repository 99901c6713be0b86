/**
 * The shapes the emulator's store keeps: environments, policy documents and the store document
 * (GET/PUT /_emulator/store and the `--data` file).
 */

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

/** One immutable version of a policy document: its YAML as uploaded. */
export interface PolicyVersion {
  /** 1, 2, 3, ... in the order the versions were made. */
  version: number;
  policy_yaml: string;
  /** Epoch seconds (float) of the upload that made this version. */
  timestamp: number;
  created_by: string;
}

/** A policy document of an org, as GET /api/v2/policies/{org}/{name} shows it. */
export interface PolicyDocument {
  name: string;
  description: string;
  /** Epoch seconds (float) of the upload that created the document. */
  created_at: number;
  /** Oldest first; never empty. */
  versions: PolicyVersion[];
}

/** The whole store as JSON: GET/PUT /_emulator/store and the `--data` file. */
export interface StoreDocument {
  version: 1;
  orgs: Record<string, StoredEnvironment[]>;
  /**
   * Policy documents per org. The store always writes it; a document without it (written before
   * policies existed) loads with none.
   */
  policies?: Record<string, PolicyDocument[]>;
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
