/** Text for a terminal: aligned columns of values that may come from untrusted input. */

// Names come from untrusted input: a control character (a newline) must not break a row or a command line.
function printable(value: string | number): string {
  return [...String(value)].map((character) => (character < ' ' || character === '\u007f' ? '?' : character)).join('');
}

/** Rows under their headers, each column as wide as its widest cell, two spaces apart; the last column is not padded. */
function columns(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string[] {
  const table = [headers, ...rows].map((row) => row.map(printable));
  const widths = headers.map((_, index) => Math.max(...table.map((row) => row[index]!.length)));
  return table.map((row) =>
    row
      .map((text, index) => (index === row.length - 1 ? text : text.padEnd(widths[index]!)))
      .join('  ')
      .trimEnd(),
  );
}

export { columns, printable };
