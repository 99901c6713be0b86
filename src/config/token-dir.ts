import path from 'node:path';
import { NAME_PATTERN } from '../core/names.ts';
import {
  defaultSource,
  oneToken,
  tokenFor,
  type SourcedToken,
  type TokenProblem,
  type TokenSet,
} from './org-tokens.ts';
import * as fsPromises from 'node:fs/promises';
import { ConfigError, NoTokenError, errorMessage } from '../runtime/errors.ts';
import { readToken, readTokenFile } from './token.ts';

/** The settings that say where the tokens are. */
export interface TokenSettings {
  readonly tokenDir?: string | undefined;
  readonly tokenFile?: string | undefined;
}

/**
 * Reads the tokens of a pass (the daemon, before each one) or of a command: without
 * `--token-dir`, the one token of readToken for every org. With it, each file of the directory
 * named like an org holds that org's token, and the default token (`--token-file` or
 * ENVSYNC_TOKEN) is optional: an org with no file uses it, or fails without it (tokenFor). A
 * relative directory is found from `cwd`; messages name it as it was given, and never a token.
 */
export async function readTokens(
  settings: TokenSettings,
  env: NodeJS.ProcessEnv,
  cwd: string,
  within: { readonly timeoutMs?: number | undefined } = {},
): Promise<TokenSet> {
  const { tokenDir, tokenFile } = settings;
  const source = defaultSource(tokenFile);
  if (tokenDir === undefined) return oneToken(await readToken(tokenFile, env, cwd, within), source);
  const orgs = await readTokenDir(tokenDir, cwd, within.timeoutMs);
  const given = tokenFile !== undefined || (env['ENVSYNC_TOKEN'] ?? '').trim() !== '';
  const fallback = given
    ? { token: await readToken(tokenFile, env, cwd, within), source }
    : undefined;
  return { dir: tokenDir, orgs, fallback };
}

/**
 * Every file of `dir` named like an org, read and checked as readToken checks a token file. A
 * Kubernetes secret volume holds `..data` and dated dot-directories beside one link per key:
 * names that start with a dot, or that no org may have, are never read.
 */
async function readTokenDir(
  dir: string,
  cwd: string,
  timeoutMs: number | undefined,
): Promise<Map<string, SourcedToken | TokenProblem>> {
  const root = path.resolve(cwd, dir);
  let names: string[];
  try {
    names = await fsPromises.readdir(root);
  } catch (error) {
    throw new ConfigError(
      `token directory ${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const named = names.filter((name) => !name.startsWith('.') && NAME_PATTERN.test(name)).sort();
  return new Map(
    await Promise.all(
      named.map(async (org) => [org, await readOrgToken(dir, root, org, timeoutMs)] as const),
    ),
  );
}

/** One org's file: its token, or why it cannot be used (that org fails; never its token shown). */
async function readOrgToken(
  dir: string,
  root: string,
  org: string,
  timeoutMs: number | undefined,
): Promise<SourcedToken | TokenProblem> {
  try {
    const token = await readTokenFile(path.join(root, org), `token file ${path.join(dir, org)}`, {
      fix: `make it a file that holds ${org}'s token`,
      timeoutMs,
    });
    return { token, source: `token-dir:${org}` };
  } catch (error) {
    return { error: errorMessage(error) };
  }
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
