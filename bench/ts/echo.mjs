// The floor for a Node gRPC round trip, as bench/roundtrip.py's measure_echo
// measures Python's: a bidirectional stream to bench/echo.py
// ("/bench.Echo/Chat", raw bytes both ways, one reply per message). Each
// iteration writes the payload, reads the reply and takes a timestamp; prints
// every per-iteration latency in microseconds as JSON ({"samples_us": [...]}).
//
//   node bench/ts/echo.mjs --address 127.0.0.1:50099 --iterations 50 --runs 20 \
//       --warmup 1 --request-bytes 18
//
// The client is the HTTP/2 stack the TypeScript SDK's transport runs on
// (@connectrpc/connect-node's Http2SessionManager and HTTP/2 client, from
// clients/typescript/node_modules), with the same gRPC envelope pipeline as
// Connect's gRPC transport (serialize, compress, join; split, decompress,
// parse), only with an identity serializer in place of protobuf, like the
// Python echo's. So this is what any Forge round trip through that library
// costs before Forge's messages and the SDK's own work.
import { parseArgs } from "node:util";
import {
  Http2SessionManager,
  createNodeHttpClient,
} from "../../clients/typescript/node_modules/@connectrpc/connect-node/dist/esm/index.js";
import {
  pipe,
  transformCompressEnvelope,
  transformDecompressEnvelope,
  transformJoinEnvelopes,
  transformParseEnvelope,
  transformSerializeEnvelope,
  transformSplitEnvelope,
} from "../../clients/typescript/node_modules/@connectrpc/connect/dist/esm/protocol/index.js";
import {
  requestHeader,
  validateResponse,
  validateTrailer,
} from "../../clients/typescript/node_modules/@connectrpc/connect/dist/esm/protocol-grpc/index.js";

const { values } = parseArgs({
  options: {
    address: { type: "string", default: "127.0.0.1:50099" },
    iterations: { type: "string", default: "50" },
    runs: { type: "string", default: "20" },
    warmup: { type: "string", default: "1" },
    "request-bytes": { type: "string", default: "18" },
  },
});
const iterations = Number(values.iterations);
const runs = Number(values.runs);
const warmup = Number(values.warmup);
const payload = new Uint8Array(Number(values["request-bytes"])).fill("r".charCodeAt(0));
const MAX_BYTES = 16 * 1024 * 1024;

/** Raw bytes both ways: what bench/echo.py's _identity is on the Python side. */
const identity = { serialize: (data) => data, parse: (data) => data };

/** The request stream: writes wait for the pipeline to pull them, as the SDK's AsyncQueue does. */
class Writer {
  items = [];
  waiter = undefined;
  closed = false;
  write(item) {
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }
  close() {
    this.closed = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.({ value: undefined, done: true });
  }
  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift(), done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
    };
  }
}

/** Connect's pipeline needs a full async generator (with throw()) as its source; the SDK wraps its queue the same way. */
async function* generate(source) {
  yield* source;
}

/**
 * One Chat stream: the request writer and the reply iterator. The response
 * headers come with the first reply, so the first message must be written
 * before this is awaited.
 */
async function openChat(httpClient, baseUrl, writer) {
  const controller = new AbortController();
  const res = await httpClient({
    url: `${baseUrl}/bench.Echo/Chat`,
    method: "POST",
    header: requestHeader(true, undefined, {}),
    signal: controller.signal,
    body: pipe(
      generate(writer),
      transformSerializeEnvelope(identity),
      transformCompressEnvelope(null, 0),
      transformJoinEnvelopes(),
      { propagateDownStreamError: true },
    ),
  });
  const { headerError } = validateResponse(res.status, res.header);
  if (headerError) throw headerError;
  const replies = pipe(
    res.body,
    transformSplitEnvelope(MAX_BYTES),
    transformDecompressEnvelope(null, MAX_BYTES),
    transformParseEnvelope(identity),
    { propagateDownStreamError: true },
  )[Symbol.asyncIterator]();
  return { replies, res };
}

const baseUrl = `http://${values.address}`;
const session = new Http2SessionManager(baseUrl);
const httpClient = createNodeHttpClient({ httpVersion: "2", sessionProvider: () => session });
const samples = [];
try {
  for (let n = 0; n < warmup + runs; n++) {
    const writer = new Writer();
    const stamps = [process.hrtime.bigint()];
    writer.write(payload);
    const { replies, res } = await openChat(httpClient, baseUrl, writer);
    for (let i = 0; i < iterations; i++) {
      if (i > 0) writer.write(payload);
      const reply = await replies.next();
      if (reply.done) throw new Error(`the echo stream ended after ${i} replies`);
      stamps.push(process.hrtime.bigint());
    }
    writer.close();
    for (;;) {
      if ((await replies.next()).done) break;
    }
    validateTrailer(res.trailer, res.header);
    if (n < warmup) continue;
    for (let i = 1; i < stamps.length; i++) {
      samples.push(Number(stamps[i] - stamps[i - 1]) / 1e3);
    }
  }
} finally {
  session.abort();
}
process.stdout.write(`${JSON.stringify({ samples_us: samples })}\n`);
