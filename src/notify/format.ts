/**
 * Notifications as receivers read them (docs/notifications.md): CloudEvents 1.0 in structured
 * mode or a Slack-compatible message, and how a notify URL is shown. Pure.
 */
import { escapeJson, escapeSlack } from '../core/escape.ts';
import { MIN_RUN } from '../core/mask.ts';
import { showValue } from '../core/fields.ts';
import type { FieldDiff } from '../core/model.ts';
import type { EventEnvironment, NotifyEvent } from './events.ts';
import type { ProblemReport } from '../core/report.ts';

export const NOTIFY_FORMATS = ['cloudevents', 'slack'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];
/** A receiver's format: a notification's, or `github`: commit statuses (`github://OWNER/REPO`). */
export type TargetFormat = NotifyFormat | 'github';

export const NOTIFY_CONTENT_TYPES: Record<TargetFormat, string> = {
  cloudevents: 'application/cloudevents+json; charset=utf-8',
  slack: 'application/json; charset=utf-8',
  github: 'application/json; charset=utf-8',
};

/** The CloudEvents id (one per event), source, and the status page (`--public-url`). */
export interface FormatContext {
  readonly id: string;
  readonly source: string;
  readonly link: string | undefined;
}

/** A CloudEvents 1.0 event in structured mode. */
export function cloudEvent(event: NotifyEvent, context: FormatContext): Record<string, unknown> {
  const { type: _type, ...data } = event.data;
  return {
    specversion: '1.0',
    id: context.id,
    source: context.source,
    type: event.type,
    time: event.time,
    ...(event.org === null ? {} : { subject: event.org }),
    datacontenttype: 'application/json',
    data: {
      org: event.org,
      revision: event.revision,
      summary: event.summary,
      ...(context.link === undefined ? {} : { link: context.link }),
      ...data,
    },
  };
}

/** Slack's limit on the text of one section block, with room to spare. */
const MAX_SECTION_CHARS = 2900;

function fieldText(name: string, diff: FieldDiff | undefined): string {
  if (diff === undefined) return name;
  return diff.from === null
    ? `${name}=${showValue(diff.to)}`
    : `${name}: ${showValue(diff.from)} → ${showValue(diff.to)}`;
}

function environmentLine(env: EventEnvironment): string {
  const fields = Object.entries(env.fields).map(([name, diff]) => fieldText(name, diff));
  return (
    `• \`${escapeSlack(env.name)}\` (${env.action})` +
    (fields.length === 0 ? '' : `: ${escapeSlack(fields.join(', '))}`) +
    (env.error === undefined ? '' : ` (${escapeSlack(env.error)})`)
  );
}

function problemLine(problem: ProblemReport): string {
  return (
    `• \`${escapeSlack(`${problem.file}:${problem.line}:${problem.column}`)}\` ` +
    escapeSlack(`${problem.path === '' ? '' : `${problem.path}: `}${problem.message}`)
  );
}

/** Lines joined into one section's text, cut to whole lines at the section limit. */
function sectionText(lines: readonly string[]): string {
  let text = '';
  for (const [index, line] of lines.entries()) {
    const next = text === '' ? line : `${text}\n${line}`;
    if (next.length > MAX_SECTION_CHARS) return `${text}\n… and ${lines.length - index} more`;
    text = next;
  }
  return text;
}

function detailLines({ data }: NotifyEvent): string[] {
  if (data.type === 'org.recovered') return [];
  const lines =
    'problems' in data ? data.problems.map(problemLine) : data.environments.map(environmentLine);
  return data.omitted > 0 ? [...lines, `… and ${data.omitted} more`] : lines;
}

/**
 * A Slack-compatible message (Slack, Mattermost, Teams' Slack-compatible connectors): `text`, and
 * blocks with the details. Every text from manifests or the service is escaped for mrkdwn.
 */
export function slackMessage(event: NotifyEvent, context: FormatContext): Record<string, unknown> {
  const summary = escapeSlack(event.summary);
  const details = detailLines(event);
  const footer = [
    ...(event.org === null ? [] : [`org \`${escapeSlack(event.org)}\``]),
    `revision \`${escapeSlack(event.revision ?? 'unknown')}\``,
    escapeSlack(event.time),
    ...(context.link === undefined ? [] : [`<${escapeSlack(context.link)}|status page>`]),
  ].join(' · ');
  const section = (lines: readonly string[]) => ({
    type: 'section',
    text: { type: 'mrkdwn', text: sectionText(lines) },
  });
  return {
    text: `${event.type}: ${summary}`,
    blocks: [
      section([`*${event.type}*: ${summary}`]),
      ...(details.length === 0 ? [] : [section(details)]),
      { type: 'context', elements: [{ type: 'mrkdwn', text: footer }] },
    ],
  };
}

/** The body of a notification in `format`, with what JSON leaves raw (U+2028, bidi) \u-escaped. */
export function formatNotification(
  event: NotifyEvent,
  format: NotifyFormat,
  context: FormatContext,
): string {
  const body = format === 'slack' ? slackMessage(event, context) : cloudEvent(event, context);
  return escapeJson(JSON.stringify(body));
}

/** A notify URL as it may be shown: scheme and host (its path or query may hold a credential). */
export function publicNotifyUrl(url: URL): string {
  const more = url.pathname !== '/' || url.search !== '' ? '…' : '';
  return `${url.protocol}//${url.host}/${more}`;
}

/**
 * The parts of a notify URL that may be credentials, as written and decoded: the user, the
 * password, each path segment and query value of MIN_RUN characters or more (shorter ones, such
 * as `services` or `hooks`, are words: masking them would mangle text).
 */
export function notifyUrlSecrets(url: URL): string[] {
  const decoded = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  return [url.username, url.password, ...url.pathname.split('/'), ...url.searchParams.values()]
    .flatMap((part) => (decoded(part) === part ? [part] : [part, decoded(part)]))
    .filter((part) => part.length >= MIN_RUN);
}

/** A `slack:` prefix on a notify URL picks the Slack format; github://OWNER/REPO, GitHub. */
export function splitNotifyUrl(
  text: string,
  defaultFormat: NotifyFormat,
  githubApi = 'https://api.github.com',
): { url: string; format: TargetFormat } {
  const repo = /^github:\/\/([A-Za-z0-9-]+\/[\w.-]+)$/.exec(text)?.[1];
  if (repo !== undefined) return { url: `${githubApi}/repos/${repo}`, format: 'github' };
  const prefixed = /^slack:(?=https?:)/i.exec(text);
  return prefixed === null
    ? { url: text, format: defaultFormat }
    : { url: text.slice(prefixed[0].length), format: 'slack' };
}
