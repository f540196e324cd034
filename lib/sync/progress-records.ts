/** The sync records the migration progress reads and writes (the cluster-bound SyncRecordStore fits). */
interface ProgressRecords {
  /** When the last report ran; progress.ts still passes the cluster id, which the cluster-bound store ignores. */
  readReportTime(clusterId?: string): Promise<string | undefined>;
  /** Records when a report ran. */
  recordReport(at: string): Promise<void>;
}

export type { ProgressRecords };
