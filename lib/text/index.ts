/** Text for a terminal, and the one order text is sorted by. */
export { columns, printable } from './columns.ts';
export { compareCodeUnits } from './order.ts';
