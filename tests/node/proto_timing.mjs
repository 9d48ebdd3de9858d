// Times @ag-ui/proto's decode over a body of length-prefixed frames (run by `nox -s proto_bench`).
//   node proto_timing.mjs BODY.bin REPEAT   prints {"events": n, "us_per_event": median}
import { readFileSync } from "node:fs";
import { decode } from "@ag-ui/proto";

const [path, repeatText] = process.argv.slice(2);
const body = new Uint8Array(readFileSync(path));
const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
const frames = [];
for (let pos = 0; pos < body.length; ) {
  const length = view.getUint32(pos);
  frames.push(body.subarray(pos + 4, pos + 4 + length));
  pos += 4 + length;
}
const times = [];
for (let run = 0; run < Number(repeatText ?? 5); run += 1) {
  const start = process.hrtime.bigint();
  for (const frame of frames) decode(frame);
  times.push(Number(process.hrtime.bigint() - start) / 1000 / frames.length);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ events: frames.length, us_per_event: times[Math.floor(times.length / 2)] }));
