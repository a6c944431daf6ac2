#!/usr/bin/env node
// A dsh-conformance client driver for the TypeScript client @deepseek-ai/dsh-sdk-client
// (docs/CLIENT-DRIVERS.md): one operation per line on stdin, one result per line on stdout.
// The runtime is DSH_BIN launched with `--profile sdk`; DSH_SDK_CLIENT may name the package's
// entry file when it is not installed beside this driver.
//
// It reports what the client returns to its caller (the run's finalResponse and events, the
// error it rejects with, its class and fields), never what it could read off the wire. The
// client's run result has no status of its own: `finish` is the reason kind of the last
// turn/end among the events the run returned, as its caller would read it.
// HarnessSession.run takes no timeout: a bounded run is run unbounded (said on stderr), so that
// the kit sees whether it hangs.
//
//     dsh-conformance client -- node drivers/typescript/dsh_driver.mjs

import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const where = process.env.DSH_SDK_CLIENT;
const sdk = await import(where ? pathToFileURL(where).href : '@deepseek-ai/dsh-sdk-client');
const { DeepSeekHarness, JsonRpcResponseError, TransportClosedError, RequestTimeoutError, SdkProtocolError } = sdk;

let harness = null;

/** The client has no way to do what the operation asks. */
class Unsupported extends Error {}

function error(e) {
  if (e instanceof Unsupported) return { class: 'unsupported', code: null, message: e.message };
  if (e instanceof JsonRpcResponseError) return { class: 'rpc', code: e.code ?? null, message: e.message };
  if (e instanceof TransportClosedError) return { class: 'transport', code: null, message: String(e.message) };
  if (e instanceof RequestTimeoutError) return { class: 'timeout', code: null, message: String(e.message) };
  if (e instanceof SdkProtocolError) return { class: 'protocol', code: null, message: String(e.message) };
  return { class: 'other', code: null, message: String(e && e.stack || e) };
}

async function perform(op) {
  switch (op.op) {
    case 'start':
      harness = new DeepSeekHarness({
        launch: { command: process.env.DSH_BIN, args: ['--profile', 'sdk'], cwd: process.cwd() },
        cwd: process.cwd(),
      });
      await harness.start();
      return {};
    case 'close':
      if (harness) await harness.close();
      return {};
    case 'run': {
      if (op.timeout !== undefined) {
        // HarnessSession.run(input, { onNotification }) takes no timeout or AbortSignal, and
        // requestTimeoutMs bounds requests only, not the wait for the run's idle: the run goes
        // unbounded, as the driver protocol asks, and the kit's own bound shows a hang.
        process.stderr.write('dsh_driver: HarnessSession.run has no timeout (requestTimeoutMs bounds requests only): the bounded run is run unbounded\n');
      }
      const r = await harness.session(op.session).run(op.text);
      const ends = r.events.filter((e) => e.type === 'turn/end');
      const last = ends[ends.length - 1];
      return {
        text: r.finalResponse,
        finish: last ? last.data?.reason?.kind ?? null : null,
        events: r.events.map((e) => e.type),
      };
    }
    case 'prompt':
      await harness.start();
      return { messageId: await harness.client.prompt(op.session, [{ type: 'text', text: op.text }]) };
    case 'resume':
      await harness.start();
      await harness.client.request('session/resume', { sessionId: op.session });
      return {};
    case 'cwd-get':
      await harness.start();
      return await harness.client.request('session/working-directory/get', { sessionId: op.session });
    case 'cwd-set':
      await harness.start();
      return await harness.client.request('session/working-directory/set', { sessionId: op.session, path: op.path });
    case 'concurrent':
      return { results: await Promise.all(op.ops.map(answer)) };
    default:
      throw new Error(`unknown operation ${op.op}`);
  }
}

async function answer(op) {
  try {
    return { ...(await perform(op)), ok: true };
  } catch (e) {
    return { ok: false, error: error(e) };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const op = JSON.parse(line);
  const result = await answer(op);
  process.stdout.write(JSON.stringify({ ...result, id: op.id }) + '\n');
}
if (harness) await harness.close();
