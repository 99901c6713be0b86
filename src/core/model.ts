/**
 * The pure model of envsync: what the manifests want, what the service holds, what must change.
 * Nothing here does I/O, reads the clock or imports a node: module. The fields of an environment
 * are declared once, in fields.ts.
 */
import type { ApiDialect } from './dialect.ts';
import type { FieldName, FieldValue, FieldValues, ListedField, StringMap } from './fields.ts';

export type { FieldName, FieldValue } from './fields.ts';

/**
 * Where an environment was declared: the file, the YAML document's index in it and the
 * environment's index in `environments` (its YAML path is `environments[index]`), and the line and
 * column of its entry.
 */
export interface SourceLocation {
  readonly file: string;
  /** Index of the YAML document within the file (0-based). */
  readonly document: number;
  /** Index in the document's `environments` list. */
  readonly index: number;
  /** 1-based, when known. */
  readonly line?: number;
  readonly column?: number;
}

/** One environment as the manifests declare it, with defaults filled in and values normalized. */
export interface DesiredEnvironment extends FieldValues {
  readonly name: string;
  /**
   * The name the environment had before (`renamed_from`): while the listing has that name and not
   * this one, the plan renames it, keeping its history. Not a field: it is never sent in a PUT.
   */
  readonly renamedFrom?: string | undefined;
  readonly source?: SourceLocation;
}

/**
 * One environment as the listing shows it. A field the listing does not carry is undefined (the
 * spec's listing carries neither include_scaling nor policies; the production service's does).
 */
export type ObservedEnvironment = { readonly name: string } & Pick<FieldValues, ListedField> & {
    readonly [K in Exclude<FieldName, ListedField>]?: FieldValues[K] | undefined;
  };

/**
 * What envsync last sent for the fields a listing may not carry (fields.ts, RECORDED_FIELDS).
 */
export type AppliedRecord = { readonly [K in FieldName]?: FieldValues[K] | undefined } & {
  /**
   * The desired environment at its last successful apply, hashed (drift.ts, `appliedFingerprint`):
   * a change while the manifest still says the same is drift. Undefined when unknown (never
   * applied since envsync remembered it, or a state file from before it did).
   */
  readonly fingerprint?: number | undefined;
  /**
   * Set when a PUT of exactly `desired` left the listing at exactly `observed`: the service ignored
   * part of it (docs/api-behaviour.md). Until either side moves, do not send it again.
   */
  readonly notConverged?: { readonly desired: string; readonly observed: string } | undefined;
};

export interface FieldDiff {
  /** null for a create, and for a field the service does not show (`notShown`). */
  readonly from: FieldValue | null;
  readonly to: FieldValue;
  /**
   * The listing does not show the field and the state file has no record of it: what the service
   * holds is unknown, and a sync sends `to`.
   */
  readonly notShown?: true;
}

/** Some fields' values (an environment's, or those a PUT carries unchanged). */
export type FieldSlotValues = { readonly [K in FieldName]?: FieldValues[K] | undefined };

/** Field-level differences, in the registry's order. */
export type FieldDiffs = Partial<Record<FieldName, FieldDiff>>;

/**
 * `rename`: the listing has the environment under its `renamed_from` name and not under its own;
 * the change renames it (keeping its history), then sends whatever else differs.
 */
export type ChangeAction = 'create' | 'update' | 'unverified' | 'rename';

/**
 * Why a change is proposed: `drift` when the service moved while the manifest stayed as envsync
 * last applied it (drift.ts decides), `change` for everything else.
 */
export type ChangeCause = 'drift' | 'change';

/** One change the plan proposes for one environment. */
export interface Change {
  readonly action: ChangeAction;
  readonly cause: ChangeCause;
  readonly name: string;
  /** Field-level differences (for create: every field it sends, from null). */
  readonly fields: FieldDiffs;
  /**
   * Fields that could not be compared (listing does not carry them, no record in the state); each
   * is in `fields` too, marked `notShown`, with the value a sync sends.
   */
  readonly unknownFields: readonly FieldName[];
  /** What the manifests declare: the PUT sends these values. */
  readonly desired: DesiredEnvironment;
  /**
   * What the listing showed for the fields the manifests leave out: the PUT carries them
   * unchanged (empty for a create).
   */
  readonly kept: FieldSlotValues;
  /**
   * The requests that send it, in the plan's dialect (requests.ts): whether a PUT, and the
   * operations of their own for fields sent so.
   */
  readonly requests: ChangeRequests;
  /**
   * True when this exact change was applied before and did not take: the planner reports it, the
   * applier does not send it again.
   */
  readonly knownNotConverged: boolean;
  /** For a `rename`: the name the listing has it under, which the change renames. */
  readonly renamedFrom?: string | undefined;
  /**
   * For a `create` of an environment declared `renamed_from` a name the listing does not have
   * either: that name, so the plan can say it was not found.
   */
  readonly renameNotFound?: string | undefined;
}

/** Policies to attach (one POST) and to detach (one DELETE); at least one of the two non-empty. */
export interface PolicyRequests {
  readonly attach: readonly string[];
  readonly detach: readonly string[];
}

/** Tags to set (new or changed) and to remove, in one PATCH; at least one of the two non-empty. */
export interface TagRequests {
  readonly set: StringMap;
  readonly remove: readonly string[];
}

/**
 * The requests one change sends, in this order: the rename when present (from that name to the
 * change's), the PUT when `put`, then the attach, the detach and the tags' PATCH when present.
 */
export interface ChangeRequests {
  /** The name to rename from (`PUT .../{from}/rename`), before anything else. */
  readonly rename?: string;
  readonly put: boolean;
  readonly policies?: PolicyRequests;
  readonly tags?: TagRequests;
}

/** Why envsync owns an environment (ownership.ts): the state file's record of it, its ownership tag. */
export type OwnedBy = 'state' | 'tag';

/** An environment the org no longer declares that envsync owns: `prune` archives it. */
export interface ArchivePlan {
  readonly name: string;
  /** Why envsync owns it (ownership.ts): its record in the state file, its ownership tag. */
  readonly ownedBy: readonly OwnedBy[];
}

/** The plan for one organization: plain data, printable and comparable. */
export interface OrgPlan {
  readonly org: string;
  /** The API dialect the plan was made for: it decides each change's requests. */
  readonly dialect: ApiDialect;
  readonly changes: readonly Change[];
  readonly unchanged: readonly string[];
  /** Listed environments the manifests do not declare and that are not archived: left alone. */
  readonly unmanaged: readonly string[];
  /**
   * Present when the org's manifests say `prune: true`: the environments to archive (sent after
   * every other change of the org). Absent when prune is off.
   */
  readonly archives?: readonly ArchivePlan[] | undefined;
}

/** Records by environment name (a map with no prototype: see plain-object.ts, emptyMap). */
export type Records = Record<string, AppliedRecord>;

/** The last applied record of an environment, by name (the state file's). */
export type AppliedLookup = (name: string) => AppliedRecord | undefined;
