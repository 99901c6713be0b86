import { createHash } from 'node:crypto';
import type { PassOrg } from '../core/daemon-memory.ts';
import { MAX_ENVIRONMENT_ROWS } from '../core/daemon-status.ts';
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

/** The token as the decisions may see it: hashed, never kept. */
export function tokenKeyOf(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}
