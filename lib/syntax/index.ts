/** The syntax of every value read: Kubernetes names and labels, AWS and deployment identifiers, the webhook token. */
export {
  AWS_REGION,
  CLOUDFORMATION_STACK_NAME,
  CLUSTER_ID,
  CLUSTER_UID,
  EKS_CLUSTER_NAME,
  isDns1123Label,
  isDns1123Subdomain,
  isHttpUrl,
  isInt64,
  labelValueProblem,
  qualifiedNameProblem,
  SECRET_ARN,
  SERVERLESS_STAGE,
  TABLE_NAME,
} from './syntax.ts';
export type { ValueRule } from './syntax.ts';
export { WEBHOOK_TOKEN_FORM, WEBHOOK_TOKEN_PATTERN } from './token.ts';
