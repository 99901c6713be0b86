/** The rules for showing untrusted text in each target; each renderer applies its own. */

/**
 * Characters never shown raw: C0 and C1 controls, DEL, the line and paragraph separators, every
 * bidirectional control (they reorder what a reader sees), and the zero-width characters (they
 * make two different names look the same).
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
 * JSON text with every unsafe character JSON.stringify leaves raw (it escapes C0 controls) written
 * as a \u escape, the same data once parsed, and `##[` (an older workflow-command form, read
 * anywhere in a line) as `##\u005b`. Every JSON envsync writes goes through it.
 */
export function escapeJson(json: string): string {
  return json
    .replace(UNSAFE, (char) => (char < ' ' ? char : unicode(char)))
    .replace(/##\[/g, '##\\u005b');
}

/**
 * Makes sure no line of `output` is a GitHub workflow command (`::` after leading blanks, or
 * `##[`): for whole rendered outputs that go to a CI log, never envsync's own annotations.
 */
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
 * Text in markdown, a table cell included: unsafe characters escaped, `& < >` as entities (no
 * HTML, no autolink), and the characters markdown gives a meaning to backslash-escaped, so no
 * link, image, emphasis, code span, heading or extra table cell can be made. Brackets stay as
 * they are (`[REDACTED]` reads as written): without `(` no inline link can follow them, and a
 * reference definition cannot be made in the middle of a line.
 */
export function escapeMarkdown(text: string): string {
  return escapeText(text)
    .replace(/[\\`*_{}()#+!|~]/g, '\\$&')
    .replace(/[&<>]/g, entity);
}

/**
 * A value shown as code in markdown, safe in a table cell: `<code>` (whose text markdown still
 * reads, so it is escaped like any markdown text) rather than a backtick span, inside which no
 * escape works and `<script>` would stand as it is in the file.
 */
export function markdownCode(text: string): string {
  return `<code>${escapeMarkdown(text)}</code>`;
}

/**
 * Text in a Slack message (mrkdwn, also read by Mattermost and Teams' Slack-compatible hooks):
 * unsafe characters escaped, and `&`, `<`, `>` as entities, so no link, mention (`<!channel>`)
 * or user reference can be made. The only escapes Slack defines.
 */
export function escapeSlack(text: string): string {
  return escapeText(text).replace(/[&<>]/g, entity);
}
