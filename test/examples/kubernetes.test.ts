import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { resolveDaemonSettings } from '../../src/config/daemon-settings.ts';
import { resolveSettings } from '../../src/config/settings.ts';
import { NAME_PATTERN } from '../../src/core/names.ts';
import type { Daemon } from '../../src/daemon/daemon.ts';
import { Masker } from '../../src/core/mask.ts';
import { startDaemonServer, webhookRefusal } from '../../src/daemon/http.ts';
import { envsyncInProcess } from '../helpers/cli.ts';
import {
  applyJsonPatch,
  objectFiles,
  patchOperations,
  readKustomization,
  runFlagsOf,
} from '../helpers/k8s.ts';

/**
 * examples/kubernetes has no cluster to run in here, so these tests hold its YAML to what envsync
 * and git-sync really accept and answer, and to how the pieces must line up, in both variants:
 * base/ (one replica) and with sharded/'s patch applied (test/system/kustomize.test.ts checks
 * that kustomize renders sharded/ the same).
 */

const DIR = fileURLToPath(new URL('../../examples/kubernetes/', import.meta.url));
const PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));

type Strings = Record<string, string>;
type Mount = { name: string; mountPath: string; readOnly?: boolean; subPath?: string };
type Probe = { httpGet?: { path: string; port: string | number } };
type Container = {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Strings; limits?: Strings };
  securityContext?: {
    runAsUser?: number;
    runAsGroup?: number;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: Mount[];
};
type Volume = {
  name: string;
  emptyDir?: object;
  secret?: { secretName: string; items?: object[] };
};
type PodSpec = {
  terminationGracePeriodSeconds?: number;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; fsGroup?: number };
  initContainers?: Container[];
  containers: Container[];
  volumes?: Volume[];
};
type Selector = { matchLabels?: Strings };
type Resource = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Strings };
  stringData?: Strings;
  data?: Strings;
  automountServiceAccountToken?: boolean;
};
type Workload = Resource & {
  spec: {
    replicas?: number;
    serviceName?: string;
    podManagementPolicy?: string;
    persistentVolumeClaimRetentionPolicy?: { whenScaled?: string; whenDeleted?: string };
    selector: { matchLabels: Strings };
    template: { metadata: { labels: Strings }; spec: PodSpec };
    volumeClaimTemplates?: {
      metadata: { name: string };
      spec: { accessModes?: string[]; resources?: { requests?: Strings } };
    }[];
  };
};
type Service = Resource & {
  spec: {
    clusterIP?: string;
    publishNotReadyAddresses?: boolean;
    selector: Strings;
    ports: { name: string; port: number; targetPort: string | number }[];
  };
};
type ServiceMonitor = Resource & {
  spec: { selector: { matchLabels: Strings }; endpoints: { port: string; path: string }[] };
};
type PodDisruptionBudget = Resource & {
  spec: {
    maxUnavailable?: number | string;
    minAvailable?: number | string;
    unhealthyPodEvictionPolicy?: string;
    selector: Selector;
  };
};
type Peer = { podSelector?: Selector; namespaceSelector?: Selector; ipBlock?: { cidr: string } };
type Rule = { ports?: { protocol?: string; port?: number | string }[] };
type NetworkPolicy = Resource & {
  spec: {
    podSelector: Selector;
    policyTypes?: string[];
    ingress?: (Rule & { from?: Peer[] })[];
    egress?: (Rule & { to?: Peer[] })[];
  };
};

