/**
 * Which token each org's requests carry: its own, from the token directory (`--token-dir`, a file
 * named after the org), else the default token (`--token-file` or ENVSYNC_TOKEN). Pure: the files
 * are read in config/token-dir.ts. docs/security.md says what each source means.
 */

/** A token, and where it came from as `/status` shows it (never the token). */
export interface SourcedToken {
  readonly token: string;
  /** `token-dir:ORG`, `token-file`, `env ENVSYNC_TOKEN` or `emulator`. */
  readonly source: string;
}

/** An org whose file in the token directory cannot be used: why (never the token). */
export interface TokenProblem {
  readonly error: string;
}

/** The tokens of one pass (the daemon) or one command, read at its start. */
export interface TokenSet {
  /** The token directory as it was given, for messages; undefined without `--token-dir`. */
  readonly dir: string | undefined;
  /** Each org with a file in the token directory: its token, or why it cannot be used. */
  readonly orgs: ReadonlyMap<string, SourcedToken | TokenProblem>;
  /** The default token, for every org without a file; undefined when none was given. */
  readonly fallback: SourcedToken | undefined;
}

/** The source of the default token read from `--token-file` or ENVSYNC_TOKEN. */
export function defaultSource(tokenFile: string | undefined): string {
  return tokenFile === undefined ? 'env ENVSYNC_TOKEN' : 'token-file';
}

/** One token for every org (no token directory). */
export function oneToken(token: string, source: string): TokenSet {
  return { dir: undefined, orgs: new Map(), fallback: { token, source } };
}

/**
 * The token `org`'s requests carry, or why it has none: a file of its own that cannot be used
 * fails the org, never falling back to the default token (which may reach further).
 */
export function tokenFor(set: TokenSet, org: string): SourcedToken | TokenProblem {
  const own = set.orgs.get(org);
  if (own !== undefined) return own;
  if (set.fallback !== undefined) return set.fallback;
  return {
    error: `no token: no file ${org} in token directory ${set.dir ?? '(none)'}, and no default token (--token-file or ENVSYNC_TOKEN)`,
  };
}

/** Where `org`'s token came from, or null when it has none (its error says why). */
export function tokenSourceOf(set: TokenSet, org: string): string | null {
  const chosen = tokenFor(set, org);
  return 'token' in chosen ? chosen.source : null;
}

/** Every token of the set: each is masked by every sink. */
export function tokensOf(set: TokenSet): string[] {
  const tokens = [...set.orgs.values()].flatMap((entry) => ('token' in entry ? [entry.token] : []));
  if (set.fallback !== undefined) tokens.push(set.fallback.token);
  return [...new Set(tokens)];
}
