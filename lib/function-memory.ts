/**
 * Memory settings of the Lambda functions, in a module of their own so that the bench can price
 * handler time without loading the CDK.
 */

/** Memory of a function unless its options say otherwise (MB). */
export const DEFAULT_MEMORY_MB = 256;
/**
 * Memory of the queues function (MB). Held for the whole of every long poll, so it is most of an
 * idle consumer's bill (Lambda bills GB-seconds, https://aws.amazon.com/lambda/pricing/), and
 * 128 MB is Lambda's least. The largest consume (a receive of 10 messages of 256 KiB, then an
 * answer of at most 2 MiB, `CONSUME_RESPONSE_BYTES` in lambda/queues/consume.ts) peaks at 95 to
 * 111 MiB of resident memory in a fresh Node 22 process, runtime included
 * (test/integration/queue-consume-memory.test.ts, docs/design/0025-consume-cost-and-keys.md); with
 * the 5 MiB answer it reached 124 MiB at 128 MB, hence the smaller answer. Every other queue route
 * holds less (a redrive round: 10 messages).
 */
export const QUEUES_MEMORY_MB = 128;
/**
 * Memory of the scheduler function (MB), the minute's tick and its shard workers alike: one vCPU
 * (Lambda gives CPU in proportion to memory, a whole vCPU at 1,769 MB:
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html). A handover is CPU-bound
 * (about 1.22 ms of a core measured locally), so a worker does about 820 a second, 36,900 in its
 * 45 s, and 64 workers about 2.4 million a minute; at 256 MB (0.145 vCPU) 64 workers would do
 * 340,000, short of a million. The Lambda cost per handover is the same at either size (GB x s).
 */
export const SCHEDULER_MEMORY_MB = 1769;
