import { createHash } from 'node:crypto';
import type { PassOrg } from './daemon-memory.ts';
import { tokenFor, tokenGetter, tokenSourceOf, tokensOf, type TokenSet } from '../config/tokens.ts';
import { MAX_ENVIRONMENT_ROWS } from './daemon-status.ts';
import type { OrgManifest } from '../manifests/load.ts';

/** An org's manifests as the pass's decisions see them: its files, and its content as text. */
export function passOrg(org: OrgManifest): PassOrg {
  const environments = org.environments.map(({ source: _source, ...env }) => env);
  // Policy documents count too: an edit of a policy file is a change of the manifests.
  const documents = (org.policies ?? []).map((doc) => [
    doc.name,
    doc.description ?? null,
    createHash('sha256').update(doc.content).digest('hex'),
  ]);
  const manifestsKey =
    documents.length === 0
      ? JSON.stringify(environments)
      : JSON.stringify({ environments, documents });
  const types = org.environments
    .slice(0, MAX_ENVIRONMENT_ROWS)
    .map((env) => [env.name, env.type] as const);
  return { org: org.org, files: org.files, manifestsKey, types };
}

/** A token as the decisions may see it: hashed, never kept. */
export function tokenKeyOf(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}

/** A pass's tokens, as the pass uses them (config/tokens.ts). */
export interface PassTokens {
  /** The token of each org's requests; it throws for an org with none (config/tokens.ts). */
  readonly getToken: (org: string) => string;
  /** Every token: each is masked by every sink. */
  readonly all: readonly string[];
  /** An org's token as the decisions may see it (tokenKeyOf), or for an org with none, why. */
  readonly keyOf: (org: string) => string;
  /** Where an org's token came from (`/status`), or null when it has none. */
  readonly sourceOf: (org: string) => string | null;
}

export function passTokens(set: TokenSet): PassTokens {
  return {
    getToken: tokenGetter(set),
    all: tokensOf(set),
    keyOf: (org) => {
      const chosen = tokenFor(set, org);
      return tokenKeyOf('token' in chosen ? chosen.token : chosen.error);
    },
    sourceOf: (org) => tokenSourceOf(set, org),
  };
}
