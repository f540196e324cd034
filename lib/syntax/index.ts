/** The syntax of every value read: Kubernetes names and labels, AWS and deployment identifiers, the webhook token. */
import {
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
  type ValueRule,
} from './syntax.ts';
import { WEBHOOK_TOKEN_FORM, WEBHOOK_TOKEN_PATTERN } from './token.ts';

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
  WEBHOOK_TOKEN_FORM,
  WEBHOOK_TOKEN_PATTERN,
};
export type { ValueRule };
