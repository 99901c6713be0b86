/**
 * The secrets envsync reads from files, and which token each org's requests carry: its own, from
 * the token directory (`--token-dir`, a file named after the org), else the default token
 * (`--token-file` or ENVSYNC_TOKEN). Messages name the file as it was given, never a secret.
 * docs/security.md says what each source means.
 */
import * as fsPromises from 'node:fs/promises';
import path from 'node:path';
import { NAME_PATTERN } from '../core/names.ts';
import { ConfigError, NoTokenError, errorMessage } from '../runtime/errors.ts';
import { FileReadError, READ_LIMITS, readRegularText } from '../runtime/read-file.ts';

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

/** The settings that say where the tokens are. */
export interface TokenSettings {
  readonly tokenDir?: string | undefined;
  readonly tokenFile?: string | undefined;
}

/**
 * Reads a secret from a file: a regular file only, at most 64 KiB, within `timeoutMs` (the
 * command's --deadline), trimmed. `subject` names the file in every message, `fix` says what to do
 * when it is not a regular file.
 */
async function readSecret(
  kind: 'token' | 'secret',
  file: string,
  { subject, fix }: { readonly subject: string; readonly fix: string },
  timeoutMs: number | undefined,
): Promise<string> {
  const limit = `for a ${kind} file`;
  const maxBytes = READ_LIMITS[kind];
  return (await readRegularText(file, { subject, fix, maxBytes, limit, timeoutMs })).trim();
}

/**
 * Reads the secret a flag names (`--webhook-secret-file`, `--notify-secret-file`, holding `what`),
 * once at start.
 */
export async function readSecretFile(
  flag: string,
  file: string,
  what: string,
  timeoutMs?: number,
): Promise<string> {
  const subject = `${flag} ${file}`;
  const fix = `point ${flag} at a file, or leave the flag out`;
  const secret = await readSecret('secret', file, { subject, fix }, timeoutMs).catch(
    (error: unknown) => {
      if (!(error instanceof FileReadError && error.failure.kind === 'error')) throw error;
      throw new ConfigError(`${error.message}; pass a readable file or leave the flag out`);
    },
  );
  if (secret === '') throw new ConfigError(`${subject} is empty; put the ${what} in it`);
  return secret;
}

/** RFC 6750's b64token: the characters a Bearer token may be made of (section 2.1). */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The checks every token passes, whatever its source (named in the messages, which never show
 * the token); checked at every read, so a rotated token that is malformed is refused before any
 * request.
 */
function checkToken(token: string, source: string): string {
  // A value copied from an Authorization header: envsync writes the scheme itself.
  if (/^bearer\s/i.test(token)) {
    throw new ConfigError(
      `${source}: the token starts with "Bearer ": drop the Bearer prefix, envsync adds it (the token is not shown)`,
    );
  }
  // oxlint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(token)) {
    throw new ConfigError(`${source}: the token contains whitespace or control characters`);
  }
  if (!BEARER_TOKEN.test(token)) {
    throw new ConfigError(
      `${source}: the token has characters a Bearer token cannot hold (RFC 6750 allows letters, digits and - . _ ~ + /, then = padding); check the secret (its value is not shown)`,
    );
  }
  return token;
}

/** A token file (`--token-file`, or one of `--token-dir`'s), read as readSecret reads, checked. */
async function readTokenFile(
  file: string,
  source: string,
  fix: string,
  timeoutMs: number | undefined,
): Promise<string> {
  const token = await readSecret('token', file, { subject: source, fix }, timeoutMs);
  if (token === '') throw new ConfigError(`${source} is empty`);
  return checkToken(token, source);
}

/**
 * Reads the API token: `--token-file` / ENVSYNC_TOKEN_FILE (read at each call, so a rotated
 * Secret is picked up), else ENVSYNC_TOKEN. A relative token file is found from `cwd`, the
 * command's working directory.
 */
export async function readToken(
  tokenFile: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  { timeoutMs }: { readonly timeoutMs?: number | undefined } = {},
): Promise<string> {
  if (tokenFile !== undefined) {
    const file = path.resolve(cwd, tokenFile);
    return readTokenFile(
      file,
      `token file ${tokenFile}`,
      'point --token-file at a file',
      timeoutMs,
    );
  }
  const token = env['ENVSYNC_TOKEN']?.trim();
  if (token === undefined || token === '') {
    throw new ConfigError(
      'no API token: set ENVSYNC_TOKEN, or --token-file PATH (env ENVSYNC_TOKEN_FILE)',
    );
  }
  return checkToken(token, 'ENVSYNC_TOKEN');
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
 * Reads the tokens of a pass (the daemon, before each one) or of a command: without
 * `--token-dir`, the one token of readToken for every org. With it, each file of the directory
 * named like an org holds that org's token, and the default token is optional: an org with no
 * file uses it, or fails without it (tokenFor). A Kubernetes secret volume holds `..data` and
 * dated dot-directories beside one link per key: names that start with a dot, or that no org may
 * have, are never read. A relative directory is found from `cwd`.
 */
export async function readTokens(
  settings: TokenSettings,
  env: NodeJS.ProcessEnv,
  cwd: string,
  within: { readonly timeoutMs?: number | undefined } = {},
): Promise<TokenSet> {
  const { tokenDir: dir, tokenFile } = settings;
  const fallbackSource = defaultSource(tokenFile);
  if (dir === undefined)
    return oneToken(await readToken(tokenFile, env, cwd, within), fallbackSource);
  const root = path.resolve(cwd, dir);
  const names = await fsPromises.readdir(root).catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(`token directory ${dir} cannot be read (${error.code ?? 'error'})`);
  });
  const orgs = names.filter((name) => !name.startsWith('.') && NAME_PATTERN.test(name)).sort();
  const read = async (org: string): Promise<SourcedToken | TokenProblem> => {
    try {
      const file = path.join(root, org);
      const source = `token file ${path.join(dir, org)}`;
      const fix = `make it a file that holds ${org}'s token`;
      return {
        token: await readTokenFile(file, source, fix, within.timeoutMs),
        source: `token-dir:${org}`,
      };
    } catch (error) {
      // That org fails, with why; never its token.
      return { error: errorMessage(error) };
    }
  };
  const given = tokenFile !== undefined || (env['ENVSYNC_TOKEN'] ?? '').trim() !== '';
  return {
    dir,
    orgs: new Map(await Promise.all(orgs.map(async (org) => [org, await read(org)] as const))),
    fallback: given
      ? { token: await readToken(tokenFile, env, cwd, within), source: fallbackSource }
      : undefined,
  };
}

/**
 * The token `org`'s requests carry, or why it has none: a file of its own that cannot be used
 * fails the org, never falling back to the default token (which may reach further).
 */
export function tokenFor(set: TokenSet, org: string): SourcedToken | TokenProblem {
  return (
    set.orgs.get(org) ??
    set.fallback ?? {
      error: `no token: no file ${org} in token directory ${set.dir ?? '(none)'}, and no default token (--token-file or ENVSYNC_TOKEN)`,
    }
  );
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

/**
 * The token of each org's requests, for the client: an org with none throws NoTokenError, so
 * that none of its requests is sent.
 */
export function tokenGetter(set: TokenSet): (org: string) => string {
  return (org) => {
    const chosen = tokenFor(set, org);
    if ('error' in chosen) throw new NoTokenError(chosen.error);
    return chosen.token;
  };
}
