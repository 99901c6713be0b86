/**
 * Which API envsync talks to: the contract's (`contract`: the two operations it shows, policies in
 * the PUT body) or the production service's (`kosli`: its published operations). `auto` reads it
 * from the first listing of a run: production answers a bare array or a paged envelope, the
 * contract `{"env": [...]}`.
 */
export const API_DIALECTS = ['contract', 'kosli'] as const;
export type ApiDialect = (typeof API_DIALECTS)[number];

/** The values of `--api-dialect`. */
export const DIALECT_SETTINGS = ['auto', ...API_DIALECTS] as const;
export type DialectSetting = (typeof DIALECT_SETTINGS)[number];

export type ListingShape = 'env' | 'array' | 'envelope';

export function dialectOfShape(shape: ListingShape): ApiDialect {
  return shape === 'env' ? 'contract' : 'kosli';
}

/** The dialect a run uses; `from`: `--api-dialect` named it, or `auto` read it from the listing. */
export interface ResolvedDialect {
  readonly dialect: ApiDialect;
  readonly from: 'setting' | 'listing';
}

/** The dialect for a setting and the first listing's shape (undefined: not known yet). */
export function resolveDialect(
  setting: DialectSetting,
  shape: ListingShape | undefined,
): ResolvedDialect | undefined {
  if (setting !== 'auto') return { dialect: setting, from: 'setting' };
  return shape === undefined ? undefined : { dialect: dialectOfShape(shape), from: 'listing' };
}

const SHAPE_WORDS: Readonly<Record<ListingShape, string>> = {
  env: 'an {"env": [...]} object',
  array: 'a bare array',
  envelope: 'a paged envelope',
};

/** One line that says which dialect a run uses and why. */
export function describeDialect(
  resolved: ResolvedDialect,
  shape: ListingShape | undefined,
): string {
  const seen = shape === undefined ? '' : `the listing is ${SHAPE_WORDS[shape]}`;
  if (resolved.from === 'listing') return `API dialect ${resolved.dialect} (auto: ${seen})`;
  const disagrees = shape !== undefined && dialectOfShape(shape) !== resolved.dialect;
  return `API dialect ${resolved.dialect} (--api-dialect${disagrees ? `, although ${seen}, which is ${dialectOfShape(shape)}'s shape` : ''})`;
}

/** The dialect a report or the status page shows, in words. */
export function dialectWords(resolved: ResolvedDialect): string {
  return `${resolved.dialect} (${resolved.from === 'setting' ? 'set by --api-dialect' : "auto: read from the listing's shape"})`;
}

/** The report's `dialect`, from what the client resolved (nothing before any listing). */
export function dialectOf(client: { dialect(): ResolvedDialect | undefined }): {
  dialect?: ResolvedDialect;
} {
  const resolved = client.dialect();
  return resolved === undefined ? {} : { dialect: resolved };
}
