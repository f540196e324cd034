/** The types of serverless/constant-conditions.mjs, for the TypeScript that imports it (its tests). */

/** A CloudFormation template as the renderer reads and returns it. */
export interface CloudFormationTemplate {
  readonly Conditions?: Readonly<Record<string, unknown>>;
  readonly Resources?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly Outputs?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly [section: string]: unknown;
}

/** The template with the conditions its literals decide rendered away. */
export function renderConstantConditions(template: CloudFormationTemplate): CloudFormationTemplate;
