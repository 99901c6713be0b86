import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { resolveDaemonSettings } from '../../src/config/daemon-settings.ts';
import { flagOptions } from '../../src/config/flags.ts';
import { resolveSettings } from '../../src/config/settings.ts';
import { SETTINGS } from '../../src/config/settings-table.ts';
import type { FlagsOf } from '../../src/config/setting.ts';
import type { Daemon } from '../../src/daemon/daemon.ts';
import { startDaemonServer } from '../../src/daemon/http.ts';
import { envsyncInProcess } from '../helpers/cli.ts';

/**
 * examples/kubernetes has no cluster to run in here, so these tests hold its YAML to what envsync
 * and git-sync really accept and answer, and to how the pieces must line up.
 */

const DIR = fileURLToPath(new URL('../../examples/kubernetes/', import.meta.url));
const PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));

interface Mount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: {
    requests?: Record<string, string>;
    limits?: Record<string, string>;
  };
  securityContext?: {
    runAsUser?: number;
    runAsNonRoot?: boolean;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: Mount[];
}
interface Volume {
  name: string;
  emptyDir?: object;
  secret?: { secretName: string; items?: { key: string; path: string }[] };
}
interface PodSpec {
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  initContainers?: Container[];
  containers: Container[];
  volumes?: Volume[];
}
interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  stringData?: Record<string, string>;
  data?: Record<string, string>;
}
interface Workload extends Resource {
  spec: {
    replicas?: number;
    serviceName?: string;
    strategy?: { type: string };
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
interface Service extends Resource {
  spec: {
    clusterIP?: string;
    selector: Record<string, string>;
    ports: { name: string; port: number; targetPort: string | number }[];
  };
}
interface ServiceMonitor extends Resource {
  spec: {
    selector: { matchLabels: Record<string, string> };
    endpoints: { port: string; path: string }[];
  };
}

async function loadAll(): Promise<Map<string, Resource[]>> {
  const files = new Map<string, Resource[]>();
  // kustomization.yaml lists the others; test/system/kustomize.test.ts renders it with kustomize.
  const names = (await readdir(DIR)).filter(
    (f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml',
  );
  for (const file of names.sort()) {
    const docs = parseAllDocuments(await readFile(path.join(DIR, file), 'utf8'));
    if (!Array.isArray(docs)) throw new Error(`${file}: no YAML documents`);
    for (const doc of docs) {
      const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
      if (problems.length > 0) throw new Error(`${file}: ${problems.join('; ')}`);
    }
    files.set(
      file,
      docs.map((doc) => doc.toJS() as Resource),
    );
  }
  return files;
}

const all = await loadAll();
const resources = [...all.values()].flat();
const one = (kind: string, name?: string): Resource => {
  const found = resources.filter(
    (r) => r.kind === kind && (name === undefined || r.metadata.name === name),
  );
  if (found.length !== 1)
    throw new Error(`expected one ${kind} ${name ?? ''}, found ${found.length}`);
  return found[0] as Resource;
};
const deployment = one('Deployment') as Workload;
const statefulSet = one('StatefulSet') as Workload;
const secret = one('Secret');
const workloads = [deployment, statefulSet];

function container(workload: Workload, name: string): Container {
  const found = workload.spec.template.spec.containers.find((c) => c.name === name);
  if (found === undefined) throw new Error(`${workload.kind} has no container ${name}`);
  return found;
}
const allContainers = (workload: Workload) => [
  ...(workload.spec.template.spec.initContainers ?? []),
  ...workload.spec.template.spec.containers,
];
function volume(workload: Workload, name: string): Volume {
  const found = workload.spec.template.spec.volumes?.find((v) => v.name === name);
  if (found === undefined) throw new Error(`${workload.kind} has no volume ${name}`);
  return found;
}

/** git-sync's flags as `--name=value` (its documented form). */
function gitSyncFlags(c: Container): Map<string, string> {
  return new Map(
    (c.args ?? []).map((arg) => {
      const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
      if (match === null) throw new Error(`${c.name}: "${arg}" is not --flag=value`);
      return [match[1] ?? '', match[2] ?? 'true'];
    }),
  );
}

/**
 * The envsync container's `run` flags, parsed with the options envsync's own parser uses for
 * `run` (the CLI itself is checked too, in the tests below).
 */
function runFlags(workload: Workload) {
  const [command, ...rest] = container(workload, 'envsync').args ?? [];
  expect(command, `${workload.kind}: args replace the image's CMD, so they start with run`).toBe(
    'run',
  );
  return parseArgs({ args: rest, options: flagOptions(SETTINGS, 'run'), strict: true })
    .values as FlagsOf<typeof SETTINGS, 'run'>;
}

/** The daemon settings a pod of `workload` resolves, as the pod with that ordinal. */
const daemonSettings = (workload: Workload, ordinal = 0) =>
  resolveDaemonSettings(
    runFlags(workload),
    { HOSTNAME: `${workload.metadata.name}-${ordinal}` },
    {},
  );

/** Where the container sees `volumeName`, or undefined. */
const mountOf = (c: Container, volumeName: string) =>
  c.volumeMounts?.find((m) => m.name === volumeName);

/** The mount of `c` holding `file`, as the container sees it. */
function mountHolding(c: Container, file: string): Mount | undefined {
  return c.volumeMounts?.find((m) => file.startsWith(`${m.mountPath.replace(/\/$/, '')}/`));
}

describe('examples/kubernetes', () => {
  it('every file parses as YAML and holds the kinds its README describes', () => {
    const kinds = Object.fromEntries(
      [...all].map(([file, docs]) => [file, docs.map((d) => d.kind)]),
    );
    expect(kinds).toEqual({
      'deployment.yaml': ['Deployment'],
      'prometheusrule.yaml': ['PrometheusRule'],
      'secret.example.yaml': ['Secret'],
      'service.yaml': ['Service'],
      'servicemonitor.yaml': ['ServiceMonitor'],
      'statefulset.yaml': ['Service', 'StatefulSet'],
    });
  });

  it.each(workloads.map((w) => [w.kind, w] as const))(
    '%s: envsync run accepts every flag its envsync container passes',
    async (_kind, workload) => {
      const args = container(workload, 'envsync').args ?? [];
      // The CLI's own parser, run's (strict, with run's flag set, booleans refusing values); --help
      // ends the run before it starts anything, so it runs in this process.
      const result = await envsyncInProcess([...args, '--help'], { endsBeforeStart: true });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Usage: envsync run');
    },
  );

  it('the flag check turns down a flag envsync run does not know', async () => {
    // The control for the test above: the same call fails on an unknown or mistyped flag.
    const args = container(deployment, 'envsync').args ?? [];
    for (const wrong of ['--no-such-flag', '--shard-from-hostname=true', '--output=json']) {
      const result = await envsyncInProcess([...args, wrong, '--help'], { endsBeforeStart: true });
      expect(result.code, wrong).toBe(1);
    }
  });

  it.each(workloads.map((w) => [w.kind, w] as const))(
    '%s: the flag values are valid and the listen port is the metrics port the probes use',
    async (_kind, workload) => {
      const flags = runFlags(workload);
      const settings = await resolveSettings(flags, {}, '/');
      const daemon = daemonSettings(workload);
      const envsyncContainer = container(workload, 'envsync');

      expect(settings.apiUrl).toMatch(/^https:\/\//);
      expect(daemon.listen).toEqual({ host: '0.0.0.0', port: 9464 });
      expect(envsyncContainer.ports).toContainEqual({ name: 'metrics', containerPort: 9464 });
      expect(envsyncContainer.livenessProbe?.httpGet).toEqual({
        path: '/healthz',
        port: 'metrics',
      });
      expect(envsyncContainer.readinessProbe?.httpGet).toEqual({
        path: '/readyz',
        port: 'metrics',
      });
      // The kubelet's SIGKILL must not cut the graceful stop short.
      const grace = workload.spec.template.spec.terminationGracePeriodSeconds ?? 30;
      expect(daemon.shutdownTimeoutMs).toBeLessThan(grace * 1000);
    },
  );

  it.each(workloads.map((w) => [w.kind, w] as const))(
    "%s: git-sync calls envsync's POST /reconcile on its port and counts the answer as success",
    async (_kind, workload) => {
      const gitSync = gitSyncFlags(container(workload, 'git-sync'));
      const webhook = new URL(gitSync.get('webhook-url') ?? '');
      expect(['localhost', '127.0.0.1']).toContain(webhook.hostname);
      expect(Number(webhook.port)).toBe(daemonSettings(workload).listen.port);
      expect(webhook.pathname).toBe('/reconcile');
      expect(gitSync.get('webhook-method') ?? 'POST').toBe('POST');

      // What envsync really answers, from its real endpoint; git-sync's default expects 200.
      const stub = { webhook: () => ({ runAt: Date.now(), joined: false }) } as unknown as Daemon;
      const server = await startDaemonServer(
        stub,
        { host: '127.0.0.1', port: 0 },
        pino({ level: 'silent' }),
      );
      try {
        const answer = await request(`${server.url}/reconcile`, { method: 'POST' });
        await answer.body.dump();
        expect(Number(gitSync.get('webhook-success-status') ?? 200)).toBe(answer.statusCode);
      } finally {
        await server.close();
      }
    },
  );

  it.each(workloads.map((w) => [w.kind, w] as const))(
    '%s: envsync reads the manifests through the link git-sync publishes in their shared volume',
    (_kind, workload) => {
      const envsyncContainer = container(workload, 'envsync');
      const manifests = runFlags(workload).manifests ?? '';
      const syncers = allContainers(workload).filter((c) => c.image.includes('/git-sync:'));
      expect(syncers.map((c) => c.name)).toEqual(['git-sync-init', 'git-sync']);
      const [init, sidecar] = syncers.map(gitSyncFlags);
      // The init container's one sync must publish what the sidecar then keeps up to date.
      for (const flag of ['repo', 'ref', 'root', 'link']) {
        expect(init?.get(flag), flag).toBe(sidecar?.get(flag));
      }
      expect(init?.get('one-time')).toBe('true');
      expect(sidecar?.get('period')).toMatch(/^\d+[sm]$/);

      const root = sidecar?.get('root') ?? '';
      const link = sidecar?.get('link') ?? '';
      const gitSyncMount = mountHolding(container(workload, 'git-sync'), `${root}/${link}`);
      expect(gitSyncMount, 'git-sync --root is on a volume').toBeDefined();
      expect(volume(workload, gitSyncMount?.name ?? '').emptyDir).toBeDefined();
      const seenByEnvsync = mountOf(envsyncContainer, gitSyncMount?.name ?? '');
      expect(seenByEnvsync?.readOnly).toBe(true);
      const linkInEnvsync = path.posix.join(
        seenByEnvsync?.mountPath ?? '',
        path.posix.relative(gitSyncMount?.mountPath ?? '', path.posix.join(root, link)),
      );
      expect(manifests.startsWith(`${linkInEnvsync}/`)).toBe(true);
    },
  );

  it.each(workloads.map((w) => [w.kind, w] as const))(
    '%s: the token file is a key of the Secret, mounted whole so that a rotation reaches it',
    (_kind, workload) => {
      const tokenFile = runFlags(workload)['token-file'] ?? '';
      const mount = mountHolding(container(workload, 'envsync'), tokenFile);
      const secretVolume = volume(workload, mount?.name ?? '').secret;
      expect(secretVolume?.secretName).toBe(secret.metadata.name);
      // With a subPath the kubelet never updates the file after a rotation.
      expect(mount?.subPath).toBeUndefined();
      expect(mount?.readOnly).toBe(true);
      const key = path.posix.relative(mount?.mountPath ?? '', tokenFile);
      const keys = secretVolume?.items?.map((i) => i.path) ?? [
        ...Object.keys(secret.stringData ?? {}),
        ...Object.keys(secret.data ?? {}),
      ];
      expect(keys).toContain(key);
    },
  );

  it.each(workloads.map((w) => [w.kind, w] as const))(
    '%s: every container runs as non-root on a read-only root, with bounded resources',
    (_kind, workload) => {
      const pod = workload.spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      for (const c of allContainers(workload)) {
        const security = c.securityContext;
        expect(security?.runAsUser ?? pod.securityContext?.runAsUser, c.name).toBeGreaterThan(0);
        expect(security?.readOnlyRootFilesystem, c.name).toBe(true);
        expect(security?.allowPrivilegeEscalation, c.name).toBe(false);
        expect(security?.capabilities?.drop, c.name).toEqual(['ALL']);
        for (const kind of ['requests', 'limits'] as const) {
          expect(Object.keys(c.resources?.[kind] ?? {}).sort(), `${c.name} ${kind}`).toEqual([
            'cpu',
            'memory',
          ]);
        }
      }
      // The state file is the one thing envsync writes: a writable emptyDir at /var/lib/envsync.
      const state = runFlags(workload).state ?? '';
      expect(path.posix.dirname(state)).toBe('/var/lib/envsync');
      const mount = mountHolding(container(workload, 'envsync'), state);
      expect(mount?.readOnly).not.toBe(true);
      expect(volume(workload, mount?.name ?? '').emptyDir).toBeDefined();
    },
  );

  it('the Deployment never runs two reconcilers at once', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy?.type).toBe('Recreate');
    expect(runFlags(deployment)['shard-count']).toBeUndefined();
  });

  it('the StatefulSet gives each replica its own shard, by its pod name, behind a headless Service', () => {
    const flags = runFlags(statefulSet);
    expect(flags['shard-from-hostname']).toBe(true);
    const replicas = statefulSet.spec.replicas ?? 1;
    expect(Number(flags['shard-count'])).toBe(replicas);
    expect(replicas).toBe(3);
    // A StatefulSet names its pods <name>-<ordinal>; each must resolve to its own shard.
    const shards = Array.from(
      { length: replicas },
      (_, ordinal) => daemonSettings(statefulSet, ordinal).shard,
    );
    expect(shards).toEqual([0, 1, 2].map((index) => ({ index, count: replicas })));

    const headless = one('Service', statefulSet.spec.serviceName) as Service;
    expect(headless.spec.clusterIP).toBe('None');
    expect(statefulSet.spec.template.metadata.labels).toMatchObject(headless.spec.selector);
  });

  it('the ServiceMonitor scrapes /metrics on the metrics port of one Service that selects the envsync pods', () => {
    const monitor = one('ServiceMonitor') as ServiceMonitor;
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    const selected = resources.filter(
      (r): r is Service =>
        r.kind === 'Service' &&
        Object.entries(monitor.spec.selector.matchLabels).every(
          ([key, value]) => r.metadata.labels?.[key] === value,
        ),
    );
    // One Service only: two would scrape every pod twice.
    expect(selected.map((s) => s.metadata.name)).toEqual(['envsync-metrics']);
    const [service] = selected;
    expect(monitor.spec.endpoints).toEqual([
      expect.objectContaining({ port: 'metrics', path: '/metrics' }),
    ]);
    expect(service?.spec.ports).toContainEqual({
      name: 'metrics',
      port: 9464,
      targetPort: 'metrics',
    });
    for (const workload of workloads) {
      expect(workload.spec.template.metadata.labels).toMatchObject(service?.spec.selector ?? {});
      expect(workload.spec.template.metadata.labels).toMatchObject(
        workload.spec.selector.matchLabels,
      );
    }
    // Two controllers must not claim each other's pods.
    expect(deployment.spec.selector.matchLabels).not.toEqual(statefulSet.spec.selector.matchLabels);
  });

  it('the example image is the current version of envsync', async () => {
    const { version } = JSON.parse(await readFile(PACKAGE, 'utf8')) as { version: string };
    for (const workload of workloads) {
      expect(container(workload, 'envsync').image).toMatch(new RegExp(`/envsync:${version}$`));
    }
  });
});
