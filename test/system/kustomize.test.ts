/**
 * `kubectl apply -k examples/kubernetes` (and `sharded/`, with or without monitoring) works:
 * kustomize itself renders each kustomization, every object valid for its schema, and a team's
 * settings come from settings/settings.env alone. `.ci/run` installs kubectl.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  applyJsonPatch,
  type K8sObject,
  patchOperations,
  readKustomization,
} from '../helpers/k8s.ts';
import {
  EXAMPLE_DIR as DIR,
  EXAMPLE_KINDS,
  kinds,
  kustomize,
  MONITORING_KINDS,
  turnOnMonitoring,
  withExampleCopy,
} from '../helpers/kustomize.ts';

/** A team's settings: every value other than the example's. */
const TEAM_SETTINGS = {
  repository: 'git@git.example.org:platform/environments.git',
  branch: 'release',
  'api-url': 'https://api.example.net:8443',
  'api-cidr': '192.0.2.0/28',
  'api-port': '8443',
  'git-cidr': '198.51.100.7/32',
  'git-port': '22',
  'prometheus-namespace': 'observability',
  image: `ghcr.io/acme/envsync:0.2.0@sha256:${'0123456789abcdef'.repeat(4)}`,
};

interface Rendered {
  spec: {
    template: {
      spec: {
        initContainers: { args: string[] }[];
        containers: { name: string; image: string; args: string[] }[];
      };
    };
    ingress: { from: { namespaceSelector: { matchLabels: Record<string, string> } }[] }[];
    egress: { to: { ipBlock?: { cidr: string } }[]; ports: { port: number }[] }[];
  };
}

/** `objects` with the team's settings put where the settings component must put them. */
function withTeamSettings(objects: K8sObject[]): K8sObject[] {
  return objects.map((object) => {
    const o = structuredClone(object) as K8sObject & Rendered;
    if (o.kind === 'StatefulSet') {
      const { initContainers, containers } = o.spec.template.spec;
      for (const gitSync of [initContainers[0], containers.find((c) => c.name === 'git-sync')])
        gitSync?.args.splice(0, 2, `--repo=${TEAM_SETTINGS.repository}`, '--ref=release');
      const envsync = containers.find((c) => c.name === 'envsync');
      if (envsync === undefined) throw new Error('no envsync container');
      envsync.image = TEAM_SETTINGS.image;
      envsync.args[envsync.args.findIndex((a) => a.startsWith('--api-url='))] =
        `--api-url=${TEAM_SETTINGS['api-url']}`;
    }
    if (o.kind === 'NetworkPolicy') {
      const [, api, git] = o.spec.egress;
      if (api === undefined || git === undefined) throw new Error('no API or git rule');
      [api.to, api.ports[0], git.to, git.ports[0]] = [
        [{ ipBlock: { cidr: TEAM_SETTINGS['api-cidr'] } }],
        { ...api.ports[0], port: 8443 },
        [{ ipBlock: { cidr: TEAM_SETTINGS['git-cidr'] } }],
        { ...git.ports[0], port: 22 },
      ];
      const selector = o.spec.ingress[0]?.from[0]?.namespaceSelector.matchLabels ?? {};
      selector['kubernetes.io/metadata.name'] = TEAM_SETTINGS['prometheus-namespace'];
    }
    return o;
  });
}

