/**
 * YAML 1.2 has three line breaks: LF, CRLF and a lone CR (spec 5.4). js-yaml reads a lone CR as
 * one; `yaml` does not (it reads it as content, so a file of CR line breaks is one long line), and
 * a file read by one parser or the other depending on whether it holds an alias read differently.
 * Both parsers are given the text with each lone CR replaced by LF: one character for one, so
 * every offset, and so every position in a message, stays the same.
 */

const LONE_CR = /\r(?!\n)/g;

/** The text with each lone CR (not followed by LF) replaced by LF. */
export function normalizeLineBreaks(text: string): string {
  // A caller that passes no text at all gets it back, for the parser to refuse.
  return typeof text === 'string' && text.includes('\r') ? text.replace(LONE_CR, '\n') : text;
}
