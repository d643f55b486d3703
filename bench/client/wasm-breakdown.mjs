// What takes the space in a Wasm module: code bytes per function, grouped by crate (from the
// module's `name` section), plus the size of each section. A small twiggy-like view for the
// findings in docs/benchmarks.md; names survive only in builds that keep them, e.g.
//   wasm-bindgen output, or wasm-opt -Oz --debuginfo (-g) of it.
//
//   node bench/client/wasm-breakdown.mjs FILE.wasm [top=30]
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

function reader(bytes, offset = 0) {
  let at = offset;
  const u32 = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = bytes[at++];
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if ((byte & 0x80) === 0) return result;
    }
  };
  const name = () => {
    const length = u32();
    const text = new TextDecoder().decode(bytes.subarray(at, at + length));
    at += length;
    return text;
  };
  return { u32, name, get at() { return at; }, set at(v) { at = v; } };
}

const SECTION_NAMES = ["custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "datacount"];

/** `{ sections: [{name, bytes}], functions: [{index, name, bytes}] }` */
export function breakdown(bytes) {
  const sections = [];
  const bodies = [];
  const names = new Map();
  let importedFunctions = 0;
  const r = reader(bytes, 8);
  while (r.at < bytes.length) {
    const id = bytes[r.at];
    r.at += 1;
    const size = r.u32();
    const start = r.at;
    let label = SECTION_NAMES[id] ?? `section ${id}`;
    if (id === 0) {
      const custom = r.name();
      label = `custom "${custom}"`;
      if (custom === "name") {
        while (r.at < start + size) {
          const sub = bytes[r.at];
          r.at += 1;
          const subSize = r.u32();
          const subEnd = r.at + subSize;
          if (sub === 1) {
            const count = r.u32();
            for (let i = 0; i < count; i++) names.set(r.u32(), r.name());
          }
          r.at = subEnd;
        }
      }
    } else if (id === 2) {
      const count = r.u32();
      for (let i = 0; i < count; i++) {
        r.name();
        r.name();
        const kind = bytes[r.at];
        r.at += 1;
        if (kind === 0) {
          r.u32();
          importedFunctions += 1;
        } else if (kind === 1) {
          r.at += 1;
          const flags = r.u32();
          r.u32();
          if (flags & 1) r.u32();
        } else if (kind === 2) {
          const flags = r.u32();
          r.u32();
          if (flags & 1) r.u32();
        } else if (kind === 3) {
          r.at += 2;
        }
      }
    } else if (id === 10) {
      const count = r.u32();
      for (let i = 0; i < count; i++) {
        const bodySize = r.u32();
        bodies.push(bodySize);
        r.at += bodySize;
      }
    }
    sections.push({ name: label, bytes: size });
    r.at = start + size;
  }
  const functions = bodies.map((size, i) => ({ index: importedFunctions + i, name: names.get(importedFunctions + i) ?? `func[${importedFunctions + i}]`, bytes: size }));
  return { sections, functions };
}

const PRIMITIVE = /^(?:[A-Z]|f32|f64|[ui](?:8|16|32|64|128|size)|char|str|bool|dyn\b|\[|\(|&)/;

/** Where a (demangled) Rust symbol's code comes from: its crate, or a few telling groups. */
export function crateOf(name) {
  const n = name.replace(/\[[0-9a-f]{16}\]/g, "");
  if (/zmij|<f(?:32|64) as [^>]*(?:Display|Debug)|fmt::float|flt2dec|dragon|grisu/.test(n)) return "float formatting (core::fmt, zmij)";
  if (/ shim\b/.test(n)) return "wasm-bindgen export shims (with the Rust code they inline)";
  if (/^func\[/.test(n)) return "(no name)";
  if (/^__|^memcpy|^memset|^memmove|^memcmp/.test(n)) return "compiler builtins";
  const impl = /^<(?:&(?:mut )?)?(.+?) as (.+?)>::/.exec(n);
  const path = impl ? (PRIMITIVE.test(impl[1]) ? impl[2] : impl[1]) : n.replace(/^<+/, "");
  const crate = /^([A-Za-z_][A-Za-z0-9_]*)/.exec(path)?.[1] ?? "(other)";
  return PRIMITIVE.test(crate) ? "core" : crate;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, topText] = process.argv.slice(2);
  if (!file) {
    console.error("usage: node bench/client/wasm-breakdown.mjs FILE.wasm [top]");
    process.exit(2);
  }
  const bytes = readFileSync(file);
  const { sections, functions } = breakdown(bytes);
  const total = bytes.length;
  const pct = (n) => `${((n / total) * 100).toFixed(1)}%`;
  console.log(`${file}: ${total} bytes, ${functions.length} functions\n\n| section | bytes | share |\n|---|---:|---:|`);
  for (const s of sections) console.log(`| ${s.name} | ${s.bytes} | ${pct(s.bytes)} |`);
  const crates = new Map();
  for (const f of functions) crates.set(crateOf(f.name), (crates.get(crateOf(f.name)) ?? 0) + f.bytes);
  console.log(`\n| crate (code bytes) | bytes | share of file |\n|---|---:|---:|`);
  for (const [c, n] of [...crates].sort((a, b) => b[1] - a[1])) console.log(`| ${c} | ${n} | ${pct(n)} |`);
  console.log(`\n| largest functions | bytes |\n|---|---:|`);
  for (const f of [...functions].sort((a, b) => b.bytes - a.bytes).slice(0, Number(topText ?? 30))) console.log(`| \`${f.name.slice(0, 140)}\` | ${f.bytes} |`);
}