describe('examples/kubernetes kustomizations', () => {
  it('the one-replica variant renders the StatefulSet and what goes with it, each valid for its schema', () => {
    const objects = kustomize(DIR);
    expect(kinds(objects)).toEqual(EXAMPLE_KINDS);
    // The settings reach the envsync container: its image is the one settings.env names.
    const statefulSet = objects.find((o) => o.kind === 'StatefulSet');
    expect(JSON.stringify(statefulSet)).toContain('"image":"ghcr.io/your-org/envsync:0.2.0"');
  });

  it("sharded/ renders the same objects, with the StatefulSet test/examples reads (base/'s, patched)", () => {
    const single = kustomize(DIR);
    const sharded = kustomize(path.join(DIR, 'sharded'));
    const others = (objects: K8sObject[]) => objects.filter((o) => o.kind !== 'StatefulSet');
    expect(others(sharded)).toEqual(others(single));
    // What test/examples/kubernetes.test.ts checks without kustomize must be what kustomize makes
    // (the shipped settings.env holds base/'s own values).
    const base = parse(readFileSync(path.join(DIR, 'base/statefulset.yaml'), 'utf8')) as unknown;
    const [patch] = readKustomization(path.join(DIR, 'sharded')).patches ?? [];
    const expected = applyJsonPatch(base, patchOperations(patch?.patch ?? ''));
    expect(sharded.find((o) => o.kind === 'StatefulSet')).toEqual(expected);
    expect(expected).not.toEqual(single.find((o) => o.kind === 'StatefulSet'));
  });

  it("a team's settings.env reaches every place it belongs in both variants, base/ untouched, and changes nothing else", async () => {
    const single = kustomize(DIR);
    const sharded = kustomize(path.join(DIR, 'sharded'));
    await withExampleCopy((dir) => {
      const file = path.join(dir, 'settings/settings.env');
      const lines = Object.entries(TEAM_SETTINGS).map(([key, value]) => `${key}=${value}`);
      // The shipped file names exactly these keys: each of them is used below.
      const shipped = readFileSync(file, 'utf8').match(/^[a-z-]+(?==)/gm) ?? [];
      expect(shipped.sort()).toEqual(Object.keys(TEAM_SETTINGS).sort());
      writeFileSync(file, `# a team's settings\n${lines.join('\n')}\n`);

      const mine = kustomize(dir);
      expect(mine).toEqual(withTeamSettings(single));
      expect(mine).not.toEqual(single);
      expect(kustomize(path.join(dir, 'sharded'))).toEqual(withTeamSettings(sharded));
      // The settings' ConfigMap is kustomize's alone, never applied.
      expect(kinds(mine)).toEqual(EXAMPLE_KINDS);
      for (const name of ['statefulset.yaml', 'networkpolicy.yaml', 'kustomization.yaml'])
        expect(readFileSync(path.join(dir, 'base', name), 'utf8')).toBe(
          readFileSync(path.join(DIR, 'base', name), 'utf8'),
        );
    });
  });

  it('the monitoring component adds the ServiceMonitor and the PrometheusRule, from either variant', async () => {
    await withExampleCopy((dir) => {
      turnOnMonitoring(path.join(dir, 'kustomization.yaml'));
      turnOnMonitoring(path.join(dir, 'sharded/kustomization.yaml'));
      expect(kinds(kustomize(dir))).toEqual(MONITORING_KINDS);
      expect(kinds(kustomize(path.join(dir, 'sharded')))).toEqual(MONITORING_KINDS);
    });
  });

  it('an overlay of your own turns the component on as well, with the same objects', async () => {
    await withExampleCopy((dir, tmp) => {
      const overlay = path.join(tmp, 'overlay');
      const file = path.join(overlay, 'kustomization.yaml');
      mkdirSync(overlay);
      writeFileSync(
        file,
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n' +
          'resources:\n  - ../k\ncomponents:\n  - ../k/monitoring\n',
      );
      const objects = kustomize(overlay);
      turnOnMonitoring(path.join(dir, 'kustomization.yaml'));
      expect(objects).toEqual(kustomize(dir));
      expect(kinds(objects)).toEqual(MONITORING_KINDS);
    });
  });

  it('kustomize refuses a kustomization that names a missing file (the check is real)', async () => {
    await withExampleCopy((dir) => {
      const file = path.join(dir, 'base/kustomization.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace('- service.yaml', '- missing.yaml'));
      const result = spawnSync('kubectl', ['kustomize', dir], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain('missing.yaml');
    });
  });
});
