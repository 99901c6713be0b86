/**
 * The notification settings beyond test/config: the environment's comma-separated list and
 * format, the config file's list, secret file and public URL, and a wrong URL never repeated.
 */
import { describe, expect, it } from 'vitest';
import { resolveDaemonSettings } from '../../src/config/daemon-settings.ts';
import type { ConfigFile } from '../../src/config/setting.ts';

const targets = (settings: ReturnType<typeof resolveDaemonSettings>) =>
  settings.notify.targets.map((t) => [t.url.href, t.format]);

describe('notification settings: --notify-url, ENVSYNC_NOTIFY_URLS, notifyUrls', () => {
  it('the environment variable is comma-separated; --notify-format sets the default format', () => {
    const env = {
      ENVSYNC_NOTIFY_URLS: ' https://a.example/x , slack:https://b.example/y ',
      ENVSYNC_NOTIFY_FORMAT: 'slack',
    };
    expect(targets(resolveDaemonSettings({}, env, {}))).toEqual([
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

  it('github://OWNER/REPO is that repository on --github-api-url, and needs a GitHub token', () => {
    const api = 'https://ghe.example/api/v3/';
    const flags = { 'notify-url': ['github://acme/infra'], 'github-api-url': api };
    const settings = resolveDaemonSettings(flags, { GITHUB_TOKEN: 'ghs-x' }, {});
    expect(targets(settings)).toEqual([[`${api}repos/acme/infra`, 'github']]);
    expect(settings.notify.githubToken).toBe('ghs-x');
    expect(() => resolveDaemonSettings(flags, {}, {})).toThrow(
      '--github-token-file PATH, or GITHUB_TOKEN',
    );
    const plain = { ...flags, 'github-api-url': 'http://ghe.example/api/v3' };
    expect(() => resolveDaemonSettings(plain, { GITHUB_TOKEN: 'ghs-x' }, {})).toThrow('clear text');
  });

  it.each(['ftp://h.example/SecretPart0123456789', 'not a url SecretPart0123456789'])(
    'refuses %j without repeating it (it may hold a credential)',
    (url) => {
      const resolve = () =>
        resolveDaemonSettings({ 'notify-url': ['https://ok.example/', url] }, {}, {});
      expect(resolve).toThrow('--notify-url: the 2nd URL');
      expect(resolve).not.toThrow(/SecretPart/);
    },
  );
});
