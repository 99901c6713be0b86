/**
 * Notifications as receivers read them: CloudEvents 1.0 (structured mode) or a Slack-compatible
 * message, and the public form of a notify URL. Pure: the caller gives the id, the source and
 * the link, and masks the secrets in the event before it is formatted.
 */
import { escapeJson, escapeSlack } from '../core/escape.ts';
import { MIN_RUN } from '../core/mask.ts';
import { showValue } from '../core/fields.ts';
import type { FieldDiff } from '../core/model.ts';
import type { EventEnvironment, NotifyEvent } from './events.ts';
import type { ProblemReport } from '../core/report.ts';

export const NOTIFY_FORMATS = ['cloudevents', 'slack'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

/** The content type of each format's body. */
export const NOTIFY_CONTENT_TYPES: Record<NotifyFormat, string> = {
  cloudevents: 'application/cloudevents+json; charset=utf-8',
  slack: 'application/json; charset=utf-8',
};

/** What the formats need besides the event. */
export interface FormatContext {
  /** The CloudEvents id: the same for every receiver and every attempt of one event. */
  readonly id: string;
  /** The CloudEvents source (a URI reference naming this daemon). */
  readonly source: string;
  /** The daemon's status page, when `--public-url` is set. */
  readonly link: string | undefined;
}

/** A CloudEvents 1.0 event in structured mode: the JSON object a receiver reads. */
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

/** The detail lines of an event, each already escaped for mrkdwn. */
function detailLines({ data }: NotifyEvent): string[] {
  if (data.type === 'org.recovered') return [];
  const lines =
    'problems' in data ? data.problems.map(problemLine) : data.environments.map(environmentLine);
  return data.omitted > 0 ? [...lines, `… and ${data.omitted} more`] : lines;
}

/** Lines joined into one section's text, cut at the section limit (whole lines only). */
function sectionText(lines: readonly string[]): string {
  let text = '';
  for (const [index, line] of lines.entries()) {
    const next = text === '' ? line : `${text}\n${line}`;
    if (next.length > MAX_SECTION_CHARS) {
      return `${text}\n… and ${lines.length - index} more`;
    }
    text = next;
  }
  return text;
}

/**
 * A Slack-compatible message (incoming webhooks of Slack, Mattermost, Teams' Slack-compatible
 * connectors): `text` for notifications and clients without blocks, and blocks with the details.
 * Every text from manifests or the service is escaped for mrkdwn.
 */
export function slackMessage(event: NotifyEvent, context: FormatContext): Record<string, unknown> {
  const summary = escapeSlack(event.summary);
  const headline = `*${event.type}*: ${summary}`;
  const details = detailLines(event);
  const footer = [
    ...(event.org === null ? [] : [`org \`${escapeSlack(event.org)}\``]),
    `revision \`${escapeSlack(event.revision ?? 'unknown')}\``,
    escapeSlack(event.time),
    // The link is the operator's own --public-url; escaped all the same, inside Slack's <url|text>.
    ...(context.link === undefined ? [] : [`<${escapeSlack(context.link)}|status page>`]),
  ].join(' · ');
  const blocks: Record<string, unknown>[] = [
    { type: 'section', text: { type: 'mrkdwn', text: sectionText([headline]) } },
  ];
  if (details.length > 0) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: sectionText(details) } });
  }
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: footer }] });
  return { text: `${event.type}: ${summary}`, blocks };
}

/** The body of a notification in `format`. */
export function formatNotification(
  event: NotifyEvent,
  format: NotifyFormat,
  context: FormatContext,
): string {
  // Characters JSON leaves raw (line separators, bidirectional controls) are \u-escaped: the
  // same data for a parser, nothing hidden for a person reading the body.
  return escapeJson(
    JSON.stringify(format === 'slack' ? slackMessage(event, context) : cloudEvent(event, context)),
  );
}

/**
 * A notify URL as it may be shown (logs, `/status`): scheme and host only. A webhook URL often
 * carries its credential in the path (Slack's do) or the query.
 */
export function publicNotifyUrl(url: URL): string {
  const more = url.pathname !== '/' || url.search !== '' ? '…' : '';
  return `${url.protocol}//${url.host}/${more}`;
}

/**
 * The parts of a notify URL that may be credentials: the user and password, each path segment
 * and each query value of 12 characters or more (MIN_RUN, as the masking rule's runs). Shorter
 * segments (`services`, `api`, `hooks`) are words, not secrets: masking them would mangle text.
 */
export function notifyUrlSecrets(url: URL): string[] {
  const secrets = [url.username, url.password];
  for (const segment of url.pathname.split('/')) secrets.push(segment);
  for (const value of url.searchParams.values()) secrets.push(value);
  return secrets
    .flatMap((secret) => {
      let decoded = secret;
      try {
        decoded = decodeURIComponent(secret);
      } catch {
        // Kept as written.
      }
      return decoded === secret ? [secret] : [secret, decoded];
    })
    .filter((secret) => secret.length >= MIN_RUN);
}

/** A `slack:` prefix on a notify URL picks the Slack format for it. */
export function splitNotifyUrl(
  text: string,
  defaultFormat: NotifyFormat,
): { url: string; format: NotifyFormat } {
  const prefixed = /^slack:(?=https?:)/i.exec(text);
  return prefixed === null
    ? { url: text, format: defaultFormat }
    : { url: text.slice(prefixed[0].length), format: 'slack' };
}
