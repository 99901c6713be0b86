/**
 * The naive way, as a CI shell loop does it (`for env in ...; do curl -X PUT ...; done`, run in
 * parallel): PUT every environment of every manifest on every run, at the same concurrency.
 * Prints a JSON summary on stdout.
 */
import { baselineArgs, orgPath, pool, putBody, readAllManifests, workers } from './lib/baseline.ts';

const args = baselineArgs();
const started = performance.now();
const docs = await readAllManifests(args.manifests);
const puts = docs.flatMap((doc) => doc.environments.map((env) => ({ org: doc.org, env })));
const client = pool(args);
let failures = 0;
await workers(args.concurrency, puts.length, async (i) => {
  const { org, env } = puts[i] as (typeof puts)[number];
  const response = await client.request({
    method: 'PUT',
    path: orgPath(args, org),
    headers: { authorization: `Bearer ${args.token}`, 'content-type': 'application/json' },
    body: putBody(env),
  });
  await response.body.text();
  if (response.statusCode < 200 || response.statusCode > 299) failures++;
});
await client.close();
process.stdout.write(
  `${JSON.stringify({ requests: puts.length, failures, ms: performance.now() - started })}\n`,
);
process.exitCode = failures > 0 ? 1 : 0;
