/** Text for a terminal, and the one order text is sorted by. */
import { columns, printable } from './columns.ts';
import { compareCodeUnits } from './order.ts';

export { columns, printable, compareCodeUnits };
