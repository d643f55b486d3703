// Fenced code blocks of a Markdown document, for tests that run a README's own examples.
// Generic: no knowledge of any particular README.

/**
 * The fenced code blocks of `markdown`, in order.
 * @param {string} markdown
 * @param {{ section?: string, lang?: string }} [filter] `section`: only blocks under the heading
 *   with this text (down to the next heading of the same or a higher level); `lang`: only blocks
 *   whose info string starts with it (`sh`, `js`, …).
 * @returns {{ lang: string, code: string, line: number, section: string }[]} `line`: 1-based
 *   line of the opening fence; `section`: text of the nearest heading above it.
 */
export function codeBlocks(markdown, filter = {}) {
  const lines = markdown.split("\n");
  const blocks = [];
  const headings = []; // [{ level, text }], the current heading path
  let inside = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (inside) {
      if (line.trimStart().startsWith(inside.fence)) {
        blocks.push({ ...inside.block, code: inside.body.join("\n") + "\n" });
        inside = null;
      } else {
        inside.body.push(line);
      }
      continue;
    }
    const fence = line.match(/^\s*(```+|~~~+)\s*([^\s`]*)/);
    if (fence) {
      const within = headings.map((h) => h.text);
      inside = {
        fence: fence[1],
        body: [],
        block: { lang: fence[2], line: i + 1, section: within.at(-1) ?? "", within },
      };
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      const level = heading[1].length;
      while (headings.length && headings.at(-1).level >= level) headings.pop();
      headings.push({ level, text: heading[2] });
    }
  }
  if (inside) throw new Error(`unclosed code fence at line ${inside.block.line}`);
  return blocks
    .filter((b) => filter.section === undefined || b.within.includes(filter.section))
    .filter((b) => filter.lang === undefined || b.lang.startsWith(filter.lang))
    .map(({ within, ...block }) => block);
}

/**
 * Expected output written in a shell block as comments right below a command, indented by
 * three spaces after the `#` (`#   text`): those lines, in order.
 * @param {string} code
 * @returns {string[]}
 */
export function expectedOutput(code) {
  return code
    .split("\n")
    .filter((line) => line.startsWith("#   "))
    .map((line) => line.slice(4));
}
