// Drives bench/roundtrip.py's K-iteration workflow through the TypeScript SDK
// (the built clients/typescript/dist) and prints every per-iteration latency
// in microseconds as JSON. Started by `python -m bench.roundtrip`:
//
//   node bench/ts/roundtrip.mjs --address 127.0.0.1:50051 --iterations 50 --runs 20
import { parseArgs } from "node:util";
import { createForgeClient, workflow } from "../../clients/typescript/dist/index.js";

const { values } = parseArgs({
  options: {
    address: { type: "string", default: "127.0.0.1:50051" },
    iterations: { type: "string", default: "50" },
    runs: { type: "string", default: "20" },
    warmup: { type: "string", default: "1" },
  },
});
const iterations = Number(values.iterations);
const runs = Number(values.runs);
const warmup = Number(values.warmup);

function build(stamps) {
  return workflow("roundtrip", "Benchmark: call step until done, then finish.")
    .tool(
      "step",
      "One step.",
      { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
      async ({ i }) => {
        stamps.push(process.hrtime.bigint());
        return `ok ${i}`;
      },
    )
    .tool("finish", "Finish.", { type: "object", properties: {} }, async () => {
      stamps.push(process.hrtime.bigint());
      return "done";
    })
    .terminal("finish");
}

const client = createForgeClient({ address: values.address });
const samples = [];
try {
  for (let n = 0; n < warmup + runs; n++) {
    const stamps = [];
    const result = await client.run(build(stamps), "go", { options: { maxIterations: iterations } });
    if (result.iterations !== iterations) {
      throw new Error(`run ${n} ended after ${result.iterations} iterations`);
    }
    if (n < warmup) continue;
    for (let i = 1; i < stamps.length; i++) {
      samples.push(Number(stamps[i] - stamps[i - 1]) / 1e3);
    }
  }
} finally {
  client.close();
}
process.stdout.write(`${JSON.stringify({ samples_us: samples })}\n`);
