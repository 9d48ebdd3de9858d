"use strict";
/*
 * The reference side of the differential test: @ag-ui/client's own pipeline
 * (compatibility boundary, middleware, enforcement, chunk expansion,
 * verification, reducer) over many recorded streams, one process for all.
 *
 * Input: JSON lines, one stream each:
 *   {"id": 7, "stream": [...raw events], "input": {threadId, runId, messages, state,
 *    tools, context, forwardedProps}, "peer": "0.0.45"?}
 * Output: JSON lines, one per stream, in order:
 *   {"id", "verdict": "accepted" | "rejected", "index": n | null, "error": "...",
 *    "events": [...delivered], "messages": [...], "state": ..., "warnings": [...]}
 *
 * `index` is the position of the raw event being processed when the client
 * failed, or null when it failed after the stream had ended. Events are
 * emitted one at a time, each after the previous one has been fully applied,
 * so that a failure can be pinned to the event that caused it and so that
 * `events` holds exactly what reached the application before it.
 *
 * Usage: node reference.cjs IN.jsonl OUT.jsonl   (NODE_PATH names node_modules)
 */
const fs = require("node:fs");
const readline = require("node:readline");
const { AbstractAgent } = require("@ag-ui/client");
const { Observable } = require("rxjs");

// The peer ceiling must be known while the base constructor runs (it installs
// the era middlewares there), before any field of the subclass exists.
let nextPeerCeiling;

class ReplayAgent extends AbstractAgent {
  get maxProtocolVersion() {
    return nextPeerCeiling ?? super.maxProtocolVersion;
  }

  replay(events) {
    this.events = events;
    this.position = -1;
    this.ended = false;
  }

  run() {
    return new Observable((subscriber) => {
      let stopped = false;
      const emit = (index) => {
        if (stopped) return;
        if (index === this.events.length) {
          this.ended = true;
          subscriber.complete();
          return;
        }
        this.position = index;
        subscriber.next(this.events[index]);
        // A macrotask boundary: every promise the reducer chained for this
        // event has settled before the next one is emitted.
        setImmediate(emit, index + 1);
      };
      emit(0);
      return () => {
        stopped = true;
      };
    });
  }
}

const warnings = [];
console.warn = (...args) => warnings.push(args.map(String).join(" "));
console.error = () => {}; // the client logs every failed run; the verdict says it

async function replay(line) {
  const { id, stream, input, peer } = JSON.parse(line);
  warnings.length = 0;
  nextPeerCeiling = peer;
  const agent = new ReplayAgent({
    threadId: input.threadId,
    initialMessages: input.messages ?? [],
    initialState: input.state ?? {},
  });
  nextPeerCeiling = undefined;
  agent.replay(stream);
  const events = [];
  const subscriber = {
    onEvent: ({ event }) => {
      events.push(event);
    },
  };
  let verdict = "accepted";
  let index = null;
  let error;
  try {
    await agent.runAgent(
      {
        runId: input.runId,
        tools: input.tools ?? [],
        context: input.context ?? [],
        forwardedProps: input.forwardedProps ?? {},
      },
      subscriber,
    );
  } catch (thrown) {
    verdict = "rejected";
    index = agent.ended ? null : agent.position;
    error = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
  }
  return {
    id,
    verdict,
    index,
    error,
    events,
    messages: agent.messages,
    state: agent.state === undefined ? null : agent.state,
    warnings: [...warnings],
  };
}

function serialise(report) {
  try {
    return JSON.stringify(report);
  } catch (thrown) {
    // A state holding a BigInt or a cycle cannot be written; say so rather than die.
    return JSON.stringify({ id: report.id, verdict: "unserialisable", error: String(thrown) });
  }
}

async function main() {
  const [inPath, outPath] = process.argv.slice(2);
  const lines = readline.createInterface({
    input: fs.createReadStream(inPath, "utf8"),
    crlfDelay: Infinity,
  });
  const out = fs.createWriteStream(outPath, "utf8");
  for await (const line of lines) {
    if (line.trim() === "") continue;
    if (!out.write(serialise(await replay(line)) + "\n")) {
      await new Promise((resolve) => out.once("drain", resolve));
    }
  }
  await new Promise((resolve) => out.end(resolve));
}

main().catch((thrown) => {
  process.stderr.write(`reference.cjs: ${thrown && thrown.stack ? thrown.stack : thrown}\n`);
  process.exit(2);
});