async function loadAll(): Promise<Map<string, Resource[]>> {
  const files = new Map<string, Resource[]>();
  // The kustomizations are kustomize's: the test below reads them, kustomize.test.ts renders them.
  for (const file of objectFiles(DIR)) {
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
  const named = (r: Resource) => name === undefined || r.metadata.name === name;
  const found = resources.filter((r) => r.kind === kind && named(r));
  if (found.length !== 1)
    throw new Error(`expected one ${kind} ${name ?? ''}, found ${found.length}`);
  return found[0] as Resource;
};
const single = one('StatefulSet') as Workload;
const shardedPatches = readKustomization(path.join(DIR, 'sharded')).patches ?? [];
const shardOperations = patchOperations(shardedPatches[0]?.patch ?? '');
const sharded = applyJsonPatch(single, shardOperations);
const variants = [['one replica', single] as const, ['sharded', sharded] as const];
const networkPolicy = one('NetworkPolicy') as NetworkPolicy;

/** `found`, or an error naming what is missing. */
function present<T>(found: T | undefined, what: string): T {
  if (found === undefined) throw new Error(`the StatefulSet has no ${what}`);
  return found;
}
const container = (workload: Workload, name: string): Container =>
  present(
    workload.spec.template.spec.containers.find((c) => c.name === name),
    `container ${name}`,
  );
const allContainers = (workload: Workload) => [
  ...(workload.spec.template.spec.initContainers ?? []),
  ...workload.spec.template.spec.containers,
];
const volume = (workload: Workload, name: string): Volume =>
  present(
    workload.spec.template.spec.volumes?.find((v) => v.name === name),
    `volume ${name}`,
  );

/** Whether `selector` picks a pod with `labels` (matchLabels only: the examples use no other). */
function selects(selector: Selector | undefined, labels: Record<string, string>): boolean {
  expect(Object.keys(selector ?? {}).filter((k) => k !== 'matchLabels')).toEqual([]);
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
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

/** The envsync container's flags, as `run`'s own parser reads them. */
const runFlags = (workload: Workload) => runFlagsOf(container(workload, 'envsync').args ?? []);

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

/** The Secret of secret.example.yaml named `name`. */
const secretNamed = (name: string) => one('Secret', name);

/** The orgs of examples/manifests, in name order. */
async function exampleOrgs(): Promise<string[]> {
  const root = fileURLToPath(new URL('../../examples/manifests/', import.meta.url));
  const orgs = new Set<string>();
  for (const file of await readdir(root, { recursive: true })) {
    if (!/\.ya?ml$/.test(file)) continue;
    for (const doc of parseAllDocuments(await readFile(path.join(root, file), 'utf8'))) {
      const org = (doc.toJS() as { org?: string } | null)?.org;
      if (org !== undefined) orgs.add(org);
    }
  }
  return [...orgs].sort();
}

/** The port a URL connects to: its own, or its scheme's. */
function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  const port = ({ 'https:': 443, 'http:': 80, 'ssh:': 22 } as Record<string, number>)[url.protocol];
  if (port === undefined) throw new Error(`no default port for ${url.protocol}`);
  return port;
}

describe('examples/kubernetes', () => {
  it('every file parses as YAML and holds the kinds its README describes', () => {
    const kinds = Object.fromEntries(
      [...all].map(([file, docs]) => [file, docs.map((d) => d.kind)]),
    );
    expect(kinds).toEqual({
      'base/networkpolicy.yaml': ['NetworkPolicy'],
      'base/poddisruptionbudget.yaml': ['PodDisruptionBudget'],
      'base/service.yaml': ['Service'],
      'base/serviceaccount.yaml': ['ServiceAccount'],
      'base/statefulset.yaml': ['StatefulSet'],
      'monitoring/prometheusrule.yaml': ['PrometheusRule'],
      'monitoring/servicemonitor.yaml': ['ServiceMonitor'],
      'secret.example.yaml': ['Secret', 'Secret'],
    });
  });

  it('every object but the Secrets is in a kustomization; both variants build on base/ with settings/, monitoring/ is a component', () => {
    const listed = (folder: string) =>
      (readKustomization(path.join(DIR, folder)).resources ?? []).map((r) => `${folder}/${r}`);
    const base = readKustomization(path.join(DIR, 'base'));
    const monitoring = readKustomization(path.join(DIR, 'monitoring'));
    expect([base.kind, monitoring.kind]).toEqual(['Kustomization', 'Component']);
    // settings/ is a component with no object of its own: it changes base/'s.
    const settings = readKustomization(path.join(DIR, 'settings'));
    expect([settings.kind, settings.resources]).toEqual(['Component', undefined]);
    // Nothing left beside them: the Secrets are created from files (their placeholders aside).
    expect([...listed('base'), ...listed('monitoring'), 'secret.example.yaml'].sort()).toEqual(
      objectFiles(DIR),
    );
    expect(readKustomization(DIR).resources).toEqual(['base']);
    expect(readKustomization(path.join(DIR, 'sharded')).resources).toEqual(['../base']);
    // What a team sets comes in both variants; the operator's kinds are opt-in, so that a
    // cluster without the operator can apply.
    expect(readKustomization(DIR).components).toEqual(['settings']);
    expect(readKustomization(path.join(DIR, 'sharded')).components).toEqual(['../settings']);
  });

  it.each(variants)(
    '%s: envsync run accepts every flag its envsync container passes',
    async (_variant, workload) => {
      const args = container(workload, 'envsync').args ?? [];
      // The CLI's own parser, run's (strict, with run's flag set, booleans refusing values); --help
      // ends the run before it starts anything, so it runs in this process.
      const result = await envsyncInProcess([...args, '--help'], { endsBeforeStart: true });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain('Usage: envsync run');
    },
  );

  it('the flag check turns down a flag envsync run does not know', async () => {
    // The control for the test above: the same call fails on an unknown or mistyped flag.
    const args = container(single, 'envsync').args ?? [];
    for (const wrong of ['--no-such-flag', '--shard-from-hostname=true', '--output=json']) {
      const result = await envsyncInProcess([...args, wrong, '--help'], { endsBeforeStart: true });
      expect(result.code, wrong).toBe(1);
    }
  });

  it.each(variants)(
    '%s: the flag values are valid and the listen port is the metrics port the probes use',
    async (_variant, workload) => {
      const flags = runFlags(workload);
      const settings = await resolveSettings(flags, {}, '/');
      const daemon = daemonSettings(workload);
      const envsyncContainer = container(workload, 'envsync');

      expect(settings.apiUrl).toMatch(/^https:\/\//);
      expect(daemon.listen).toEqual({ host: '0.0.0.0', port: 9464 });
      expect(envsyncContainer.ports).toContainEqual({ name: 'metrics', containerPort: 9464 });
      const probe = (at: string) => ({ path: at, port: 'metrics' });
      expect(envsyncContainer.livenessProbe?.httpGet).toEqual(probe('/healthz'));
      expect(envsyncContainer.readinessProbe?.httpGet).toEqual(probe('/readyz'));
      // The kubelet's SIGKILL must not cut the graceful stop short.
      const grace = workload.spec.template.spec.terminationGracePeriodSeconds ?? 30;
      expect(daemon.shutdownTimeoutMs).toBeLessThan(grace * 1000);
    },
  );

  it.each(variants)(
    "%s: git-sync calls envsync's POST /reconcile on its port and counts the answer as success",
    async (_variant, workload) => {
      const gitSync = gitSyncFlags(container(workload, 'git-sync'));
      const webhook = new URL(gitSync.get('webhook-url') ?? '');
      expect(['localhost', '127.0.0.1']).toContain(webhook.hostname);
      expect(Number(webhook.port)).toBe(daemonSettings(workload).listen.port);
      expect(webhook.pathname).toBe('/reconcile');
      expect(gitSync.get('webhook-method') ?? 'POST').toBe('POST');

      // What envsync really answers, from its real endpoint; git-sync's default expects 200.
      const stub = {
        webhook: () => ({ runAt: Date.now(), joined: false }),
        secrets: new Masker(),
      } as unknown as Daemon;
      const loopback = { host: '127.0.0.1', port: 0 };
      const server = await startDaemonServer(stub, loopback, pino({ level: 'silent' }));
      try {
        const answer = await request(`${server.url}/reconcile`, { method: 'POST' });
        await answer.body.dump();
        expect(Number(gitSync.get('webhook-success-status') ?? 200)).toBe(answer.statusCode);
      } finally {
        await server.close();
      }
    },
  );

  it.each(variants)(
    '%s: only the pod itself posts to the webhook without its secret, which a Secret holds',
    (_variant, workload) => {
      // The NetworkPolicy admits Prometheus to the port POST /reconcile shares: the secret is
      // what turns its posts (and any other caller's beyond loopback) away.
      const secretFile = runFlags(workload)['webhook-secret-file'] ?? '';
      const mount = mountHolding(container(workload, 'envsync'), secretFile);
      const secretVolume = volume(workload, mount?.name ?? '').secret;
      expect(mount?.readOnly).toBe(true);
      const keys = Object.keys(secretNamed(secretVolume?.secretName ?? '').stringData ?? {});
      expect(keys).toEqual([path.posix.relative(mount?.mountPath ?? '', secretFile)]);
      // git-sync's localhost is loopback, IPv4 or IPv6, and passes without it...
      const gitSync = gitSyncFlags(container(workload, 'git-sync'));
      expect(new URL(gitSync.get('webhook-url') ?? '').hostname).toBe('localhost');
      for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
        expect(webhookRefusal('s', address, {}, Buffer.alloc(0)), address).toBeUndefined();
      // ...and a Prometheus pod (any pod address) is refused without it.
      expect(webhookRefusal('s', '10.42.3.17', {}, Buffer.alloc(0))).toBeDefined();
    },
  );

  it.each(variants)(
    '%s: envsync reads the manifests through the link git-sync publishes in their shared volume',
    (_variant, workload) => {
      const envsyncContainer = container(workload, 'envsync');
      const manifests = runFlags(workload).manifests ?? '';
      const syncers = allContainers(workload).filter((c) => c.image.includes('/git-sync:'));
      expect(syncers.map((c) => c.name)).toEqual(['git-sync-init', 'git-sync']);
      const [init, sidecar] = syncers.map(gitSyncFlags);
      // The init container's one sync must publish what the sidecar then keeps up to date.
      for (const flag of ['repo', 'ref', 'root', 'link'])
        expect(init?.get(flag), flag).toBe(sidecar?.get(flag));
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

  it.each(variants)(
    '%s: the token directory is the Secret mounted whole, one key per org of the example manifests',
    async (_variant, workload) => {
      const tokenDir = runFlags(workload)['token-dir'] ?? '';
      expect(tokenDir).not.toBe('');
      const c = container(workload, 'envsync');
      const mount = c.volumeMounts?.find((m) => m.mountPath.replace(/\/$/, '') === tokenDir);
      const secretVolume = volume(workload, mount?.name ?? '').secret;
      const secret = secretNamed(secretVolume?.secretName ?? '');
      // With a subPath the kubelet never updates the files after a rotation; with `items`, an
      // org's key added to the Secret would never reach the pod.
      expect([mount?.subPath, mount?.readOnly]).toEqual([undefined, true]);
      expect(secretVolume?.items).toBeUndefined();
      const keys = [...Object.keys(secret.stringData ?? {}), ...Object.keys(secret.data ?? {})];
      // Each key is a file envsync reads as that org's token: a name an org may have.
      for (const key of keys) expect(NAME_PATTERN.test(key), key).toBe(true);
      expect(keys.toSorted()).toEqual(await exampleOrgs());
    },
  );

  it.each(variants)(
    '%s: every container runs as non-root on a read-only root, with bounded resources',
    (_variant, workload) => {
      const pod = workload.spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      for (const c of allContainers(workload)) {
        const security = c.securityContext;
        expect(security?.runAsUser ?? pod.securityContext?.runAsUser, c.name).toBeGreaterThan(0);
        expect(security?.readOnlyRootFilesystem, c.name).toBe(true);
        expect(security?.allowPrivilegeEscalation, c.name).toBe(false);
        expect(security?.capabilities?.drop, c.name).toEqual(['ALL']);
        for (const kind of ['requests', 'limits'] as const) {
          const bounded = Object.keys(c.resources?.[kind] ?? {}).sort();
          expect(bounded, `${c.name} ${kind}`).toEqual(['cpu', 'memory']);
        }
      }
    },
  );

  it.each(variants)(
    "%s: the state file is on each pod's own PersistentVolumeClaim, which outlives the pod",
    (_variant, workload) => {
      // The one thing envsync writes, at /var/lib/envsync, on a volume no other replica mounts.
      const state = runFlags(workload).state ?? '';
      expect(path.posix.dirname(state)).toBe('/var/lib/envsync');
      const mount = mountHolding(container(workload, 'envsync'), state);
      expect(mount?.readOnly).not.toBe(true);
      // A claim from the template (one per ordinal), not a volume of the pod: a pod volume of that
      // name would be an emptyDir or a claim every replica shares.
      expect(workload.spec.template.spec.volumes?.map((v) => v.name)).not.toContain(mount?.name);
      const claims = workload.spec.volumeClaimTemplates ?? [];
      const claim = claims.find((c) => c.metadata.name === mount?.name);
      expect(claim?.spec.accessModes).toEqual(['ReadWriteOnce']);
      expect(claim?.spec.resources?.requests?.storage).toMatch(/^\d+[MG]i$/);
      // A replica scaled away takes its claim along: records other replicas have since made
      // untrue never come back with a later scale-up.
      const retention = { whenScaled: 'Delete', whenDeleted: 'Retain' };
      expect(workload.spec.persistentVolumeClaimRetentionPolicy).toEqual(retention);
      // envsync (not root) can write it: the kubelet gives the volume the pod's fsGroup.
      const envsyncGroup = container(workload, 'envsync').securityContext?.runAsGroup;
      expect(workload.spec.template.spec.securityContext?.fsGroup).toBe(envsyncGroup);
    },
  );

  it.each(variants)(
    '%s: the pods run as a ServiceAccount of their own, with no API token mounted',
    (_variant, workload) => {
      const pod = workload.spec.template.spec;
      const account = one('ServiceAccount', pod.serviceAccountName);
      expect(account.automountServiceAccountToken).toBe(false);
      expect(pod.automountServiceAccountToken).toBe(false);
    },
  );

  it('one replica never runs two reconcilers at once', () => {
    // A StatefulSet never runs two pods with one ordinal, not even during an update.
    expect([single.kind, single.spec.replicas]).toEqual(['StatefulSet', 1]);
    const flags = runFlags(single);
    expect([flags['shard-count'], flags['shard-from-hostname']]).toEqual([undefined, undefined]);
  });

  it('sharded gives each replica its own shard, by its pod name, behind the headless Service', () => {
    const flags = runFlags(sharded);
    expect(flags['shard-from-hostname']).toBe(true);
    const replicas = sharded.spec.replicas ?? 1;
    expect(Number(flags['shard-count'])).toBe(replicas);
    expect(replicas).toBe(3);
    // A StatefulSet names its pods <name>-<ordinal>; each must resolve to its own shard.
    const shards = Array.from({ length: replicas }, (_, i) => daemonSettings(sharded, i).shard);
    expect(shards).toEqual([0, 1, 2].map((index) => ({ index, count: replicas })));

    const headless = one('Service', sharded.spec.serviceName) as Service;
    expect(headless.spec.clusterIP).toBe('None');
    expect(sharded.spec.template.metadata.labels).toMatchObject(headless.spec.selector);
  });

  it('sharded changes only what a StatefulSet lets change in place, so either variant replaces the other', () => {
    // serviceName, selector, podManagementPolicy and volumeClaimTemplates are immutable: the
    // patch must leave them as base/ has them (which starts its shards in parallel already).
    for (const operation of shardOperations)
      expect(operation.path, operation.op).toMatch(/^\/spec\/(replicas$|template\/)/);
    expect(single.spec.podManagementPolicy).toBe('Parallel');
    const immutable = ({ spec }: Workload) => ({
      ...spec,
      replicas: undefined,
      template: undefined,
    });
    expect(immutable(sharded)).toEqual(immutable(single));
  });

  it('the PodDisruptionBudget lets a drain evict one envsync pod at a time, ready or not', () => {
    const budget = one('PodDisruptionBudget') as PodDisruptionBudget;
    // The StatefulSet's pods, and only those.
    expect(budget.spec.selector.matchLabels).toEqual(single.spec.selector.matchLabels);
    expect([budget.spec.maxUnavailable, budget.spec.minAvailable]).toEqual([1, undefined]);
    // Unready pods (every org failing while the API is down) must not block the drain either.
    expect(budget.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });

  it('the NetworkPolicy admits Prometheus to the listen port only', () => {
    for (const [, { spec }] of variants)
      expect(selects(networkPolicy.spec.podSelector, spec.template.metadata.labels)).toBe(true);
    // Both directions are isolated: a direction not listed here would stay open.
    expect(networkPolicy.spec.policyTypes?.sort()).toEqual(['Egress', 'Ingress']);
    const [rule, ...others] = networkPolicy.spec.ingress ?? [];
    expect(others).toEqual([]);
    expect(rule?.ports).toEqual([{ protocol: 'TCP', port: daemonSettings(single).listen.port }]);
    // A rule without `from`, or a peer with an empty selector, admits every pod; a peer with one
    // selector of the two admits a whole namespace, or that label in envsync's namespace only.
    expect(rule?.from?.length).toBeGreaterThan(0);
    for (const peer of rule?.from ?? []) {
      expect(peer.ipBlock).toBeUndefined();
      expect(Object.keys(peer.namespaceSelector?.matchLabels ?? {}).length).toBeGreaterThan(0);
      expect(Object.keys(peer.podSelector?.matchLabels ?? {}).length).toBeGreaterThan(0);
    }
  });

  it.each(variants)(
    "%s: the NetworkPolicy lets the pod out to DNS, the API's port and git-sync's only",
    (_variant, workload) => {
      const apiPort = portOf(new URL(runFlags(workload)['api-url'] ?? ''));
      const repo = gitSyncFlags(container(workload, 'git-sync')).get('repo') ?? '';
      const repoPort = portOf(new URL(repo));
      const rules = networkPolicy.spec.egress ?? [];
      for (const rule of rules) {
        // A rule without `to` (or `ports`) lets the pod out to every address (or port).
        expect(rule.to?.length).toBeGreaterThan(0);
        expect(rule.ports?.length).toBeGreaterThan(0);
      }
      const dns = rules.filter((rule) =>
        rule.to?.every((peer) => peer.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns'),
      );
      expect(dns.flatMap((rule) => rule.ports)).toEqual([
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ]);
      // Outside the cluster, addresses only (NetworkPolicy cannot name a host), never the world.
      const outside = rules.filter((rule) => rule.to?.every((peer) => peer.ipBlock !== undefined));
      expect(dns.length + outside.length).toBe(rules.length);
      for (const peer of outside.flatMap((rule) => rule.to ?? []))
        expect(peer.ipBlock?.cidr).not.toMatch(/^(0\.0\.0\.0|::)\/0$/);
      expect(outside.flatMap((rule) => rule.ports)).toEqual([
        { protocol: 'TCP', port: apiPort },
        { protocol: 'TCP', port: repoPort },
      ]);
    },
  );

  it('the ServiceMonitor scrapes /metrics on the metrics port of the one Service that selects the envsync pods', () => {
    const monitor = one('ServiceMonitor') as ServiceMonitor;
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    const selected = resources.filter(
      (r): r is Service =>
        r.kind === 'Service' && selects(monitor.spec.selector, r.metadata.labels ?? {}),
    );
    // One Service only: two would scrape every pod twice.
    expect(selected.map((s) => s.metadata.name)).toEqual([single.spec.serviceName]);
    const [service] = selected;
    expect(monitor.spec.endpoints).toEqual([
      expect.objectContaining({ port: 'metrics', path: '/metrics' }),
    ]);
    expect(service?.spec.ports).toContainEqual({
      name: 'metrics',
      port: 9464,
      targetPort: 'metrics',
    });
    // Headless, so that every pod is a target of its own; unready pods too, when metrics matter.
    expect(service?.spec.clusterIP).toBe('None');
    expect(service?.spec.publishNotReadyAddresses).toBe(true);
    for (const [, { spec }] of variants) {
      expect(spec.template.metadata.labels).toMatchObject(service?.spec.selector ?? {});
      expect(spec.template.metadata.labels).toMatchObject(spec.selector.matchLabels);
    }
  });

  it('the example image is the current version of envsync, in base/ and in the settings that set it', async () => {
    const { version } = JSON.parse(await readFile(PACKAGE, 'utf8')) as { version: string };
    const current = new RegExp(`/envsync:${version}$`);
    for (const [, workload] of variants)
      expect(container(workload, 'envsync').image).toMatch(current);
    const settings = await readFile(path.join(DIR, 'settings/settings.env'), 'utf8');
    expect(/^image=(.+)$/m.exec(settings)?.[1]).toMatch(current);
  });
});
