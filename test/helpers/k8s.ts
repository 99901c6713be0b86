/**
 * The Kubernetes schemas the examples are checked against (kubernetes-models), by apiVersion and
 * kind: an object of a kind with no schema here is an error, never a pass.
 */
import { Service, Secret } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

interface Validatable {
  validate(): void;
}
type Model = new (data: never) => Validatable;

const MODELS: Record<string, Model> = {
  'v1/Service': Service,
  'v1/Secret': Secret,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

export interface K8sObject {
  apiVersion: string;
  kind: string;
  [key: string]: unknown;
}

export function validateObject(object: K8sObject): void {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (model === undefined) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new model(object as never).validate();
}
