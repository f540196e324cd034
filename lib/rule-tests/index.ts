/**
 * `podmutation test`, the equivalent of `kyverno test` and `gator verify`: the PodMutationTest
 * file format and its reader, the offline run of each expected result against the engine, and the JUnit XML report.
 */
import { checkResult, patchedResource, type Aspect, type CaseFailure } from './expectations.ts';
import {
  DEFAULT_TEST_NAMESPACE,
  readRuleTest,
  TEST_API_VERSION,
  TEST_FILE_NAME,
  TEST_KIND,
  type ExpectedResult,
  type ExpectedScheduling,
  type ResourceReference,
  type RuleTest,
} from './format.ts';
import { junitReport, xmlAttribute, xmlText, type FailureLines } from './junit.ts';
import { findTestFiles, runTestFile, type CaseResult, type TestFileResult } from './run.ts';

export {
  TEST_FILE_NAME,
  TEST_API_VERSION,
  TEST_KIND,
  DEFAULT_TEST_NAMESPACE,
  readRuleTest,
  checkResult,
  patchedResource,
  findTestFiles,
  runTestFile,
  junitReport,
  xmlText,
  xmlAttribute,
};
export type {
  Aspect,
  CaseFailure,
  CaseResult,
  ExpectedResult,
  ExpectedScheduling,
  FailureLines,
  ResourceReference,
  RuleTest,
  TestFileResult,
};
