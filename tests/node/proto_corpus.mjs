// The @ag-ui/proto side of the protobuf parity check (run by `nox -s proto_parity`).
//   node proto_corpus.mjs encode EVENTS.json FRAMES.json   each event through @ag-ui/proto's encode
//   node proto_corpus.mjs decode FRAMES.json DECODED.json  each frame through its decode
//   node proto_corpus.mjs encode-any EVENTS.json FRAMES.json  encode, an event it warns
//     about or cannot encode recorded without hex (conformance streams hold such events)
// A warning from the package (an event its schema rejects) fails encode and decode: the
// corpus must be canonical events.
import { readFileSync, writeFileSync } from "node:fs";
import { decode, encode } from "@ag-ui/proto";

const [mode, input, output] = process.argv.slice(2);
const warnings = [];
console.warn = (...args) => warnings.push(args.join(" "));

const cases = JSON.parse(readFileSync(input, "utf8"));
let result;
if (mode === "encode") {
  result = cases.map(({ name, event }) => ({
    name,
    hex: Buffer.from(encode(event)).toString("hex"),
  }));
} else if (mode === "encode-any") {
  result = cases.map(({ name, event }) => {
    warnings.length = 0;
    try {
      const hex = Buffer.from(encode(event)).toString("hex");
      return warnings.length > 0 ? { name, warned: warnings.join(" ") } : { name, hex };
    } catch (error) {
      return { name, error: String(error) };
    }
  });
  warnings.length = 0;
} else if (mode === "decode") {
  result = cases.map(({ name, hex }) => ({
    name,
    event: decode(new Uint8Array(Buffer.from(hex, "hex"))),
  }));
} else {
  throw new Error(`unknown mode ${mode}`);
}
if (warnings.length > 0) {
  console.error(warnings.join("\n"));
  process.exit(1);
}
writeFileSync(output, JSON.stringify(result, null, 1) + "\n");
console.log(`${mode}d ${result.length} cases into ${output}`);
