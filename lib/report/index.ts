/**
 * Pure: what a rollout would change. For each running Pod, the Pod its controller would create from the workload's
 * current template, run through the engine as admission runs it and compared with the running Pod; folded into
 * per-rule and per-workload counts with bounded memory, and rendered as JSON, a table or restart commands.
 */
import { createReport, type ReportBuilder } from './builder.ts';
import { schedulingChangeLine } from './compare.ts';
import {
  evictionOf,
  renderReportTable,
  restartAction,
  restartCommands,
  restartPatch,
  type RestartMechanism,
} from './render.ts';
import type { MigrationReport, ReportPod, ReportWorkload } from './types.ts';

export {
  createReport,
  schedulingChangeLine,
  evictionOf,
  renderReportTable,
  restartAction,
  restartCommands,
  restartPatch,
};
export type { ReportBuilder, MigrationReport, ReportPod, ReportWorkload, RestartMechanism };
