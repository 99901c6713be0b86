/**
 * The floor of the apply scenario: the same requests envsync makes, in the same order and at the
 * same concurrency, with nothing else: one GET per org, a PUT of every `--every`-th environment
 * (the drifted ones), then one GET per org that had a PUT (envsync's verifying listing). Run after
 * the sync, so the PUTs send what the service already holds. Shows how much of the gap to the
 * bound is the emulator and the HTTP stack rather than envsync. Prints a JSON summary on stdout.
 */
import { baselineArgs, orgPath, pool, putBody, readAllManifests, workers } from './lib/baseline.ts';

const args = baselineArgs();
const docs = await readAllManifests(args.manifests);
const orgs = [...new Set(docs.map((doc) => doc.org))].sort();
const byOrg = new Map(orgs.map((org) => [org, docs.filter((doc) => doc.org === org)]));
let k = 0;
const puts = orgs.flatMap((org) =>
  (byOrg.get(org) ?? [])
    .flatMap((doc) => doc.environments)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .filter(() => k++ % args.every === 0)
    .map((env) => ({ org, env })),
);
const changed = [...new Set(puts.map((put) => put.org))];
const client = pool(args);
const headers = { authorization: `Bearer ${args.token}`, accept: 'application/json' };
let failures = 0;

const list = (which: readonly string[]) =>
  workers(args.concurrency, which.length, async (i) => {
    const response = await client.request({
      method: 'GET',
      path: orgPath(args, which[i] as string),
      headers,
    });
    JSON.parse(await response.body.text());
    if (response.statusCode !== 200) failures++;
  });

const started = performance.now();
await list(orgs);
await workers(args.concurrency, puts.length, async (i) => {
  const { org, env } = puts[i] as (typeof puts)[number];
  const response = await client.request({
    method: 'PUT',
    path: orgPath(args, org),
    headers: { ...headers, 'content-type': 'application/json' },
    body: putBody(env),
  });
  await response.body.text();
  if (response.statusCode < 200 || response.statusCode > 299) failures++;
});
await list(changed);
const requestMs = performance.now() - started;
await client.close();
process.stdout.write(
  `${JSON.stringify({ requests: orgs.length + puts.length + changed.length, failures, requestMs })}\n`,
);
process.exitCode = failures > 0 ? 1 : 0;
