/**
 * Parsers of the notification settings. A notify URL may hold a credential (Slack's hooks carry
 * it in the path), so no message here repeats one: a wrong URL is named by its position.
 */
import { splitNotifyUrl } from '../notify/format.ts';
import { ConfigError } from '../runtime/errors.ts';
import { texts, type Raw } from './parsers.ts';

function ordinal(n: number): string {
  const suffix =
    n % 10 === 1 && n % 100 !== 11
      ? 'st'
      : n % 10 === 2 && n % 100 !== 12
        ? 'nd'
        : n % 10 === 3 && n % 100 !== 13
          ? 'rd'
          : 'th';
  return `${n}${suffix}`;
}

/** Notify URLs (each an http(s) URL, maybe with a `slack:` prefix), checked and kept as given. */
export function notifyUrls(raw: Raw, name: string): readonly string[] {
  const list = texts(raw, name);
  for (const [index, item] of list.entries()) {
    const { url } = splitNotifyUrl(item.trim(), 'cloudevents');
    const parsed = URL.parse(url);
    const where = list.length === 1 ? 'the URL' : `the ${ordinal(index + 1)} URL`;
    if (parsed === null) {
      throw new ConfigError(
        `${name}: ${where} is not a URL (it is not repeated here: it may hold a credential); give an http(s) URL, with slack: before it for the Slack format`,
      );
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new ConfigError(
        `${name}: ${where} has the scheme ${JSON.stringify(parsed.protocol)}; give an http(s) URL, with slack: before it for the Slack format`,
      );
    }
  }
  return list.map((item) => item.trim());
}

/** The daemon's public address: an http(s) URL, without a trailing slash. */
export function publicUrl(raw: Raw, name: string): string {
  if (typeof raw !== 'string') throw new ConfigError(`${name}: ${JSON.stringify(raw)} is not text`);
  const parsed = URL.parse(raw.trim());
  if (parsed === null || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new ConfigError(
      `${name}: ${JSON.stringify(raw)} is not an http(s) URL; give the address people open the status page at, e.g. https://envsync.example.com`,
    );
  }
  parsed.search = '';
  parsed.hash = '';
  return parsed.href.replace(/\/+$/, '');
}
