/** What every part of the demo's seeding writes with: the transaction, the organization, its people and the calendar. */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DemoCalendar } from './calendar.js';
import type { Person } from './content.js';

export type Trx = Transaction<Database>;

export interface DemoContext {
  db: Trx;
  orgId: string;
  /** The user id of every demo person. */
  ids: Record<Person, string>;
  calendar: DemoCalendar;
}
