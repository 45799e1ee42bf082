// Go's text/tabwriter as istioctl's writers configure it (padding character ' ', no flags): cells
// end at '\t', a column is as wide as its widest cell in a block of consecutive lines that have
// it, plus the padding; the text after a line's last tab is not aligned.

export interface TabWriterOptions {
  minWidth: number;
  padding: number;
}

/** Aligns `text` (lines of tab-terminated cells) as Go's tabwriter.Writer followed by Flush. */
export function alignTabs(text: string, options: TabWriterOptions): string {
  const endsWithNewline = text.endsWith("\n");
  const lines = (endsWithNewline ? text.slice(0, -1) : text).split("\n").map((line) => line.split("\t"));
  const out: string[] = [];
  formatBlock(lines, 0, lines.length, [], options, out);
  return out.join("\n") + (endsWithNewline ? "\n" : "");
}

function cellWidth(cell: string): number {
  return [...cell].length;
}

// Go's Writer.format: a column's block starts at the first line having that column and runs while
// lines have it; inside it the next column is formatted the same way.
function formatBlock(
  lines: string[][],
  first: number,
  end: number,
  widths: number[],
  options: TabWriterOptions,
  out: string[],
): void {
  const column = widths.length;
  let start = first;
  for (let i = first; i < end; i++) {
    if (column >= lines[i].length - 1) continue;
    writeLines(lines, start, i, widths, out);
    start = i;
    let width = options.minWidth;
    for (; i < end && column < lines[i].length - 1; i++) {
      width = Math.max(width, cellWidth(lines[i][column]) + options.padding);
    }
    formatBlock(lines, start, i, [...widths, width], options, out);
    start = i;
    i--;
  }
  writeLines(lines, start, end, widths, out);
}

function writeLines(lines: string[][], start: number, end: number, widths: number[], out: string[]): void {
  for (let i = start; i < end; i++) {
    out.push(
      lines[i]
        .map((cell, j) => (j < widths.length && j < lines[i].length - 1 ? cell.padEnd(widths[j], " ") : cell))
        .join(""),
    );
  }
}
