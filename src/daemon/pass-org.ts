import { createHash } from 'node:crypto';
import type { PassOrg } from '../core/daemon-memory.ts';
import type { OrgManifest } from '../manifests/load.ts';

/** An org's manifests as the pass's decisions see them: its files, and its content as text. */
export function passOrg(org: OrgManifest): PassOrg {
  const environments = org.environments.map(({ source: _source, ...env }) => env);
  return { org: org.org, files: org.files, manifestsKey: JSON.stringify(environments) };
}

/** The token as the decisions may see it: hashed, never kept. */
export function tokenKeyOf(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 16);
}
