/**
 * The Helm chart as helm reads it: lint and template with each values file of charts/envsync/ci,
 * the invalid ones of test/fixtures/chart refused, a release named envsync rendering what kustomize
 * renders from examples/kubernetes, and the package pushed to a registry on loopback and pulled.
 * `.ci/run` installs helm, docker-registry and kubectl.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { resolveDaemonSettings } from '../../src/config/daemon-settings.ts';
import { resolveSettings } from '../../src/config/settings.ts';
import { CHART_DIR, DEFAULT_VALUES, invalidValues, VALUES_FILES } from '../helpers/chart.ts';
import { envsyncInProcess, runProcess } from '../helpers/cli.ts';
import { type K8sObject, objectsOf, runFlagsOf, validateObject } from '../helpers/k8s.ts';
import {
  EXAMPLE_DIR,
  EXAMPLE_KINDS,
  kinds,
  kustomize,
  MONITORING_KINDS,
  turnOnMonitoring,
  withExampleCopy,
} from '../helpers/kustomize.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const tmp = await tempDir('envsync-chart-');
afterAll(() => tmp.cleanup());

/** helm with its configuration, cache and registry logins in the test's folder. */
const ENV = {
  PATH: process.env['PATH'] ?? '',
  HOME: tmp.dir,
  HELM_CONFIG_HOME: tmp.path('helm/config'),
  HELM_CACHE_HOME: tmp.path('helm/cache'),
  HELM_DATA_HOME: tmp.path('helm/data'),
};
const helm = (...args: string[]) => runProcess('helm', args, { env: ENV, timeoutMs: 120_000 });
const valuesArgs = (...files: string[]) => files.flatMap((f) => ['-f', path.resolve(CHART_DIR, f)]);

/** What `helm template` renders for a release named envsync, each object checked. */
async function render(chart: string, ...args: string[]): Promise<K8sObject[]> {
  const result = await helm('template', 'envsync', chart, ...args);
  expect(result.code, result.stderr).toBe(0);
  const objects = objectsOf(result.stdout);
  for (const object of objects) expect(() => validateObject(object)).not.toThrow();
  return objects;
}

/** The labels helm adds to what kustomize renders: its own, the chart's and the version. */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/version'];
function withoutHelmLabels(objects: K8sObject[]): K8sObject[] {
  return objects
    .map((object) => {
      const copy = structuredClone(object) as K8sObject & { metadata: { labels: object } };
      const labels = copy.metadata.labels as Record<string, string>;
      for (const label of HELM_LABELS) {
        expect(labels[label], `${object.kind} ${label}`).toBeDefined();
        delete labels[label];
      }
      return copy;
    })
    .sort((a, b) => a.kind.localeCompare(b.kind));
}
const byKind = (objects: K8sObject[]) => objects.toSorted((a, b) => a.kind.localeCompare(b.kind));

interface Container {
  name: string;
  image: string;
  args: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  volumeMounts: { name: string; mountPath: string }[];
}
interface StatefulSet extends K8sObject {
  spec: {
    replicas: number;
    template: {
      spec: {
        initContainers: Container[];
        containers: Container[];
        volumes: { name: string; secret?: { secretName: string } }[];
        tolerations?: unknown[];
        affinity?: unknown;
        nodeSelector?: Record<string, string>;
        imagePullSecrets?: { name: string }[];
      };
    };
    volumeClaimTemplates: { spec: { storageClassName?: string; resources: unknown } }[];
  };
}
interface NetworkPolicy extends K8sObject {
  spec: { egress: { to: { ipBlock?: { cidr: string } }[]; ports: { port: number }[] }[] };
}
const one = (objects: K8sObject[], kind: string) => objects.find((o) => o.kind === kind);
const container = (set: StatefulSet, name: string) =>
  [...set.spec.template.spec.initContainers, ...set.spec.template.spec.containers].find(
    (c) => c.name === name,
  ) as Container;

