/**
 * Peak RSS of reading one listing of a given size through the API client, as the daemon does:
 * `node bench/response-memory.ts [MiB] [chunked]`. The listing is served by a child process, so
 * only the client's memory is measured. The figure for the default --max-response-bytes is in
 * docs/production.md ("Bounded waits and memory").
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { systemClock } from '../src/runtime/system-clock.ts';
import pino from 'pino';
import { createClient } from '../src/api/client.ts';
import { DEFAULT_RETRY_POLICY } from '../src/api/retry-policy.ts';

const mib = Number(process.argv[2] ?? '16');
const chunked = process.argv[3] === 'chunked';

const SERVER = `
const { createServer } = require('node:http');
const [mib, chunked] = [Number(process.argv[1]), process.argv[2] === 'chunked'];
const one = (i) => ({ org: 'acme', name: 'env-' + String(i).padStart(7, '0'), type: 'K8S',
  description: 'a description of this environment '.repeat(2), include_scaling: true,
  policies: ['policy-one', 'policy-two'] });
const perEnv = Buffer.byteLength(JSON.stringify(one(0))) + 1;
const count = Math.floor((mib * 1024 * 1024 - 20) / perEnv);
const body = Buffer.from(JSON.stringify({ env: Array.from({ length: count }, (_, i) => one(i)) }));
createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json',
    ...(chunked ? {} : { 'content-length': body.length }) });
  res.end(body);
}).listen(0, '127.0.0.1', function () { console.log(this.address().port + ' ' + body.length); });
`;

const server = spawn(process.execPath, ['-e', SERVER, String(mib), chunked ? 'chunked' : ''], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [line] = (await once(server.stdout.setEncoding('utf8'), 'data')) as [string];
const [port, bytes] = line.trim().split(' ').map(Number);
const client = createClient({
  apiUrl: new URL(`http://127.0.0.1:${port}`),
  getToken: () => 'bench-token',
  concurrency: 1,
  timeoutMs: 120_000,
  policy: DEFAULT_RETRY_POLICY,
  logger: pino({ level: 'silent' }),
  clock: systemClock,
  maxResponseBytes: 1024 ** 3,
});
const before = process.memoryUsage().rss;
try {
  const { environments } = await client.listEnvironments('acme');
  const mb = (n: number) => Math.round(n / 2 ** 20);
  console.log(
    JSON.stringify({
      listingMiB: mib,
      chunked,
      bytes,
      environments: environments.length,
      rssBeforeMiB: mb(before),
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
} finally {
  await client.close();
  server.kill();
}
