/** The rules for showing untrusted text in each target; each renderer applies its own. */

/**
 * Never shown raw: C0 and C1 controls, DEL, the line and paragraph separators, the bidirectional
 * controls (they reorder what a reader sees) and the zero-width characters (they make two
 * different names look the same).
 */
export const UNSAFE =
  // oxlint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const unicode = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Text for a terminal or a CI log line: unsafe characters escaped visibly (`\n`, `\u001b`). */
export function escapeText(text: string): string {
  return text.replace(UNSAFE, (char) => SHORT[char] ?? unicode(char));
}

/**
 * JSON text with the unsafe characters JSON.stringify leaves raw written as \u escapes (the same
 * data once parsed), and `##[` (an older workflow command, read anywhere in a line) as
 * `##\u005b`. Every JSON envsync writes goes through it.
 */
export function escapeJson(json: string): string {
  return json
    .replace(UNSAFE, (char) => (char < ' ' ? char : unicode(char)))
    .replace(/##\[/g, '##\\u005b');
}

/** No line of a whole rendered output is a GitHub workflow command (`::` or `##[`). */
export function neutraliseWorkflowCommands(output: string): string {
  return output.replace(/^([^\S\r\n]*):(?=:)/gm, '$1\\u003a').replace(/##\[/g, '##\\u005b');
}

/** GitHub's escaping of a workflow command's message (the data after `::`). */
export function escapeCommandData(text: string): string {
  return escapeText(text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A'));
}

/** GitHub's escaping of a workflow command's property value (`title=...`, `file=...`). */
export function escapeCommandProperty(text: string): string {
  return escapeCommandData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const entity = (char: string) => ENTITIES[char] ?? char;

/** Text inside HTML (and inside a markdown HTML block such as `<summary>`). */
export function escapeHtml(text: string): string {
  return escapeText(text).replace(/[&<>"']/g, entity);
}

/**
 * Text in markdown, a table cell included: no HTML, autolink, link, image, emphasis, code span,
 * heading or extra cell can be made. Brackets stay (`[REDACTED]` reads as written): without `(`
 * no inline link can follow them, and no reference definition starts mid-line.
 */
export function escapeMarkdown(text: string): string {
  return escapeText(text)
    .replace(/[\\`*_{}()#+!|~]/g, '\\$&')
    .replace(/[&<>]/g, entity);
}

/**
 * A value as code in markdown: `<code>`, escaped like any markdown text, rather than a backtick
 * span, inside which no escape works and `<script>` would stand as it is.
 */
export function markdownCode(text: string): string {
  return `<code>${escapeMarkdown(text)}</code>`;
}

/**
 * Text in a Slack message (mrkdwn, also Mattermost's and Teams' Slack-compatible hooks): `&`, `<`
 * and `>` as entities, the only escapes Slack defines, so no link or mention can be made.
 */
export function escapeSlack(text: string): string {
  return escapeText(text).replace(/[&<>]/g, entity);
}
