/**
 * The functions' stand-in for @smithy/core/event-streams, swapped in by the build (esbuild alias). The SDK imports it
 * (a dynamic import in @smithy/core's HttpProtocol) only to serialise an operation's event stream member, and none of
 * the operations the functions call has one (DynamoDB, Secrets Manager, EKS, CloudWatch: request and response bodies
 * only). Measured, it is 14.9 KiB of the admission bundle: what lib/capacity's judgment of changed Pods adds is paid for
 * here, so the bundle stays within 5% of its size before that judgment.
 */

/** Refuses, naming this file: reached only if an operation with an event stream is ever called from a function. */
function refuse(): never {
  throw new Error('event streams are not bundled into the functions (functions/shims/event-streams.ts)');
}

/** Never constructed for the functions' operations; see the file's comment. */
class EventStreamSerde {
  constructor() {
    refuse();
  }
}

/** Never called for the functions' operations; see the file's comment. */
const eventStreamSerdeProvider = (): never => refuse();

export { EventStreamSerde, eventStreamSerdeProvider };
