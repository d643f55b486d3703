// Collects the benchmark's figures; prints them as a markdown table (figures that do not depend
// on the server apart from those the server bounds), the goals next to what was measured,
// and one machine-readable line per figure: `BENCH <name> <value> <unit>`.

/** A figure's value as printed: three significant digits, never an exponent. */
export function formatValue(value) {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) || Math.abs(value) >= 1000) return String(Math.round(value));
  return String(Number(value.toPrecision(3)));
}

export class Report {
  /** @type {{ name: string, value: number, unit: string, what: string, server: boolean }[]} */
  figures = [];

  /**
   * @param {string} name      e.g. `client.block100.c10.vs_tutorial`
   * @param {number} value
   * @param {string} unit      e.g. `x`, `ns`, `docs/s`
   * @param {string} what      one line for the table
   * @param {{ server?: boolean }} [options]  server: false for figures the server does not bound
   *                           (command counts, CPU, sizes, ns per call)
   */
  add(name, value, unit, what, { server = true } = {}) {
    if (this.figures.some((f) => f.name === name)) throw new Error(`figure ${name} reported twice`);
    this.figures.push({ name, value, unit, what, server });
    // Progress on stderr; the BENCH lines come once, at the end, on stdout.
    console.error(`  · ${name} ${formatValue(value)} ${unit}`);
  }

  get(name) {
    return this.figures.find((f) => f.name === name)?.value;
  }

  table() {
    const rows = (server) =>
      this.figures
        .filter((f) => f.server === server)
        .map((f) => `| \`${f.name}\` | ${formatValue(f.value)} ${f.unit} | ${f.what} |`);
    return [
      "#### Independent of the server (command counts, CPU, sizes, time in the package)",
      "",
      "| figure | value | what |",
      "|---|---:|---|",
      ...rows(false),
      "",
      "#### Bounded by the server (throughput, latency; compare the ratios)",
      "",
      "| figure | value | what |",
      "|---|---:|---|",
      ...rows(true),
    ].join("\n");
  }

  /** The goals against this run's figures. */
  goals(goals) {
    const lines = ["| goal | figure | measured | met |", "|---|---|---:|---|"];
    for (const { goal, name, atLeast, atMost } of goals) {
      const value = this.get(name);
      const met =
        value === undefined ? "not measured" : (atLeast === undefined || value >= atLeast) && (atMost === undefined || value <= atMost) ? "yes" : "**no**";
      lines.push(`| ${goal} | \`${name}\` | ${value === undefined ? "—" : formatValue(value)} | ${met} |`);
    }
    return lines.join("\n");
  }

  lines() {
    return this.figures.map((f) => `BENCH ${f.name} ${formatValue(f.value)} ${f.unit}`).join("\n");
  }
}
