import { describe, expect, it } from 'vitest';
import type { NotifyEvent } from '../../src/notify/events.ts';
import {
  cloudEvent,
  formatNotification,
  notifyUrlSecrets,
  publicNotifyUrl,
  slackMessage,
  splitNotifyUrl,
} from '../../src/notify/format.ts';
import { DEFAULT_NOTIFY_POLICY, judgeAttempt, type Attempt } from '../../src/notify/delivery.ts';

const CONTEXT = { id: 'id-1', source: 'urn:envsync:host', link: 'https://envsync.example/' };

const hostile = '<!channel> & <https://evil.example|click> *bold*\n`x`';

const failedEvent: NotifyEvent = {
  type: 'org.failed',
  org: 'acme',
  revision: 'abc123',
  time: '2026-11-23T02:00:00.000Z',
  summary: `org acme failed: ${hostile}`,
  data: {
    type: 'org.failed',
    reason: hostile,
    environments: [
      {
        name: `web${hostile}`,
        action: 'update',
        fields: { description: { from: 'a', to: hostile } },
        error: hostile,
      },
    ],
    omitted: 0,
    previous: 'ok',
  },
};

describe('CloudEvents 1.0, structured mode', () => {
  it('carries id, source, type, specversion, time, subject (the org) and data', () => {
    expect(cloudEvent(failedEvent, CONTEXT)).toEqual({
      specversion: '1.0',
      id: 'id-1',
      source: 'urn:envsync:host',
      type: 'org.failed',
      time: '2026-11-23T02:00:00.000Z',
      subject: 'acme',
      datacontenttype: 'application/json',
      data: {
        org: 'acme',
        revision: 'abc123',
        summary: failedEvent.summary,
        link: 'https://envsync.example/',
        reason: hostile,
        environments: failedEvent.data.type === 'org.failed' ? failedEvent.data.environments : [],
        omitted: 0,
        previous: 'ok',
      },
    });
  });

  it('has no subject and no link when there is no org and no --public-url', () => {
    const event: NotifyEvent = {
      ...failedEvent,
      type: 'manifests.error',
      org: null,
      data: { type: 'manifests.error', problems: [], omitted: 0 },
    };
    const out = cloudEvent(event, { ...CONTEXT, link: undefined });
    expect(out).not.toHaveProperty('subject');
    expect(out['data']).not.toHaveProperty('link');
  });
});

