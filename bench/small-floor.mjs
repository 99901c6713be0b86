/**
 * The bare script of the small-repo scenario: what a person would write by hand to see the
 * service's side of a few manifests. Reads every *.yaml / *.yml file below --manifests, parses it
 * with `yaml`, then GETs each org once with Node's fetch and parses the body. Plain JavaScript,
 * as such a script would be: no build step, no type stripping. Prints a JSON summary on stdout.
 *
 *   node bench/small-floor.mjs --manifests DIR --api-url URL   (token from ENVSYNC_TOKEN)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';

const { values } = parseArgs({
  options: { manifests: { type: 'string' }, 'api-url': { type: 'string' } },
});
if (values.manifests === undefined || values['api-url'] === undefined) {
  throw new Error('usage: --manifests DIR --api-url URL');
}
const root = values.manifests;
const orgs = new Set();
for (const file of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
  if (!/\.ya?ml$/i.test(file)) continue;
  const docs = parseAllDocuments(readFileSync(path.join(root, file), 'utf8')).map(
    (doc) => /** @type {{ org?: unknown } | null} */ (doc.toJS()),
  );
  for (const doc of docs) if (typeof doc?.org === 'string') orgs.add(doc.org);
}
let listed = 0;
let failures = 0;
for (const org of orgs) {
  const response = await fetch(
    new URL(
      `api/v2/environments/${encodeURIComponent(org)}`,
      values['api-url'].replace(/\/?$/, '/'),
    ),
    {
      headers: {
        authorization: `Bearer ${process.env.ENVSYNC_TOKEN ?? ''}`,
        accept: 'application/json',
      },
    },
  );
  const body = /** @type {unknown[] | { env?: unknown[]; data?: unknown[] }} */ (
    await response.json()
  );
  if (!response.ok) failures++;
  listed += Array.isArray(body) ? body.length : (body.env ?? body.data ?? []).length;
}
process.stdout.write(`${JSON.stringify({ orgs: orgs.size, listed, failures })}\n`);
process.exitCode = failures > 0 ? 1 : 0;
