import { describe, expect, it } from 'vitest';
import { resolveDaemonSettings } from '../../src/config/daemon-settings.ts';
import type { ConfigFile } from '../../src/config/setting.ts';

const SLACK = 'https://hooks.slack.com/services/T0/B0/SecretPart0123456789';

function targets(settings: ReturnType<typeof resolveDaemonSettings>) {
  return settings.notify.targets.map((t) => [t.url.href, t.format]);
}

describe('notification settings: --notify-url, ENVSYNC_NOTIFY_URLS, notifyUrls', () => {
  it('a repeated flag, each URL in the default format unless slack: picks Slack', () => {
    const settings = resolveDaemonSettings(
      { 'notify-url': ['https://a.example/hook', `slack:${SLACK}`] },
      {},
      {},
    );
    expect(targets(settings)).toEqual([
      ['https://a.example/hook', 'cloudevents'],
      [SLACK, 'slack'],
    ]);
  });

  it('the environment variable is comma-separated; --notify-format sets the default format', () => {
    const settings = resolveDaemonSettings(
      {},
      {
        ENVSYNC_NOTIFY_URLS: ' https://a.example/x , https://b.example/y ',
        ENVSYNC_NOTIFY_FORMAT: 'slack',
      },
      {},
    );
    expect(targets(settings)).toEqual([
      ['https://a.example/x', 'slack'],
      ['https://b.example/y', 'slack'],
    ]);
  });

  it('the config file takes a list, the secret file relative to it, and the public URL', () => {
    const file = {
      notifyUrls: ['https://a.example/x'],
      notifySecretFile: 'secrets/notify',
      publicUrl: 'https://envsync.example.com/',
    } as ConfigFile;
    const settings = resolveDaemonSettings({}, {}, file, undefined, '/etc/envsync');
    expect(targets(settings)).toEqual([['https://a.example/x', 'cloudevents']]);
    expect(settings.notify.secretFile).toBe('/etc/envsync/secrets/notify');
    expect(settings.publicUrl).toBe('https://envsync.example.com');
  });

  it('none by default', () => {
    expect(resolveDaemonSettings({}, {}, {}).notify).toEqual({
      targets: [],
      secretFile: undefined,
    });
  });

  it('a wrong URL is refused without repeating it (it may hold a credential)', () => {
    const wrong = ['ftp://h.example/SecretPart0123456789', 'not a url SecretPart0123456789'];
    for (const url of wrong) {
      let message = '';
      try {
        resolveDaemonSettings({ 'notify-url': ['https://ok.example/', url] }, {}, {});
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('--notify-url: the 2nd URL');
      expect(message).not.toContain('SecretPart');
    }
  });
});
