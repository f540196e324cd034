/**
 * A line diff of two texts (longest common subsequence), each line prefixed "  ", "- " or "+ ".
 * Inputs are small (the scheduling fields of one Pod), so the quadratic table is fine.
 */
export function lineDiff(before: string, after: string): string[] {
  const left = before === '' ? [] : before.split('\n');
  const right = after === '' ? [] : after.split('\n');
  const common: number[][] = Array.from({ length: left.length + 1 }, () => new Array<number>(right.length + 1).fill(0));
  for (let i = left.length - 1; i >= 0; i -= 1) {
    for (let j = right.length - 1; j >= 0; j -= 1) {
      common[i]![j] = left[i] === right[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const lines: string[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i < left.length && j < right.length && left[i] === right[j]) {
      lines.push(`  ${left[i]}`);
      i += 1;
      j += 1;
    } else if (i < left.length && (j === right.length || common[i + 1]![j]! >= common[i]![j + 1]!)) {
      lines.push(`- ${left[i]}`);
      i += 1;
    } else {
      lines.push(`+ ${right[j]}`);
      j += 1;
    }
  }
  return lines;
}
