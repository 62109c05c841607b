#!/usr/bin/env node
// Drives Tether's Daytona fake (tests/support/daytona, the program
// daytona_fake) with Daytona's official SDK, @daytonaio/sdk at the version
// package-lock.json pins: create, exec, upload, download, file details, a
// session command's followed logs (a WebSocket) and its exit code, input to
// a running command, stop, start (the files kept), delete. Then every route
// the SDK called must be in Daytona's published specification
// (spec-routes.json, with its version), with the same method.
//
//   node sdk_test.js DAYTONA_FAKE SPEC_ROUTES_JSON
//
// Exit 0 passed, 1 failed, 77 skipped (no SDK installed: Node < 20, which
// it needs, or scripts/install-daytona-sdk not run — the reason is printed).
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const path = require("path");
const readline = require("readline");
const assert = require("assert/strict");

const [fakeProgram, specFile] = process.argv.slice(2);
const major = Number(process.versions.node.split(".")[0]);
if (major < 20) {
  console.log(`skipped: @daytonaio/sdk needs Node 20 or later; this is ${process.versions.node}`);
  process.exit(77);
}
let sdk;
try {
  sdk = require(path.join(__dirname, "node_modules/@daytonaio/sdk"));
} catch (e) {
  console.log("skipped: @daytonaio/sdk is not installed (scripts/install-daytona-sdk): " + e.message);
  process.exit(77);
}

const key = "sdk-test-key";
const fake = spawn(fakeProgram, ["--api-key", key], { stdio: ["pipe", "pipe", "inherit"] });

function listening() {
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: fake.stdout });
    lines.on("line", (line) => {
      const m = /^listening on (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    fake.on("exit", (code) => reject(new Error("daytona_fake exited with " + code + " before listening")));
  });
}

async function main() {
  const port = await listening();
  const apiUrl = `http://127.0.0.1:${port}/api`;
  // No Socket.IO events: the SDK polls GET /sandbox/{id} for states.
  process.env.DAYTONA_USE_DEPRECATED_POLLING = "true";
  delete process.env.DAYTONA_API_URL;
  const daytona = new sdk.Daytona({ apiKey: key, apiUrl, target: "us" });

  const sandbox = await daytona.create({ labels: { tether: "sdk-test" }, autoStopInterval: 15 }, { timeout: 30 });
  assert.ok(sandbox.id, "create returned an id");
  assert.equal(sandbox.state, "started");

  const exec = await sandbox.process.executeCommand("echo hello; pwd");
  assert.equal(exec.exitCode, 0);
  assert.equal(exec.result, "hello\n/home/daytona\n");
  const failing = await sandbox.process.executeCommand("exit 4");
  assert.equal(failing.exitCode, 4);

  const payload = Buffer.from("payload \u2713\n", "utf8");
  await sandbox.fs.uploadFile(payload, "/home/daytona/dir/up.txt");
  const info = await sandbox.fs.getFileDetails("/home/daytona/dir/up.txt");
  assert.equal(info.size, payload.length);
  assert.equal(info.isDir, false);
  const back = await sandbox.fs.downloadFile("/home/daytona/dir/up.txt");
  assert.ok(Buffer.compare(back, payload) === 0, "the downloaded bytes are the uploaded ones");
  const seen = await sandbox.process.executeCommand("cat dir/up.txt");
  assert.equal(seen.result, payload.toString("utf8"));

  await sandbox.process.createSession("s1");
  const cmd = await sandbox.process.executeSessionCommand("s1", {
    command: "read line; echo \"got $line\"; echo to-err >&2; exit 3",
    runAsync: true,
  });
  assert.ok(cmd.cmdId);
  await sandbox.process.sendSessionCommandInput("s1", cmd.cmdId, "typed\n");
  let out = "";
  let err = "";
  await sandbox.process.getSessionCommandLogs("s1", cmd.cmdId, (s) => (out += s), (s) => (err += s));
  assert.equal(out, "got typed\n");
  assert.equal(err, "to-err\n");
  const done = await sandbox.process.getSessionCommand("s1", cmd.cmdId);
  assert.equal(done.exitCode, 3);
  const logs = await sandbox.process.getSessionCommandLogs("s1", cmd.cmdId);
  assert.equal(logs.stdout, "got typed\n");

  await sandbox.stop();
  assert.equal((await daytona.get(sandbox.id)).state, "stopped");
  await sandbox.start();
  assert.equal((await daytona.get(sandbox.id)).state, "started");
  const kept = await sandbox.process.executeCommand("cat /home/daytona/dir/up.txt");
  assert.equal(kept.result, payload.toString("utf8"), "a stopped sandbox keeps its files");

  await sandbox.delete();
  await assert.rejects(daytona.get(sandbox.id), /not found/i);

  // Every route the SDK called is one of Daytona's, as its specification writes it.
  const spec = JSON.parse(fs.readFileSync(specFile, "utf8"));
  const known = new Set(spec.routes.map((r) => `${r.method} ${r.path}`));
  const called = await (await fetch(`http://127.0.0.1:${port}/_fake/requests`)).json();
  const unknown = [...new Set(called)].filter((r) => !known.has(r));
  assert.deepEqual(unknown, [], "routes the SDK called that Daytona's specification does not have");
  console.log(`passed: ${called.length} requests over ${new Set(called).size} routes, SDK ` +
              require(path.join(__dirname, "node_modules/@daytonaio/sdk/package.json")).version +
              `, specification ${spec.spec.version.split(";")[0]}`);
}

main().then(
  () => {
    // The fake stops when its stdin closes; it is waited for, not left behind.
    fake.on("exit", (code) => process.exit(code === 0 ? 0 : 1));
    fake.stdin.end();
  },
  (e) => {
    console.error("failed:", e && e.stack ? e.stack : e);
    fake.kill("SIGKILL");
    process.exit(1);
  },
);
