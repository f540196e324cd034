/** `-n NAMESPACE` and `-A`, as kubectl reads them: the kubeconfig context's namespace unless one or all are asked for. */
import { Option } from 'commander';

/** The namespace flags of a command that reads a cluster's objects (report, rollout; `objects`: it takes --objects too). */
export function namespaceOptions(objects: 'with --objects' | 'cluster only'): Option[] {
  const fromFile = objects === 'with --objects' ? '; every namespace with --objects' : '';
  return [
    new Option('-n, --namespace <namespace>', 'only this namespace').default(
      undefined,
      `the kubeconfig context's namespace, as kubectl${fromFile}`,
    ),
    new Option('-A, --all-namespaces', 'every namespace').conflicts('namespace'),
  ];
}
