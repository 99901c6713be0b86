import { ConfigError } from '../runtime/errors.ts';

/**
 * True for a host name or address that never leaves the machine: localhost, 127.0.0.0/8 (also
 * IPv4-mapped), ::1 in either spelling; brackets of a URL's IPv6 host allowed.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  return /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** An address for a message: what stands before its last "@" (user information) is replaced. */
function displayUrl(raw: string): string {
  const at = raw.lastIndexOf('@');
  if (at === -1) return raw;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(raw)?.[0] ?? '';
  return `${scheme}***${raw.slice(at)}`;
}

/** The API's base address as the status page shows it: scheme, host, port and path only. */
export function shownApiUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** Checks the API's base address: https unless loopback or --insecure-http; nothing but a path. */
export function parseApiUrl(raw: string, { insecureHttp }: { insecureHttp: boolean }): URL {
  const url = URL.parse(raw);
  if (url === null) {
    throw new ConfigError(
      `--api-url: ${JSON.stringify(displayUrl(raw))} is not a URL (expected e.g. https://app.example.com)`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError(`--api-url: ${url.protocol} is not supported; use https://`);
  if (url.protocol === 'http:' && !insecureHttp && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(
      `--api-url: plain http:// to ${url.hostname} would send the token in clear text; use https://, or --insecure-http if you really mean it`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError(
      '--api-url: credentials in the URL are not allowed; the token comes from ENVSYNC_TOKEN or --token-file',
    );
  }
  if (url.search !== '' || url.hash !== '')
    throw new ConfigError('--api-url: the base address takes no query string or fragment');
  return url;
}
