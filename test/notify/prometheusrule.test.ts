import { readFile } from 'node:fs/promises';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { useDaemonWorld } from '../helpers/daemon.ts';

const RULE = new URL('../../examples/kubernetes/monitoring/prometheusrule.yaml', import.meta.url);
const world = useDaemonWorld([{ token: 'rule-token-1234', orgs: null }]);

describe('examples/kubernetes/monitoring/prometheusrule.yaml', () => {
  it('alerts on a failing org, invalid manifests, no successful pass and changes not converging, with metrics a real daemon exports', async () => {
    const rule = new PrometheusRule(parse(await readFile(RULE, 'utf8')) as never);
    rule.validate();
    const rules = (rule.spec?.groups ?? []).flatMap((group) => group.rules ?? []);
    expect(rules.map((r) => r.alert)).toEqual([
      'EnvsyncOrgFailing',
      'EnvsyncOrgManifestsInvalid',
      'EnvsyncNoSuccessfulPass',
      'EnvsyncChangesNotConverging',
    ]);
    const named = new Set(
      rules.flatMap((r) => String(r.expr).match(/\benvsync_[a-z0-9_]+/g) ?? []),
    );
    expect(named.size).toBeGreaterThanOrEqual(4);

    await world.tmp.write('manifests/acme.yaml', 'org: acme\nenvironments: []\n');
    const d = await world.start();
    await d.daemon.idle();
    const text = await (await request(`${d.url}/metrics`)).body.text();
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    for (const metric of named) expect(exported, metric).toContain(metric);
    // Labels the rule reads are the metrics' own.
    expect(text).toMatch(/^envsync_passes_total\{result="(success|partial)"\} \d+/m);
  });
});
