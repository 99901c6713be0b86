/**
 * A manifest of org acme with one environment of each flavour, shared by integration tests.
 * `include_scaling` is false: the production service (the emulator's kosli profile) retired the
 * setting and keeps it false.
 */
export const ACME = `org: acme
environments:
  - name: production
    type: K8S
    description: Production cluster
    include_scaling: false
    policies: [pci, baseline]
  - name: staging
    type: S3
    description: Staging bucket
`;
