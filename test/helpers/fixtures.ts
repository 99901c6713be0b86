/**
 * A manifest of org acme with one environment of each flavour, shared by integration tests;
 * without `include_scaling`, which the production service (the emulator's kosli profile) retired.
 */
export const ACME = `org: acme
environments:
  - name: production
    type: K8S
    description: Production cluster
    policies: [pci, baseline]
  - name: staging
    type: S3
    description: Staging bucket
`;
