/**
 * The floor of a no-op plan: read and parse every manifest, then GET every org once at the same
 * concurrency, reading and parsing each body. Prints a JSON summary on stdout.
 */
import { baselineArgs, orgPath, pool, readAllManifests, workers } from './lib/baseline.ts';

const args = baselineArgs();
const started = performance.now();
const docs = await readAllManifests(args.manifests);
const parsedMs = performance.now() - started;
const orgs = [...new Set(docs.map((doc) => doc.org))];
const client = pool(args);
let environments = 0;
let failures = 0;
await workers(args.concurrency, orgs.length, async (i) => {
  const response = await client.request({
    method: 'GET',
    path: orgPath(args, orgs[i] as string),
    headers: { authorization: `Bearer ${args.token}`, accept: 'application/json' },
  });
  const body = JSON.parse(await response.body.text()) as { env?: unknown[] };
  if (response.statusCode !== 200) failures++;
  environments += body.env?.length ?? 0;
});
await client.close();
process.stdout.write(
  `${JSON.stringify({ orgs: orgs.length, requests: orgs.length, listed: environments, failures, parsedMs, ms: performance.now() - started })}\n`,
);
process.exitCode = failures > 0 ? 1 : 0;
