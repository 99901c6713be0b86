/**
 * The spellings of a secret the scrubber looks for, derived once when the secret is learnt: the
 * secret, and what a server, a proxy or a library may turn it into before echoing it
 * (docs/security.md lists them, and what is left).
 */

/** Fragments of the secret itself this long or longer are scrubbed; shorter ones are not secret. */
export const MIN_FRAGMENT = 6;

/** The base64 characters that carry MIN_FRAGMENT bytes: the fragment rule, in that spelling. */
const MIN_BASE64_RUN = Math.ceil((MIN_FRAGMENT * 4) / 3);

/** One spelling of a secret. */
export interface SecretForm {
  /** What the spelling is (tests and docs). */
  readonly name: string;
  /** The spelling. */
  readonly text: string;
  /** Runs of `text` this long or longer are scrubbed (a spelling the service cut short). */
  readonly minRun: number;
  /**
   * Whether the spelling is also looked for written with any mix of escapes (JSON, markdown,
   * percent-encoding, numeric HTML references), character by character (scrub-match.ts). Only
   * the secret itself is: that pattern costs a regex compiled per character, and the encodings
   * are found in the escaped spellings a service really writes them in, listed as spellings of
   * their own.
   */
  readonly escaped: boolean;
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 of `bytes`, padded. */
function base64(bytes: readonly number[]): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const [a = 0, b = 0, c = 0] = [bytes[i], bytes[i + 1], bytes[i + 2]];
    const n = (a << 16) | (b << 8) | c;
    const chars = [n >> 18, (n >> 12) & 63, (n >> 6) & 63, n & 63].map((v) => BASE64[v]);
    const kept = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    out += chars.slice(0, kept).join('') + '='.repeat(4 - kept);
  }
  return out;
}

/**
 * The base64 and base64url spellings of `bytes` when they start `offset` bytes (0, 1 or 2) into
 * the data encoded, as they do inside `base64("Bearer " + token)` or `base64("user:" + token)`:
 * from the first character made of the secret's bits alone (those before it also hold bits of
 * what precedes the secret) to the end, padding included. Where something follows the secret,
 * only the characters before the last one match (it holds bits of what follows); without
 * padding, all but the `=`: both are runs of this spelling, which the run rule finds. Each is
 * also listed as a JSON string would write it (`\/`) and percent-encoded (`%2B`, `%2F`, `%3D`).
 */
function base64Forms(bytes: readonly number[], offset: number): SecretForm[] {
  const encoded = base64([...Array.from({ length: offset }, () => 0), ...bytes]);
  const stable = encoded.slice(Math.ceil((offset * 8) / 6));
  const forms: SecretForm[] = [];
  for (const [alphabet, text] of [
    ['base64', stable],
    ['base64url', stable.replace(/\+/g, '-').replace(/\//g, '_')],
  ] as const) {
    const name = `${alphabet} at offset ${offset}`;
    forms.push(
      { name, text, minRun: MIN_BASE64_RUN, escaped: false },
      {
        name: `${name}, JSON \\/`,
        text: text.replace(/\//g, '\\/'),
        minRun: MIN_BASE64_RUN,
        escaped: false,
      },
      {
        name: `${name}, percent-encoded`,
        text: encodeURIComponent(text),
        minRun: MIN_BASE64_RUN,
        escaped: false,
      },
    );
  }
  return forms;
}

/** The UTF-8 bytes of `text`. */
function utf8Bytes(text: string): number[] {
  return Array.from(new TextEncoder().encode(text));
}

/**
 * Every spelling of `secret` the scrubber looks for: the secret (and any mix of JSON escapes,
 * percent-encoding and HTML references of its characters, see scrub-match.ts); JSON string
 * escaping; URL encoding (encodeURIComponent and form encoding); base64 and base64url at the
 * three byte alignments, with and without padding; hex in lower and upper case.
 */
export function secretForms(secret: string): SecretForm[] {
  const bytes = utf8Bytes(secret);
  const json = JSON.stringify(secret).slice(1, -1);
  const hex = bytes.map((byte) => byte.toString(16).padStart(2, '0')).join('');
  const forms: SecretForm[] = [
    { name: 'as it is', text: secret, minRun: MIN_FRAGMENT, escaped: true },
    { name: 'JSON string', text: json, minRun: MIN_FRAGMENT, escaped: false },
    {
      name: 'JSON string, \\/',
      text: json.replace(/\//g, '\\/'),
      minRun: MIN_FRAGMENT,
      escaped: false,
    },
    {
      name: 'encodeURIComponent',
      text: encodeURIComponent(secret),
      minRun: MIN_FRAGMENT,
      escaped: false,
    },
    {
      name: 'form encoding',
      text: new URLSearchParams({ s: secret }).toString().slice(2),
      minRun: MIN_FRAGMENT,
      escaped: false,
    },
    ...[0, 1, 2].flatMap((offset) => base64Forms(bytes, offset)),
    // Two hex digits a byte: twelve carry the six characters of the fragment rule.
    { name: 'hex', text: hex, minRun: 2 * MIN_FRAGMENT, escaped: false },
    { name: 'HEX', text: hex.toUpperCase(), minRun: 2 * MIN_FRAGMENT, escaped: false },
  ];
  // A spelling equal to another is looked for once (a token of letters and digits is its own
  // JSON and URL spelling).
  const seen = new Set<string>();
  return forms.filter((form) => !seen.has(form.text) && seen.add(form.text));
}
