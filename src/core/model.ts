/** The pure model: what the manifests want, what the service holds, what must change. */
import type { ApiDialect } from './dialect.ts';
import type { FieldName, FieldValue, FieldValues, ListedField, StringMap } from './fields.ts';

export type { FieldName, FieldValue } from './fields.ts';

/** Where an environment was declared: file, YAML document, `environments` index, line, column. */
export interface SourceLocation {
  readonly file: string;
  readonly document: number;
  readonly index: number;
  readonly line?: number;
  readonly column?: number;
}

export interface DesiredEnvironment extends FieldValues {
  readonly name: string;
  /** `renamed_from`: the listed environment of that name is renamed. Never sent in a PUT. */
  readonly renamedFrom?: string | undefined;
  readonly source?: SourceLocation;
}

/** The listing's `state`: `true`, `false`, `null`; not listed, not shown. */
export type Compliance = 'compliant' | 'non-compliant' | 'unknown';

/** A field the listing does not carry is undefined. */
export type ObservedEnvironment = { readonly name: string } & Pick<FieldValues, ListedField> & {
    readonly [K in Exclude<FieldName, ListedField>]?: FieldValues[K] | undefined;
  } & { readonly compliance?: Compliance };

export type FieldSlotValues = { readonly [K in FieldName]?: FieldValues[K] | undefined };

/** What envsync last sent for the fields a listing may not carry (RECORDED_FIELDS). */
export type AppliedRecord = FieldSlotValues & {
  /** The desired environment at its last successful apply (`appliedFingerprint`), if known. */
  readonly fingerprint?: number | undefined;
  /** Made only by seeing the service as declared: drift is known, but envsync does not own it. */
  readonly seen?: true | undefined;
  /**
   * A PUT of exactly `desired` left the listing at exactly `observed`: the service ignored part of
   * it (docs/api-behaviour.md). Until either side moves, it is not sent again.
   */
  readonly notConverged?: { readonly desired: string; readonly observed: string } | undefined;
};

export interface FieldDiff {
  /** null for a create, and for a field the service does not show (`notShown`). */
  readonly from: FieldValue | null;
  readonly to: FieldValue;
  /** Neither the listing nor the state file knows what the service holds: a sync sends `to`. */
  readonly notShown?: true;
}

/** In the registry's order. */
export type FieldDiffs = Partial<Record<FieldName, FieldDiff>>;

/** `unverified`: nothing is known to differ, but a declared value was never seen. */
export type ChangeAction = 'create' | 'update' | 'unverified' | 'rename';

/** `drift`: the service moved while the manifest stayed as last applied (`changeCause`). */
export type ChangeCause = 'drift' | 'change';

export interface Change {
  readonly action: ChangeAction;
  readonly cause: ChangeCause;
  readonly name: string;
  readonly fields: FieldDiffs;
  /** The fields `notShown`. */
  readonly unknownFields: readonly FieldName[];
  readonly desired: DesiredEnvironment;
  /** What the listing showed for the fields the manifests leave out: the PUT carries them. */
  readonly kept: FieldSlotValues;
  readonly requests: ChangeRequests;
  /** This exact change was sent before and did not take: it is not sent again. */
  readonly knownNotConverged: boolean;
  /** For a `rename`: the name the listing has it under. */
  readonly renamedFrom?: string | undefined;
  /** A `create` declared `renamed_from` a name the listing does not have either. */
  readonly renameNotFound?: string | undefined;
}

/** One POST to attach, one DELETE to detach; one of the two non-empty. */
export interface PolicyRequests {
  readonly attach: readonly string[];
  readonly detach: readonly string[];
}

/** One PATCH; one of the two non-empty. */
export interface TagRequests {
  readonly set: StringMap;
  readonly remove: readonly string[];
}

/** What one change sends, in order: rename, PUT, the PATCH of `patch`, attach, detach, tags. */
export interface ChangeRequests {
  readonly rename?: string;
  readonly put: boolean;
  readonly patch?: readonly FieldName[];
  readonly policies?: PolicyRequests;
  readonly tags?: TagRequests;
}

export type OwnedBy = 'state' | 'tag';

/** An environment the org no longer declares that envsync owns: `prune` archives it. */
export interface ArchivePlan {
  readonly name: string;
  readonly ownedBy: readonly OwnedBy[];
}

export interface OrgPlan {
  readonly org: string;
  readonly dialect: ApiDialect;
  readonly changes: readonly Change[];
  readonly unchanged: readonly string[];
  /** Listed, not declared and not archived: left alone. */
  readonly unmanaged: readonly string[];
  /** Declared, and listed only as a placeholder (or renamed from one): nothing is compared. */
  readonly unknown?: readonly string[];
  /** By declared name, of those listed with a `state`. */
  readonly compliance?: Readonly<Record<string, Compliance>>;
  /** Present under `prune: true`: sent after every other change. */
  readonly archives?: readonly ArchivePlan[] | undefined;
}

/** By environment name (a map with no prototype: `emptyMap`). */
export type Records = Record<string, AppliedRecord>;

export type AppliedLookup = (name: string) => AppliedRecord | undefined;
