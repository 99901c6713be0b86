/**
 * The pure model of envsync: what the manifests want, what the service holds, what must change.
 * Nothing here does I/O, reads the clock or imports a node: module.
 */

/**
 * Where an environment was declared: the file, the YAML document's index in it and the
 * environment's index in `environments` (its YAML path is `environments[index]`).
 * Line and column are filled in when the parser that read the file tracked them (the slow,
 * position-tracking path); otherwise they are looked up only when a message needs them.
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

/** One environment as the manifests declare it, with defaults filled in. */
export interface DesiredEnvironment {
  readonly name: string;
  readonly type: string;
  readonly description: string;
  readonly includeScaling: boolean;
  /** Sorted and without duplicates: order carries no meaning. */
  readonly policies: readonly string[];
  readonly source?: SourceLocation;
}

/**
 * One environment as the listing shows it. `includeScaling` and `policies` are undefined when the
 * listing does not carry them (the spec's listing does not; the production service's does).
 */
export interface ObservedEnvironment {
  readonly name: string;
  readonly type: string;
  readonly description: string;
  readonly includeScaling?: boolean | undefined;
  readonly policies?: readonly string[] | undefined;
}

/** What envsync last sent for the fields the listing may not carry. */
export interface AppliedRecord {
  readonly includeScaling: boolean;
  readonly policies: readonly string[];
  /**
   * Set when a PUT of exactly `desired` left the listing at exactly `observed`: the service ignored
   * part of it (see observed-behaviour.md). Until either side moves, do not send it again.
   */
  readonly notConverged?: { readonly desired: string; readonly observed: string } | undefined;
}

export type FieldName = 'type' | 'description' | 'include_scaling' | 'policies';

export type FieldValue = string | boolean | readonly string[];

export interface FieldDiff {
  readonly from: FieldValue | null;
  readonly to: FieldValue;
}

export type ChangeAction = 'create' | 'update' | 'unverified';

/** One change the plan proposes for one environment. */
export interface Change {
  readonly action: ChangeAction;
  readonly name: string;
  /** Field-level differences (for create: every field, from null). */
  readonly fields: Partial<Record<FieldName, FieldDiff>>;
  /** Fields that could not be compared (listing does not carry them, no record in the state). */
  readonly unknownFields: readonly FieldName[];
  /** The full body to PUT. */
  readonly desired: DesiredEnvironment;
  /**
   * True when this exact change was applied before and did not take: the planner reports it, the
   * applier does not send it again.
   */
  readonly knownNotConverged: boolean;
}

/** The plan for one organization: plain data, printable and comparable. */
export interface OrgPlan {
  readonly org: string;
  readonly changes: readonly Change[];
  readonly unchanged: readonly string[];
  readonly unmanaged: readonly string[];
}
