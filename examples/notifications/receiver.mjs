#!/usr/bin/env node
// A minimal receiver of envsync's notifications: it checks each POST's X-Envsync-Signature
// (HMAC-SHA256 of the raw body, keyed with the secret of --notify-secret-file), then prints the
// event. Node only, no dependencies. Replace the console.log with what your team needs.
//
//   NOTIFY_SECRET_FILE=/run/secrets/notify PORT=8787 node receiver.mjs
//   envsync run ... --notify-url http://127.0.0.1:8787/ --notify-secret-file /run/secrets/notify
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const secret = readFileSync(process.env.NOTIFY_SECRET_FILE ?? 'notify-secret', 'utf8').trim();
const port = Number(process.env.PORT ?? 8787);
const MAX_BODY = 1024 * 1024;

/** True when `header` is `sha256=<hex>` of the body, compared in constant time. */
function signedBy(body, header) {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(String(header ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    // Verify the raw bytes, before parsing: a re-serialised body would not match.
    const body = Buffer.concat(chunks);
    if (!signedBy(body, req.headers['x-envsync-signature'])) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('bad signature\n');
      return;
    }
    const event = JSON.parse(body.toString('utf8'));
    // CloudEvents (the default format): type, subject (the org), data.summary, data.link.
    console.log(
      JSON.stringify({
        id: event.id,
        type: event.type,
        org: event.subject ?? null,
        summary: event.data?.summary,
      }),
    );
    res.writeHead(204).end();
  });
});

server.listen(port, '127.0.0.1', () => {
  console.error(`listening on http://127.0.0.1:${server.address().port}/`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
