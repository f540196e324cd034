/** Per-request context the engine needs besides the Pod (for example a stable hash seed). */
export interface MutationContext {
  readonly requestUid: string;
  /**
   * The Pod's 0-based number among its workload's Pods, from a counter the caller keeps (managed placement's Diversity
   * places a Pod by it); recorded in the stamp with the uid, so that a later review of the Pod gets it back.
   */
  readonly sequence?: number;
  /** Why a sequence number the managed steps need could not be had (a counter that failed or was late, a dry run). */
  readonly sequenceUnavailable?: string;
}
