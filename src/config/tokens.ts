/** The secrets envsync reads, and which token each org's requests carry (docs/security.md). */
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

/** Why an org's file in the token directory cannot be used (never the token). */
export type TokenProblem = { readonly error: string };

/** The tokens of one pass (the daemon) or one command, read at its start. */
export interface TokenSet {
  /** The token directory as it was given; undefined without `--token-dir`. */
  readonly dir: string | undefined;
  readonly orgs: ReadonlyMap<string, SourcedToken | TokenProblem>;
  /** The default token, for every org without a file. */
  readonly fallback: SourcedToken | undefined;
}

/** A regular file of at most 64 KiB, read within `timeoutMs` (the --deadline), trimmed. */
async function readSecret(
  kind: 'token' | 'secret',
  file: string,
  subject: string,
  fix: string,
  timeoutMs: number | undefined,
): Promise<string> {
  const limit = `for a ${kind} file`;
  const maxBytes = READ_LIMITS[kind];
  return (await readRegularText(file, { subject, fix, maxBytes, limit, timeoutMs })).trim();
}

/** Reads the secret a flag names (`--webhook-secret-file`, holding `what`), once at start. */
export async function readSecretFile(
  flag: string,
  file: string,
  what: string,
  timeoutMs?: number,
): Promise<string> {
  const subject = `${flag} ${file}`;
  const fix = `point ${flag} at a file, or leave the flag out`;
  const secret = await readSecret('secret', file, subject, fix, timeoutMs).catch((error) => {
    if (!(error instanceof FileReadError && error.failure.kind === 'error')) throw error;
    throw new ConfigError(`${error.message}; pass a readable file or leave the flag out`);
  });
  if (secret === '') throw new ConfigError(`${subject} is empty; put the ${what} in it`);
  return secret;
}

/** RFC 6750's b64token: the characters a Bearer token may be made of (section 2.1). */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Checks a token at every read, so that a malformed rotated token is refused before a request. */
function checkToken(token: string, source: string): string {
  // A value copied from an Authorization header: envsync writes the scheme itself.
  if (/^bearer\s/i.test(token)) {
    throw new ConfigError(
      `${source}: the token starts with "Bearer ": drop the Bearer prefix, envsync adds it (the token is not shown)`,
    );
  }
  // oxlint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(token))
    throw new ConfigError(`${source}: the token contains whitespace or control characters`);
  if (!BEARER_TOKEN.test(token)) {
    throw new ConfigError(
      `${source}: the token has characters a Bearer token cannot hold (RFC 6750 allows letters, digits and - . _ ~ + /, then = padding); check the secret (its value is not shown)`,
    );
  }
  return token;
}

async function readTokenFile(
  file: string,
  source: string,
  fix: string,
  timeoutMs: number | undefined,
): Promise<string> {
  const token = await readSecret('token', file, source, fix, timeoutMs);
  if (token === '') throw new ConfigError(`${source} is empty`);
  return checkToken(token, source);
}

/** The API token: `--token-file` (read at each call, for a rotated Secret), else ENVSYNC_TOKEN. */
export async function readToken(
  tokenFile: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  { timeoutMs }: { readonly timeoutMs?: number | undefined } = {},
): Promise<string> {
  if (tokenFile !== undefined) {
    const fix = 'point --token-file at a file';
    return readTokenFile(path.resolve(cwd, tokenFile), `token file ${tokenFile}`, fix, timeoutMs);
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
 * The tokens of a pass or a command. In a `--token-dir`, only names an org may have are read (a
 * Kubernetes secret volume's `..data` and dated folders are not); the default token is optional.
 */
export async function readTokens(
  settings: { readonly tokenDir?: string | undefined; readonly tokenFile?: string | undefined },
  env: NodeJS.ProcessEnv,
  cwd: string,
  within: { readonly timeoutMs?: number | undefined } = {},
): Promise<TokenSet> {
  const { tokenDir: dir, tokenFile } = settings;
  const fallback = async () => ({
    token: await readToken(tokenFile, env, cwd, within),
    source: defaultSource(tokenFile),
  });
  if (dir === undefined) return { dir, orgs: new Map(), fallback: await fallback() };
  const root = path.resolve(cwd, dir);
  const names = await fsPromises.readdir(root).catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(`token directory ${dir} cannot be read (${error.code ?? 'error'})`);
  });
  const orgs = names.filter((name) => !name.startsWith('.') && NAME_PATTERN.test(name)).sort();
  const read = async (org: string): Promise<SourcedToken | TokenProblem> => {
    const source = `token file ${path.join(dir, org)}`;
    const fix = `make it a file that holds ${org}'s token`;
    return readTokenFile(path.join(root, org), source, fix, within.timeoutMs).then(
      (token) => ({ token, source: `token-dir:${org}` }),
      (error: unknown) => ({ error: errorMessage(error) }),
    );
  };
  const given = tokenFile !== undefined || (env['ENVSYNC_TOKEN'] ?? '').trim() !== '';
  return {
    dir,
    orgs: new Map(await Promise.all(orgs.map(async (org) => [org, await read(org)] as const))),
    fallback: given ? await fallback() : undefined,
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

/** Where `org`'s token came from, or null when it has none. */
export function tokenSourceOf(set: TokenSet, org: string): string | null {
  const chosen = tokenFor(set, org);
  return 'token' in chosen ? chosen.source : null;
}

/** Every token of the set, once each: every sink masks them. */
export function tokensOf(set: TokenSet): string[] {
  const tokens = [...set.orgs.values()].flatMap((entry) => ('token' in entry ? [entry.token] : []));
  if (set.fallback !== undefined) tokens.push(set.fallback.token);
  return [...new Set(tokens)];
}

/** Each org's token, for the client: an org with none throws NoTokenError, and sends nothing. */
export function tokenGetter(set: TokenSet): (org: string) => string {
  return (org) => {
    const chosen = tokenFor(set, org);
    if ('error' in chosen) throw new NoTokenError(chosen.error);
    return chosen.token;
  };
}