describe('helm lint --strict', () => {
  it.each(VALUES_FILES)('passes with %s', async (file) => {
    const result = await helm('lint', '--strict', CHART_DIR, ...valuesArgs(file));
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it("fails with the chart's defaults alone, naming each value it requires", async () => {
    const result = await helm('lint', '--strict', CHART_DIR);
    expect(result.code).toBe(1);
    for (const where of ['/git/repository', '/api/url'])
      expect(result.stdout + result.stderr).toContain(`at '${where}'`);
  });

  it.each(invalidValues().map((v) => [v.name, v] as const))(
    'and helm template refuse %s, naming the value',
    async (_name, { file, where, word }) => {
      const values = [...valuesArgs(DEFAULT_VALUES), '-f', file];
      for (const result of [
        await helm('lint', '--strict', CHART_DIR, ...values),
        await helm('template', 'envsync', CHART_DIR, ...values),
      ]) {
        expect(result.code).toBe(1);
        const lines = `${result.stdout}\n${result.stderr}`.split('\n');
        expect(lines.filter((l) => l.includes(`at '${where}'`) && l.includes(word))).not.toEqual(
          [],
        );
      }
    },
  );
});

describe('helm template', () => {
  it.each(VALUES_FILES)(
    'with %s renders valid objects, monitoring only when asked, and flags envsync run takes',
    async (file) => {
      const objects = await render(CHART_DIR, ...valuesArgs(file));
      const values = parse(readFileSync(path.join(CHART_DIR, file), 'utf8')) as {
        monitoring?: { enabled?: boolean };
      };
      const monitoring = values.monitoring?.enabled === true;
      expect(kinds(objects)).toEqual(monitoring ? MONITORING_KINDS : EXAMPLE_KINDS);
      const set = one(objects, 'StatefulSet') as StatefulSet;
      const { args } = container(set, 'envsync');
      const help = await envsyncInProcess([...args, '--help'], { endsBeforeStart: true });
      expect(help.stderr).toBe('');
      expect(help.code).toBe(0);
      // The values parse as envsync parses them; each pod finds its own shard from its name.
      const flags = runFlagsOf(args);
      await expect(resolveSettings(flags, {}, '/')).resolves.toBeDefined();
      const shards = Array.from(
        { length: set.spec.replicas },
        (_, i) => resolveDaemonSettings(flags, { HOSTNAME: `envsync-${i}` }, {}).shard,
      );
      const count = set.spec.replicas;
      expect(shards).toEqual(
        count > 1 ? shards.map((_, index) => ({ index, count })) : [undefined],
      );
    },
  );

  it('a release named envsync renders the objects examples/kubernetes renders, in both variants, with and without monitoring', async () => {
    const defaults = valuesArgs(DEFAULT_VALUES);
    const chart = async (...set: string[]) =>
      withoutHelmLabels(await render(CHART_DIR, ...defaults, ...set.flatMap((s) => ['--set', s])));
    expect(await chart()).toEqual(byKind(kustomize(EXAMPLE_DIR)));
    expect(await chart('replicas=3')).toEqual(byKind(kustomize(path.join(EXAMPLE_DIR, 'sharded'))));
    let monitored: K8sObject[] = [];
    await withExampleCopy((dir) => {
      turnOnMonitoring(path.join(dir, 'kustomization.yaml'));
      monitored = byKind(kustomize(dir));
    });
    expect(kinds(monitored)).toContain('PrometheusRule');
    expect(await chart('monitoring.enabled=true')).toEqual(monitored);
  });

  it('the full values file puts each value where it belongs', async () => {
    const objects = await render(CHART_DIR, ...valuesArgs('ci/full-values.yaml'));
    const set = one(objects, 'StatefulSet') as StatefulSet;
    const pod = set.spec.template.spec;
    const envsync = container(set, 'envsync');
    expect(envsync.image).toBe(
      `registry.example.com/mirror/envsync:0.2.0@sha256:${'0123456789abcdef'.repeat(4)}`,
    );
    expect(envsync.args).toEqual(
      expect.arrayContaining([
        '--manifests=/git/repo/envs/manifests',
        '--api-url=https://environments.example.com:8443',
        '--interval=10m',
        '--shard-count=2',
        '--shard-from-hostname',
        '--token-file=/var/run/secrets/envsync/default',
        '--api-dialect=kosli',
        '--observe',
        '--sync-window=allow mon-fri 09:00 8h Europe/Berlin',
        '--sync-window=deny sat-sun 00:00 24h',
        '--notify-format=slack',
        '--notify-secret-file=/var/run/secrets/envsync-notifications/signing-secret',
        '--github-token-file=/var/run/secrets/envsync-notifications/github-token',
        '--github-api-url=https://github.example.com/api/v3',
        '--public-url=https://envsync.example.com',
        '--concurrency=4',
      ]),
    );
    expect(envsync.env).toEqual([
      {
        name: 'ENVSYNC_NOTIFY_URLS',
        valueFrom: { secretKeyRef: { name: 'envsync-notifications', key: 'urls' } },
      },
    ]);
    const secrets = Object.fromEntries(pod.volumes.map((v) => [v.name, v.secret?.secretName]));
    expect(secrets).toMatchObject({
      tokens: 'environments-api-tokens',
      'webhook-secret': 'environments-webhook',
      'git-secret': 'environments-deploy-key',
      notifications: 'envsync-notifications',
    });
    // An SSH repository: git-sync reads its key and known_hosts from /etc/git-secret itself.
    for (const name of ['git-sync-init', 'git-sync']) {
      const gitSync = container(set, name);
      expect(gitSync.args.slice(0, 2)).toEqual([
        '--repo=git@git.example.com:platform/environments.git',
        '--ref=release',
      ]);
      expect(gitSync.volumeMounts).toContainEqual(
        expect.objectContaining({ name: 'git-secret', mountPath: '/etc/git-secret' }),
      );
      expect(gitSync.env).toBeUndefined();
    }
    expect(container(set, 'git-sync').args).toContain('--period=1m');
    expect(pod.imagePullSecrets).toEqual([{ name: 'mirror-pull' }]);
    expect(pod.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(pod.tolerations).toHaveLength(1);
    expect(Object.keys(pod.affinity ?? {}).sort()).toEqual(['nodeAffinity', 'podAntiAffinity']);
    expect(set.spec.volumeClaimTemplates[0]?.spec).toMatchObject({
      storageClassName: 'fast-ssd',
      resources: { requests: { storage: '2Gi' } },
    });
    // The ports come from the addresses: the API's own, SSH's for the repository.
    const policy = one(objects, 'NetworkPolicy') as NetworkPolicy;
    const [dns, api, git, notify] = policy.spec.egress;
    expect(dns?.to).toContainEqual({ ipBlock: { cidr: '169.254.20.10/32' } });
    expect(api?.to).toEqual([
      { ipBlock: { cidr: '192.0.2.0/28' } },
      { ipBlock: { cidr: '192.0.2.64/28' } },
    ]);
    expect(api?.ports).toEqual([{ protocol: 'TCP', port: 8443 }]);
    expect(git?.ports).toEqual([{ protocol: 'TCP', port: 22 }]);
    expect(notify).toEqual({ to: [{ ipBlock: { cidr: '192.0.2.0/24' } }] });
    for (const kind of ['ServiceMonitor', 'PrometheusRule'])
      expect(JSON.stringify(one(objects, kind))).toContain('"release":"kube-prometheus-stack"');
  });

  it('an https repository with credentials gets its user name and password file from the Secret', async () => {
    const credentials = ['--set', 'git.credentialsSecret=environments-token'];
    const objects = await render(CHART_DIR, ...valuesArgs(DEFAULT_VALUES), ...credentials);
    const set = one(objects, 'StatefulSet') as StatefulSet;
    for (const name of ['git-sync-init', 'git-sync'])
      expect(container(set, name).env).toEqual([
        {
          name: 'GITSYNC_USERNAME',
          valueFrom: { secretKeyRef: { name: 'environments-token', key: 'username' } },
        },
        { name: 'GITSYNC_PASSWORD_FILE', value: '/etc/git-secret/password' },
      ]);
  });
});

describe('the packaged chart, through an OCI registry on loopback', () => {
  let registry: ChildProcess | undefined;
  let address = '';

  beforeAll(async () => {
    // Debian's docker-registry, on a port of its own choosing, storing in the test's folder.
    const config = tmp.path('registry.yml');
    writeFileSync(
      config,
      `version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: ${tmp.path('registry')}\n` +
        'http:\n  addr: 127.0.0.1:0\n',
    );
    const child = spawn('docker-registry', ['serve', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    registry = child;
    let log = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    child.once('error', (error) => (log += error.message));
    address = await waitFor('docker-registry to say where it listens', () => {
      const listening = /listening on (127\.0\.0\.1:\d+)/.exec(log)?.[1];
      if (listening === undefined) throw new Error(log);
      return listening;
    });
  });
  afterAll(() => {
    registry?.kill('SIGTERM');
  });

  it('helm push, then helm template from oci:// renders what the chart folder renders', async () => {
    const chart = parse(readFileSync(path.join(CHART_DIR, 'Chart.yaml'), 'utf8')) as object;
    const { version } = chart as { version: string };
    const packaged = await helm('package', CHART_DIR, '--destination', tmp.path('packages'));
    expect(packaged.code, packaged.stderr).toBe(0);
    const tarball = tmp.path('packages', `envsync-${version}.tgz`);
    const pushed = await helm('push', tarball, `oci://${address}/charts`, '--plain-http');
    expect(pushed.code, pushed.stderr).toBe(0);
    const digest = /^Digest: (sha256:[0-9a-f]{64})$/m.exec(pushed.stdout + pushed.stderr)?.[1];
    expect(digest).toBeDefined();

    const values = valuesArgs('ci/sharded-monitoring-values.yaml');
    const pull = `template envsync oci://${address}/charts/envsync --version ${version} --plain-http`;
    const fromRegistry = await helm(...pull.split(' '), ...values);
    expect(fromRegistry.code, fromRegistry.stderr).toBe(0);
    // The pull names the digest pushed: the very artifact, not one of the same name.
    expect(fromRegistry.stderr).toContain(`Digest: ${digest}`);
    const local = await render(CHART_DIR, ...values);
    expect(objectsOf(fromRegistry.stdout)).toEqual(local);
    expect(local.length).toBe(7);
  });
});
