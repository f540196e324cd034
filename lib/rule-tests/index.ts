/**
 * `podmutation test`, the equivalent of `kyverno test` and `gator verify`: the PodMutationTest
 * file format and its reader, the offline run of each expected result against the engine, and the JUnit XML report.
 */
import { checkResult, patchedResource, type CaseFailure } from './expectations.ts';
import {
  readRuleTest,
  TEST_API_VERSION,
  TEST_FILE_NAME,
  TEST_KIND,
  type ExpectedResult,
  type RuleTest,
} from './format.ts';
import { junitReport, xmlAttribute, xmlText } from './junit.ts';
import { findTestFiles, runTestFile, testPlacementStep, type TestFileResult } from './run.ts';

export {
  TEST_FILE_NAME,
  TEST_API_VERSION,
  TEST_KIND,
  readRuleTest,
  checkResult,
  patchedResource,
  findTestFiles,
  runTestFile,
  testPlacementStep,
  junitReport,
  xmlText,
  xmlAttribute,
};
export type { CaseFailure, ExpectedResult, RuleTest, TestFileResult };
