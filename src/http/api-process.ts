/**
 * How the API role's Node process is started (package.json's `start:api`, the Dockerfile, compose,
 * the cluster starter and the benchmarks). V8 sizes the young generation by the machine's memory:
 * here 64 MB idle and 128 MB under load, so the API sat at about 200 MB RSS before its first request
 * and peaked at 337–371 MB under `ack-bench`'s front door. A semi-space of 8 MB (the worker's too)
 * brought the peak to 207–239 MB at the same acks and sales a second, for more frequent and shorter
 * scavenges (about 58 in 10 s at 300 deliveries a second against 7, 120–177 ms of pauses in all
 * against 76–91, none over 10 ms). The old space is left to V8: uploads and the stamping thread's
 * handover need room the front door does not.
 */
export const API_NODE_FLAGS = ['--max-semi-space-size=8'] as const;
