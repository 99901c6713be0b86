/** A manifest of org acme with one environment of each flavour, shared by integration tests. */
export const ACME = `org: acme
environments:
  - name: production
    type: K8S
    description: Production cluster
    include_scaling: true
    policies: [pci, baseline]
  - name: staging
    type: S3
    description: Staging bucket
`;
