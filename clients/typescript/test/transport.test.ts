/**
 * Transports against the real forge-server (scripted backend): TLS
 * (--tls-cert/--tls-key), mutual TLS (--tls-client-ca) and a Unix domain
 * socket (--listen unix:///path). The certificates come from
 * tests/tls_certs.py, as for the other SDKs.
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  ConnectionLostError,
  type ForgeClientOptions,
  type TlsOptions,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { z } from "zod";
import { PYTHON, REPO_ROOT, type RunningServer, startForgeServer } from "./helpers.js";

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, args }] });

/** One two-step weather run per workflow name, replayed by the scripted backend. */
const SCRIPTS: Record<string, unknown[]> = Object.fromEntries(
  ["ts_tls", "ts_mtls", "ts_unix"].map((name) => [
    name,
    [call("get_weather", { city: "Paris" }), call("report", { city: "Paris", weather: "sunny" })],
  ]),
);

const weatherArgs = z.object({ city: z.string().describe("City name") });
const reportArgs = z.object({ city: z.string(), weather: z.string() });

/** get_weather (required) + report (terminal); get_weather records the cities it is asked for. */
function weatherWorkflow(name: string, cities: string[]) {
  return workflow(name, "Look up the weather, then report it.")
    .tool("get_weather", "Get the current weather for a city", weatherArgs, async ({ city }) => {
      cities.push(city);
      return `sunny in ${city}`;
    })
    .tool("report", "Report the weather. Ends the task.", reportArgs, async (a) => ({
      text: `${a.city}: ${a.weather}`,
    }))
    .require("get_weather")
    .terminal("report");
}

interface Certs {
  caPath: string;
  ca: Buffer;
  serverCert: string;
  serverKey: string;
  clientCert: Buffer;
  clientKey: Buffer;
}

/** A fresh CA with a server and a client certificate (`python -m tests.tls_certs DIR`); each call makes another CA. */
function makeCerts(dir: string): Certs {
  execFileSync(PYTHON, ["-m", "tests.tls_certs", dir], { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  return {
    caPath: join(dir, "ca.pem"),
    ca: readFileSync(join(dir, "ca.pem")),
    serverCert: join(dir, "server.pem"),
    serverKey: join(dir, "server.key"),
    clientCert: readFileSync(join(dir, "client.pem")),
    clientKey: readFileSync(join(dir, "client.key")),
  };
}

/**
 * A scripted server started with `args` (which say how it listens), ready once
 * a client with the `ready` options gets its server info.
 */
function startServer(script: string, args: string[], ready: ForgeClientOptions): Promise<RunningServer> {
  return startForgeServer(["--backend", "scripted", "--script", script, ...args], 60_000, ready);
}

/** Runs the scripted weather workflow `name` and checks its result and the handler's calls. */
async function runWeather(options: ForgeClientOptions, name: string, server: RunningServer): Promise<void> {
  const client = createForgeClient(options);
  try {
    const info = await client.serverInfo();
    assert.equal(info.backend, "scripted");
    assert.ok(info.version.length > 0, "no server version");
    const cities: string[] = [];
    const result = await client.run(weatherWorkflow(name, cities), "What's the weather in Paris?").catch((err) => {
      throw new Error(`run ${name}: ${String(err)}\nserver log:\n${server.log()}`);
    });
    assert.equal(result.terminalTool, "report");
    assert.deepEqual(result.value, { text: "Paris: sunny" });
    assert.ok(result.runId.length > 0, "no run id");
    assert.deepEqual(cities, ["Paris"]);
  } finally {
    client.close();
  }
}

/** serverInfo() with these options must fail with ConnectionLostError; returns it. */
async function refused(options: ForgeClientOptions): Promise<ConnectionLostError> {
  const client = createForgeClient(options);
  try {
    const err = await client.serverInfo({ timeoutMs: 5_000 }).then(
      () => assert.fail(`serverInfo() over ${JSON.stringify(options.address)} succeeded`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ConnectionLostError, `${String(err)} is not a ConnectionLostError`);
    return err;
  } finally {
    client.close();
  }
}

let dir: string;
let script: string;
let certs: Certs;
let otherCerts: Certs;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "forge-ts-tp-"));
  script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPTS));
  certs = makeCerts(mkdtempSync(join(dir, "certs-")));
  otherCerts = makeCerts(mkdtempSync(join(dir, "other-")));
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("TLS", () => {
  let server: RunningServer;
  let address: string;
  let trusted: TlsOptions;

  before(async () => {
    trusted = { ca: certs.ca };
    server = await startServer(script, ["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey], {
      tls: trusted,
    });
    address = server.address;
  });

  after(async () => {
    await server?.stop();
  });

  test("a client trusting the CA gets server info and completes a run", async () => {
    await runWeather({ address, tls: trusted }, "ts_tls", server);
  });

  test("a plaintext client raises ConnectionLostError", async () => {
    await refused({ address });
  });

  test("a client trusting another CA raises ConnectionLostError naming the certificate", async () => {
    const err = await refused({ address, tls: { ca: otherCerts.ca } });
    assert.match(err.message, /certificate/i);
  });
});

describe("mutual TLS", () => {
  let server: RunningServer;
  let address: string;
  let withCert: TlsOptions;

  before(async () => {
    withCert = { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey };
    server = await startServer(
      script,
      ["--tls-cert", certs.serverCert, "--tls-key", certs.serverKey, "--tls-client-ca", certs.caPath],
      { tls: withCert },
    );
    address = server.address;
  });

  after(async () => {
    await server?.stop();
  });

  test("a client presenting a certificate of the CA gets server info and completes a run", async () => {
    await runWeather({ address, tls: withCert }, "ts_mtls", server);
  });

  test("a client with the CA but no certificate raises ConnectionLostError", async () => {
    await refused({ address, tls: { ca: certs.ca } });
  });

  test("a client certificate another CA signed raises ConnectionLostError", async () => {
    await refused({ address, tls: { ca: certs.ca, cert: otherCerts.clientCert, key: otherCerts.clientKey } });
  });

  test("a plaintext client raises ConnectionLostError", async () => {
    await refused({ address });
  });
});

describe("Unix domain socket", () => {
  let server: RunningServer;
  let socket: string;

  before(async () => {
    socket = join(dir, "forge.sock");
    server = await startServer(script, ["--listen", `unix://${socket}`], { address: `unix://${socket}` });
  });

  after(async () => {
    await server?.stop();
  });

  test("the server listens on the socket", () => {
    assert.ok(statSync(socket).isSocket(), `${socket} is not a socket`);
  });

  test("a client with a unix:///abs/path address gets server info and completes a run", async () => {
    await runWeather({ address: `unix://${socket}` }, "ts_unix", server);
  });

  test("a unix:/abs/path address reaches the same socket", async () => {
    const client = createForgeClient({ address: `unix:${socket}` });
    try {
      assert.equal((await client.serverInfo()).backend, "scripted");
    } finally {
      client.close();
    }
  });

  test("a socket path without a server raises ConnectionLostError", async () => {
    const err = await refused({ address: `unix://${join(dir, "none.sock")}` });
    assert.match(err.message, /ENOENT|none\.sock/);
  });

  test("TLS over a Unix socket and an address without a path are refused at construction", () => {
    assert.throws(() => createForgeClient({ address: `unix://${socket}`, tls: true }), TypeError);
    assert.throws(() => createForgeClient({ address: "unix://" }), TypeError);
    assert.throws(() => createForgeClient({ address: "unix://host/forge.sock" }), TypeError);
  });
});
