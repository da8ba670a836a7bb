/** Test helpers: the real Forge server as a child process on a free loopback port. */

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type ForgeClientOptions, RequestRejectedError, createForgeClient } from "@forge-sidecar/client";

/** The repository root (the folder holding proto/forge/v1), found from this file. */
export const REPO_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "proto", "forge", "v1"))) {
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error("cannot find the repository root (proto/forge/v1) above the tests");
    }
    dir = parent;
  }
  return dir;
})();

export const CASES_DIR = join(REPO_ROOT, "tests", "conformance", "cases");

/** The interpreter that runs forge_server: $FORGE_PYTHON or the repo's .venv. */
export const PYTHON = process.env["FORGE_PYTHON"] ?? resolve(REPO_ROOT, ".venv", "bin", "python");

export async function freePort(): Promise<number> {
  return await new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === "string") {
          reject(new Error("no port"));
        } else {
          resolvePort(address.port);
        }
      });
    });
  });
}

export interface RunningServer {
  address: string;
  /** What the server wrote to stderr so far (for failure messages). */
  log(): string;
  /** Kill at once (to simulate a lost server). */
  kill(): void;
  /** SIGTERM and wait for the process to exit. */
  stop(): Promise<number | null>;
  process: ChildProcess;
}

/**
 * Start `python -m forge_server --port <free> ...args` and wait until a client
 * with the `ready` options (default: plaintext to that port) gets an answer to
 * GetServerInfo (a refusal, e.g. UNAUTHENTICATED from a server started with
 * --auth-token-file, is an answer too). Throws (so the tests fail, never skip)
 * when it cannot start. `port`: listen there instead (e.g. a restart on the
 * port of a server that was killed).
 */
export async function startForgeServer(
  args: string[],
  readyTimeoutMs: number,
  ready: ForgeClientOptions = {},
  port?: number,
): Promise<RunningServer> {
  port ??= await freePort();
  const address = `127.0.0.1:${port}`;
  const proc = spawn(PYTHON, ["-m", "forge_server", "--host", "127.0.0.1", "--port", String(port), ...args], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr?.setEncoding("utf8");
  proc.stderr?.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  const exited = new Promise<number | null>((resolveExit) => {
    proc.once("exit", (code) => resolveExit(code));
    proc.once("error", (err) => {
      stderr += `\nspawn ${PYTHON} failed: ${err.message}`;
      resolveExit(-1);
    });
  });
  const server: RunningServer = {
    address,
    process: proc,
    log: () => stderr,
    kill: () => {
      proc.kill("SIGKILL");
    },
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
        const code = await exited;
        clearTimeout(timer);
        return code;
      }
      return proc.exitCode;
    },
  };
  // `ready`: how a client reaches a server started with TLS or --listen.
  const client = createForgeClient({ address, ...ready });
  try {
    await Promise.race([
      client.waitForReady({ timeoutMs: readyTimeoutMs }).catch((err: unknown) => {
        if (!(err instanceof RequestRejectedError)) {
          throw err;
        }
      }),
      exited.then((code) => {
        throw new Error(`forge_server exited (code ${code}) before it answered`);
      }),
    ]);
  } catch (err) {
    await server.stop();
    throw new Error(
      `could not start the Forge server (${PYTHON} -m forge_server ${args.join(" ")}): ${String(err)}\n${stderr}`,
    );
  } finally {
    client.close();
  }
  return server;
}
