/**
 * The pull request comment of the GitHub Action, as plain data in and text out: its hidden
 * marker, its body, and the cut that keeps it within GitHub's limit. No I/O here.
 */

/** GitHub refuses a comment body longer than this (characters). */
export const GITHUB_COMMENT_LIMIT = 65_536;

/** A comment id names one comment per pull request; kept to characters an HTML comment allows. */
const COMMENT_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** The hidden first line that identifies the action's comment, for this comment id. */
export function commentMarker(id: string): string {
  if (!COMMENT_ID.test(id))
    throw new Error(
      `comment-id ${JSON.stringify(id)}: use 1 to 64 letters, digits, "_", "." or "-"`,
    );
  return `<!-- envsync:${id} -->`;
}

/** Does this existing comment body belong to the action (it starts with the marker)? */
export function isOwnComment(body: string | null | undefined, marker: string): boolean {
  return typeof body === 'string' && body.startsWith(marker);
}

/** UTF-8 bytes: never fewer than characters, however GitHub counts them. */
function size(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Cuts markdown at a line boundary so that it fits in `budget` bytes together with the closing
 * tags it then needs: a cut inside a `<details>` block closes it, so the rest of the comment is
 * not swallowed by an unclosed block. Tables are line-based, so a cut between lines keeps them
 * whole. Returns the text unchanged when it fits.
 */
export function cutMarkdown(
  markdown: string,
  budget: number,
): { readonly text: string; readonly cut: boolean } {
  if (size(markdown) <= budget) return { text: markdown, cut: false };
  const lines = markdown.split('\n');
  const kept: string[] = [];
  let used = 0;
  let open = 0;
  for (const line of lines) {
    const opens = line.match(/<details\b/g)?.length ?? 0;
    const closes = line.match(/<\/details>/g)?.length ?? 0;
    const nextOpen = Math.max(0, open + opens - closes);
    const closing = '\n</details>'.repeat(nextOpen);
    if (used + size(line) + 1 + size(closing) > budget) break;
    kept.push(line);
    used += size(line) + 1;
    open = nextOpen;
  }
  // A table cut after its header rows only would render as an empty table: drop them too.
  const separator = /^\|( ?:?-+:? ?\|)+$/;
  if (separator.test(lines[kept.length] ?? '')) kept.pop();
  else if (separator.test(kept.at(-1) ?? '')) kept.splice(-2, 2);
  // Nor a block with its summary only.
  while (kept.at(-1)?.trim() === '') kept.pop();
  if (open > 0 && /^<details\b.*<\/summary>$/.test(kept.at(-1) ?? '')) {
    kept.pop();
    open--;
  }
  const closing = open > 0 ? `\n\n${'</details>\n'.repeat(open)}` : '';
  return { text: `${kept.join('\n').trimEnd()}${closing}`, cut: true };
}

/** What the comment says besides the report. */
export interface CommentFacts {
  /** The hidden marker (`commentMarker`). */
  readonly marker: string;
  /** envsync's markdown report, already escaped by envsync; empty if it produced none. */
  readonly report: string;
  /** The command run, for the heading when there is no report. */
  readonly command: string;
  /** envsync's exit code. */
  readonly exitCode: number;
  /** The workflow run's page, where the step summary and the log are. */
  readonly runUrl: string;
  /** The commit planned (shown shortened). */
  readonly sha: string;
}

/**
 * The comment's body: the marker, envsync's report as it is (it escapes manifest and service
 * text itself, so escaping it again would show backslashes), and a footer naming the commit and
 * linking to the run. Cut, with a note saying so, to fit GitHub's limit.
 */
export function commentBody(facts: CommentFacts, limit = GITHUB_COMMENT_LIMIT): string {
  const commit = facts.sha === '' ? '' : ` for \`${facts.sha.slice(0, 12)}\``;
  const footer = `\n\n<sub>envsync ${facts.command}${commit}: [the workflow run](${facts.runUrl}) has the log and the step summary.</sub>\n`;
  const report =
    facts.report.trim() === ''
      ? `### envsync ${facts.command} failed\n\nenvsync exited with code ${facts.exitCode} before it produced a report. [The run's log](${facts.runUrl}) says why.`
      : facts.report.trimEnd();
  const head = `${facts.marker}\n`;
  const whole = `${head}${report}${footer}`;
  if (size(whole) <= limit) return whole;
  const note = `\n\n> [!WARNING]\n> This plan is too long for a comment (GitHub takes at most ${limit.toLocaleString('en-US')} characters), so it was cut here. The whole plan is in the step summary of [the workflow run](${facts.runUrl}).`;
  const { text } = cutMarkdown(report, limit - size(head) - size(note) - size(footer));
  return `${head}${text}${note}${footer}`;
}
