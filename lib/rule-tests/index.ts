/**
 * `podmutation test`, the equivalent of `kyverno test` and `gator verify`: the PodMutationTest
 * file format and its reader, the offline run of each expected result against the engine, and the JUnit XML report.
 */
import { type CaseFailure } from './expectations.ts';
import { TEST_FILE_NAME } from './format.ts';
import { junitReport } from './junit.ts';
import { findTestFiles, runTestFile, type TestFileResult } from './run.ts';

export { TEST_FILE_NAME, findTestFiles, runTestFile, junitReport };
export type { CaseFailure, TestFileResult };