describe('Slack-compatible messages', () => {
  it('have text, a headline, the details and a footer with revision, time and link, every text from outside escaped', () => {
    const message = slackMessage(failedEvent, CONTEXT) as {
      text: string;
      blocks: { type: string; text?: { text: string }; elements?: { text: string }[] }[];
    };
    // &, < and >: no mention, no link; a newline from a manifest is shown, not obeyed.
    const json = JSON.stringify(message);
    expect(json).not.toMatch(/<!channel>|<https:\/\/evil/);
    expect(json).toContain('&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
    expect(message.text).not.toContain('\n');
    expect(message.text.startsWith('org.failed: org acme failed')).toBe(true);
    expect(message.blocks.map((b) => b.type)).toEqual(['section', 'section', 'context']);
    expect(message.blocks[1]?.text?.text).toContain('(update)');
    const footer = message.blocks[2]?.elements?.[0]?.text ?? '';
    expect(footer).toContain('abc123');
    expect(footer).toContain('<https://envsync.example/|status page>');
  });

  it("keeps each section within Slack's limit however many lines", () => {
    const event: NotifyEvent = {
      ...failedEvent,
      type: 'org.invalid',
      data: {
        type: 'org.invalid',
        problems: Array.from({ length: 50 }, (_, i) => ({
          file: 'a.yaml',
          line: i,
          column: 1,
          path: '',
          message: 'x'.repeat(200),
        })),
        omitted: 0,
      },
    };
    const message = slackMessage(event, CONTEXT) as { blocks: { text?: { text: string } }[] };
    for (const block of message.blocks) expect((block.text?.text ?? '').length).toBeLessThan(3000);
    expect(message.blocks[1]?.text?.text).toMatch(/… and \d+ more$/);
  });
});

describe('formatNotification', () => {
  it('writes characters JSON leaves raw (bidi controls, line separators) as \\u escapes', () => {
    const event: NotifyEvent = { ...failedEvent, summary: 'a\u202eb\u2028c' };
    for (const format of ['cloudevents', 'slack'] as const) {
      const body = formatNotification(event, format, CONTEXT);
      expect(body).not.toMatch(/[\u202e\u2028]/);
    }
    const body = JSON.parse(formatNotification(event, 'cloudevents', CONTEXT)) as {
      data: { summary: string };
    };
    expect(body.data.summary).toBe('a\u202eb\u2028c');
  });
});

describe('notify URLs', () => {
  const slack = new URL(
    'https://hooks.slack.com/services/T0123ABCD/B0123ABCD/abcdefghijklmnopqrstuvwx',
  );

  it.each([
    [slack.href, 'https://hooks.slack.com/…'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080/'],
    ['https://u:p@h.example/x?sig=1', 'https://h.example/…'],
  ])('are shown as scheme and host only: %s', (url, shown) => {
    expect(publicNotifyUrl(new URL(url))).toBe(shown);
  });

  it('give up as secrets their long path segments, query values and password, not short words', () => {
    const secrets = notifyUrlSecrets(
      new URL(
        'https://user:pa55word-long-1@h.example/services/abcdefghijklmnop?sig=0123456789abcdef&x=1',
      ),
    );
    expect(secrets).toEqual(['pa55word-long-1', 'abcdefghijklmnop', '0123456789abcdef']);
    expect(notifyUrlSecrets(slack)).toContain('abcdefghijklmnopqrstuvwx');
  });

  it('pick the Slack format with a slack: prefix', () => {
    const url = 'https://h.example/x';
    expect(splitNotifyUrl(`slack:${url}`, 'cloudevents')).toEqual({ url, format: 'slack' });
    expect(splitNotifyUrl(url, 'cloudevents')).toEqual({ url, format: 'cloudevents' });
  });
});

describe('judgeAttempt: the delivery policy', () => {
  const policy = {
    ...DEFAULT_NOTIFY_POLICY,
    maxAttempts: 3,
    baseDelayMs: 1000,
    maxDelayMs: 30_000,
  };
  const now = Date.parse('2026-11-23T02:00:00Z');
  const later = new Date(now + 12_000).toUTCString();

  it.each<[string, Attempt, number, string]>([
    ['a 2xx is delivered', { status: 204 }, 1, 'delivered'],
    ['no answer is tried again', { error: 'ECONNREFUSED' }, 1, 'ECONNREFUSED, transient, 1000'],
    ['a 5xx, after a doubling backoff', { status: 503 }, 2, 'HTTP 503, transient, 2000'],
    ['a 408', { status: 408 }, 1, 'HTTP 408, transient, 1000'],
    [
      'a 429, after its Retry-After',
      { status: 429, retryAfter: '7' },
      1,
      'HTTP 429, transient, 7000',
    ],
    ['Retry-After as a date', { status: 503, retryAfter: later }, 1, 'HTTP 503, transient, 12000'],
    ['Retry-After capped', { status: 429, retryAfter: '3600' }, 1, 'HTTP 429, transient, 30000'],
    ['out of attempts: failed', { status: 503 }, 3, 'HTTP 503, transient'],
    ['a redirect: never followed nor tried again', { status: 307 }, 1, 'HTTP 307, redirect'],
    ['a 301', { status: 301 }, 1, 'HTTP 301, redirect'],
    ['any other answer is a refusal', { status: 404 }, 1, 'HTTP 404, refused'],
    ['a 401', { status: 401 }, 1, 'HTTP 401, refused'],
  ])('%s', (_title, attempt, n, expected) => {
    const verdict = judgeAttempt(attempt, n, policy, now);
    const said = verdict === 'delivered' ? [verdict] : Object.values(verdict);
    expect(said.join(', ')).toBe(expected);
  });
});
